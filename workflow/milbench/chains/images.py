"""Corel images -> 3-view bags (CVFS-MIL, Wu et al. 2014, §4.2).

Chain (each step is its own Snakemake rule, see workflow/rules/images.smk):

1. :func:`read_image_table` + :func:`select_images` – images from a Corel-5k folder
   (``train_jpeg/ test_jpeg/ labels/{words,training_label,test_label}``) or a plain
   ``<category>/<image>`` folder; positives = images carrying any positive keyword
   (default tiger / lion / leopard), negatives = a seeded random draw of images carrying an
   "other animal" keyword and no positive / excluded keyword.
2. :func:`segment_image` – superpixels from several over-segmentations (SLIC and Felzenszwalb
   at a few scales) fused by the bipartite pixel–superpixel graph of Li, Wu & Chang (CVPR 2012,
   "Segmentation using superpixels: a bipartite graph partitioning approach", SAS) and
   partitioned spectrally by Transfer cuts (Tcut), then post-processed into exactly
   ``n_regions`` 4-connected regions.
3. Per-pixel descriptors :func:`hsv_descriptor` (3-d), :func:`hog_descriptor` (16-d dense
   HOG) and :func:`lbp_descriptor` (16 LBP sign bits); a k-means codebook per view learnt
   on a seeded pixel sample over all images (:func:`fit_codebooks`, unsupervised); every
   region becomes a normalised ``n_words``-bin histogram of codes per view
   (:func:`region_histograms`).  Bag = image, instance = region.

Departures from the paper (which gives no parameters): the SAS parameters are those of the
authors' released code (alpha = 1e-3 pixel–superpixel affinity, beta = 20 colour scale,
exp(-beta * normalised Lab distance) + 1e-5 between adjacent superpixels of the same
over-segmentation kept for each superpixel's ``nb`` = 1 most similar neighbour, self-affinity 1);
the over-segmentations are SLIC + Felzenszwalb from scikit-image instead of Mean-Shift + FH;
k-means on the transferred pixel embedding gives clusters that need not be connected, so we
split/merge components until exactly ``n_regions`` connected regions remain (the paper's
"1500 instances for 300 images" is 5 regions per image).  The dense HOG layout (the paper
used Kota Yamaguchi's code, unavailable here) is ours, documented in :func:`hog_descriptor`.
"""
from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

from milbench.data.bags import Bags

# cv2, skimage, sklearn.cluster and joblib are imported inside the functions that use them:
# imports per process that the chain jobs not calling them need not pay
VIEWS = ("hsv", "hog", "lbp")
DEFAULT_POSITIVE = ("tiger", "lion", "leopard")
# Corel-5k animal keywords that are not cats (negatives are drawn from these).
DEFAULT_NEGATIVE = (
    "elephant", "fox", "horses", "bear", "polar", "grizzly", "deer", "elk", "bulls", "cow",
    "zebra", "giraffe", "birds", "dog", "wolf", "whales", "fish", "eagle", "penguin", "lizard",
    "snake", "butterfly", "antelope", "goat", "sheep", "rabbit", "squirrel", "coyote", "moose",
    "caribou", "crab", "seals", "kangaroo", "monkey", "owl",
)
# Never drawn as a negative (Corel's generic "cat" keyword also tags cougars, lynxes, ...).
DEFAULT_EXCLUDE = ("cat", "cats", "cougar", "lynx", "jaguar", "cheetah", "panther")
DEFAULT_OVERSEGMENTATIONS = (
    {"method": "slic", "n_segments": 60, "compactness": 10.0},
    {"method": "slic", "n_segments": 150, "compactness": 10.0},
    {"method": "felzenszwalb", "scale": 100.0, "sigma": 0.8, "min_size": 30},
    {"method": "felzenszwalb", "scale": 300.0, "sigma": 0.8, "min_size": 60},
)
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".gif"}


# --------------------------------------------------------------------------------------------
# 1. image table and selection
# --------------------------------------------------------------------------------------------
def find_corel_root(path):
    """The directory holding ``labels/words`` under ``path`` (itself or one level down, as in
    GitHub archive tarballs), or None when ``path`` is not in Corel-5k layout."""
    path = Path(path)
    if (path / "labels" / "words").is_file():
        return path
    for sub in sorted(p for p in path.iterdir() if p.is_dir()):
        if (sub / "labels" / "words").is_file():
            return sub
    return None


def read_image_table(source):
    """All images of a source folder with their keywords.

    Returns a DataFrame with columns ``image_id`` (str), ``path`` (str), ``keywords``
    (space-separated, lower case) and ``split`` (train / test / folder).  Corel-5k layout:
    ``labels/words`` lists the vocabulary, ``labels/{training,test}_label`` hold
    ``image_id kw_idx ...`` with 1-based indices, images are ``{train,test}_jpeg/<id>.jpeg``.
    Otherwise every ``<category>/<image>`` file is an image whose keyword is its folder name.
    """
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(f"image source {source} is not a directory")
    root = find_corel_root(source)
    rows = []
    if root is not None:
        words = [w.strip().lower() for w in (root / "labels" / "words").read_text().splitlines()]
        for split, lab, folder in (("train", "training_label", "train_jpeg"),
                                   ("test", "test_label", "test_jpeg")):
            f = root / "labels" / lab
            if not f.exists():
                continue
            for line in f.read_text().splitlines():
                parts = line.split()
                if not parts:
                    continue
                idx = [int(i) for i in parts[1:]]
                bad = [i for i in idx if not 1 <= i <= len(words)]
                if bad:
                    raise ValueError(f"{f}: keyword index {bad[0]} outside 1..{len(words)}")
                img = root / folder / f"{parts[0]}.jpeg"
                if not img.exists():
                    cands = [p for p in (root / folder).glob(f"{parts[0]}.*")
                             if p.suffix.lower() in IMAGE_SUFFIXES]
                    if not cands:
                        raise FileNotFoundError(f"{f}: image {parts[0]} missing under {folder}/")
                    img = cands[0]
                rows.append((parts[0], str(img), " ".join(sorted({words[i - 1] for i in idx})), split))
    else:
        for cat in sorted(p for p in source.iterdir() if p.is_dir()):
            for img in sorted(cat.iterdir()):
                if img.suffix.lower() in IMAGE_SUFFIXES:
                    rows.append((f"{cat.name}/{img.stem}", str(img), cat.name.lower(), "folder"))
        if not rows:
            raise ValueError(f"{source}: neither Corel-5k layout (labels/words) nor "
                             "<category>/<image> folders with images")
    table = pd.DataFrame(rows, columns=["image_id", "path", "keywords", "split"])
    if table["image_id"].duplicated().any():
        dup = table.loc[table["image_id"].duplicated(), "image_id"].iloc[0]
        raise ValueError(f"{source}: image id {dup!r} appears twice")
    return table


def select_images(table, positive=DEFAULT_POSITIVE, negative=DEFAULT_NEGATIVE,
                  exclude=DEFAULT_EXCLUDE, n_pos=300, n_neg=300, seed=0):
    """Positive = any positive keyword; negative candidates = any ``negative`` keyword and none
    of ``positive`` ∪ ``exclude``.  Seeded draws without replacement (``n_pos`` / ``n_neg``
    None = all).  Returns (selected table with a 0/1 ``label`` column, info dict with the
    available counts); asking for more images than exist keeps all and says so in ``info``."""
    pos_set, neg_set = set(map(str.lower, positive)), set(map(str.lower, negative))
    excl = pos_set | set(map(str.lower, exclude))
    kw = table["keywords"].str.split()
    is_pos = kw.map(lambda k: bool(pos_set & set(k))).to_numpy(bool)
    is_neg = kw.map(lambda k: bool(neg_set & set(k)) and not (excl & set(k))).to_numpy(bool)
    rng = np.random.default_rng(seed)

    def draw(mask, n):
        idx = np.flatnonzero(mask)
        idx = idx[np.argsort(table["image_id"].to_numpy()[idx], kind="stable")]
        if n is None or n >= len(idx):
            return idx
        return np.sort(rng.choice(idx, size=int(n), replace=False))

    ip, ineg = draw(is_pos, n_pos), draw(is_neg, n_neg)
    if len(ip) == 0 or len(ineg) == 0:
        raise ValueError(f"image selection is empty: {len(ip)} positives ({sorted(pos_set)}), "
                         f"{len(ineg)} negatives ({sorted(neg_set)[:5]}...)")
    sel = table.iloc[np.concatenate([ip, ineg])].copy()
    sel["label"] = np.r_[np.ones(len(ip), np.int8), np.zeros(len(ineg), np.int8)]
    info = {"available_positive": int(is_pos.sum()), "available_negative": int(is_neg.sum()),
            "n_positive": int(len(ip)), "n_negative": int(len(ineg)),
            "requested_positive": n_pos, "requested_negative": n_neg}
    return sel.reset_index(drop=True), info


def load_rgb(path):
    """(H, W, 3) uint8 RGB image (OpenCV decoder)."""
    import cv2

    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise ValueError(f"cannot decode image {path}")
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


# --------------------------------------------------------------------------------------------
# 2. segmentation: SAS bipartite graph + Transfer cuts
# --------------------------------------------------------------------------------------------
def oversegment(rgb, specs=DEFAULT_OVERSEGMENTATIONS):
    """One label map (H, W), labels 0..n-1, per over-segmentation spec
    (``{"method": "slic", "n_segments", "compactness"}`` or
    ``{"method": "felzenszwalb", "scale", "sigma", "min_size"}``)."""
    from skimage.segmentation import felzenszwalb, slic

    out = []
    for spec in specs:
        spec = dict(spec)
        method = spec.pop("method")
        if method == "slic":
            lab = slic(rgb, n_segments=int(spec.get("n_segments", 100)),
                       compactness=float(spec.get("compactness", 10.0)),
                       sigma=float(spec.get("sigma", 0.0)), start_label=0,
                       enforce_connectivity=True, channel_axis=-1)
        elif method == "felzenszwalb":
            lab = felzenszwalb(rgb, scale=float(spec.get("scale", 100.0)),
                               sigma=float(spec.get("sigma", 0.8)),
                               min_size=int(spec.get("min_size", 20)), channel_axis=-1)
        else:
            raise ValueError(f"unknown over-segmentation method {method!r} (slic | felzenszwalb)")
        _, lab = np.unique(lab, return_inverse=True)
        out.append(lab.reshape(rgb.shape[:2]).astype(np.int64))
    return out


def _adjacent_pairs(labels):
    """Unique unordered pairs (a < b) of labels that touch horizontally or vertically,
    with the number of touching pixel pairs (border length)."""
    a = np.concatenate([labels[:, :-1].ravel(), labels[:-1, :].ravel()])
    b = np.concatenate([labels[:, 1:].ravel(), labels[1:, :].ravel()])
    m = a != b
    lo, hi = np.minimum(a[m], b[m]), np.maximum(a[m], b[m])
    n = int(labels.max()) + 1
    keys, counts = np.unique(lo * n + hi, return_counts=True)
    return keys // n, keys % n, counts


def _segment_means(labels, values, n):
    """Mean of ``values`` (H, W, c) over each label 0..n-1."""
    flat = labels.ravel()
    cnt = np.bincount(flat, minlength=n).astype(float)
    v = values.reshape(-1, values.shape[-1])
    sums = np.stack([np.bincount(flat, weights=v[:, c], minlength=n) for c in range(v.shape[1])], 1)
    return sums / np.maximum(cnt, 1)[:, None]


def superpixel_affinity(labels, lab, beta=20.0, nb=1):
    """SAS superpixel graph of one over-segmentation (sparse, self-affinity 1).

    Adjacent superpixels i, j get w = exp(-beta * d_ij / max d) + 1e-5 with d the Euclidean
    distance of their mean Lab colours (SAS ``makeweights``); each superpixel keeps its ``nb``
    most similar neighbours (``prune_knn``), the graph is symmetrised by max.
    """
    n = int(labels.max()) + 1
    means = _segment_means(labels, lab, n)
    i, j, _ = _adjacent_pairs(labels)
    if len(i):
        d = np.linalg.norm(means[i] - means[j], axis=1)
        w = np.exp(-beta * d / max(d.max(), 1e-12)) + 1e-5
        # k-nearest (most similar) neighbours per node over the symmetric edge list
        src, dst, ww = np.r_[i, j], np.r_[j, i], np.r_[w, w]
        order = np.lexsort((-ww, src))
        src, dst, ww = src[order], dst[order], ww[order]
        first = np.r_[0, np.flatnonzero(np.diff(src)) + 1]
        rank = np.arange(len(src)) - np.repeat(first, np.diff(np.r_[first, len(src)]))
        keep = rank < nb
        W = sparse.coo_matrix((ww[keep], (src[keep], dst[keep])), shape=(n, n)).tocsr()
        W = W.maximum(W.T)
    else:
        W = sparse.csr_matrix((n, n))
    W = W.tolil()
    W.setdiag(1.0)
    return W.tocsr()


def bipartite_graph(rgb, oversegs, alpha=1e-3, beta=20.0, nb=1):
    """SAS cross-affinity matrix B = [α·M ; W_Y] of shape (N_pixels + N_sp, N_sp).

    M is the pixel–superpixel membership over all over-segmentations (every pixel belongs to
    one superpixel of each), W_Y the block-diagonal superpixel graph (one block per
    over-segmentation, :func:`superpixel_affinity`).  Returns (B, groups): ``groups`` (N_pixels,)
    numbers the distinct superpixel memberships (pixels of one group have identical rows of B).
    """
    from skimage.color import rgb2lab

    lab = rgb2lab(rgb)
    npx = rgb.shape[0] * rgb.shape[1]
    sizes = [int(s.max()) + 1 for s in oversegs]
    offs = np.r_[0, np.cumsum(sizes)]
    cols = np.stack([s.ravel() + o for s, o in zip(oversegs, offs[:-1])], 1)   # (Np, K)
    rows = np.repeat(np.arange(npx), len(oversegs))
    M = sparse.csr_matrix((np.full(rows.size, alpha), (rows, cols.ravel())),
                          shape=(npx, offs[-1]))
    WY = sparse.block_diag([superpixel_affinity(s, lab, beta, nb) for s in oversegs], format="csr")
    key = np.ravel_multi_index(tuple(s.ravel() for s in oversegs), sizes)
    _, groups = np.unique(key, return_inverse=True)
    return sparse.vstack([M, WY], format="csr"), groups.ravel()


def transfer_cut(B, n_pixels, k, groups=None, random_state=0):
    """Transfer cuts (Li, Wu & Chang 2012, §4): Ncut of the bipartite graph solved on the
    superpixel side.

    W_Y' = Bᵀ D_X⁻¹ B;  the k leading eigenvectors v of D⁻½ W_Y' D⁻½ give Ncut vectors
    D⁻½ v, transferred to every node by D_X⁻¹ B (D⁻½ v); pixel rows are normalised to unit length
    and clustered by k-means into k groups.  ``groups`` (from :func:`bipartite_graph`) lets
    k-means run once per distinct pixel row, weighted by its pixel count.  Returns
    (n_pixels,) cluster ids.
    """
    dx = np.asarray(B.sum(1)).ravel()
    Dx_inv = sparse.diags(1.0 / np.maximum(dx, 1e-300))
    Wy = (B.T @ Dx_inv @ B).toarray()
    d = Wy.sum(1)
    dis = 1.0 / np.sqrt(np.maximum(d, 1e-300))
    nW = dis[:, None] * Wy * dis[None, :]
    nW = (nW + nW.T) / 2
    k_eff = min(k, nW.shape[0])
    _, vecs = np.linalg.eigh(nW)
    ncut = dis[:, None] * vecs[:, ::-1][:, :k_eff]
    if groups is None:
        groups = np.arange(n_pixels)
    n_groups = int(groups.max()) + 1
    rep = np.zeros(n_groups, np.int64)
    rep[groups] = np.arange(n_pixels)                 # one representative pixel per group
    cnt = np.bincount(groups, minlength=n_groups)
    emb = (Dx_inv @ (B @ ncut))[rep]
    emb /= np.linalg.norm(emb, axis=1, keepdims=True) + 1e-10
    k_eff = min(k_eff, n_groups)
    from sklearn.cluster import KMeans
    km = KMeans(n_clusters=k_eff, n_init=4, random_state=random_state)
    lab = km.fit_predict(emb, sample_weight=cnt)
    return lab[groups]


def _split_largest(comp):
    """Split the largest region at the median of its principal axis."""
    ids, counts = np.unique(comp, return_counts=True)
    r = ids[np.argmax(counts)]
    yy, xx = np.nonzero(comp == r)
    pts = np.c_[yy, xx].astype(float)
    pts -= pts.mean(0)
    _, _, vt = np.linalg.svd(pts, full_matrices=False)
    proj = pts @ vt[0]
    side = proj > np.median(proj)
    if side.all() or not side.any():            # degenerate (all on one value): split by order
        side = np.arange(len(proj)) >= len(proj) // 2
    out = comp.copy()
    out[yy[side], xx[side]] = comp.max() + 1
    return out


def connected_regions(labels, n_regions, features):
    """Exactly ``n_regions`` 4-connected regions (ids 0..n-1 in raster order of first pixel).

    Connected components of ``labels`` are split (largest region, median of its principal
    axis) while there are too few and merged while there are too many: the smallest region
    joins the adjacent region whose mean ``features`` (H, W, c) is closest (ties: longest
    shared border).
    """
    from skimage.measure import label as cc_label

    H, W = labels.shape
    if n_regions > H * W:
        raise ValueError(f"cannot make {n_regions} regions from {H * W} pixels")
    comp = cc_label(labels + 1, background=0, connectivity=1) - 1
    while comp.max() + 1 < n_regions:
        comp = cc_label(_split_largest(comp) + 1, background=0, connectivity=1) - 1
    n = int(comp.max()) + 1
    if n > n_regions:
        size = np.bincount(comp.ravel(), minlength=n).astype(float)
        mean = _segment_means(comp, features, n)
        a, b, border = _adjacent_pairs(comp)
        nbrs = [dict() for _ in range(n)]
        for i, j, c in zip(a.tolist(), b.tolist(), border.tolist()):
            nbrs[i][j] = c
            nbrs[j][i] = c
        parent = np.arange(n)
        heap = [(size[i], i) for i in range(n)]
        heapq.heapify(heap)
        alive = n
        while alive > n_regions:
            s, r = heapq.heappop(heap)
            if parent[r] != r or s != size[r]:
                continue                                   # stale heap entry
            cand = list(nbrs[r].items())
            dist = np.array([np.sum((mean[t] - mean[r]) ** 2) for t, _ in cand])
            blen = np.array([c for _, c in cand], float)
            t = cand[int(np.lexsort((-blen, dist))[0])][0]
            # merge r into t
            mean[t] = (mean[t] * size[t] + mean[r] * size[r]) / (size[t] + size[r])
            size[t] += size[r]
            parent[r] = t
            for q, c in nbrs[r].items():
                if q == t:
                    continue
                nbrs[q].pop(r, None)
                nbrs[q][t] = nbrs[q].get(t, 0) + c
                nbrs[t][q] = nbrs[t].get(q, 0) + c
            nbrs[t].pop(r, None)
            nbrs[r] = {}
            heapq.heappush(heap, (size[t], t))
            alive -= 1
        root = parent.copy()                                # path compression to final roots
        while True:
            nxt = root[root]
            if (nxt == root).all():
                break
            root = nxt
        comp = root[comp]
    _, first = np.unique(comp.ravel(), return_index=True)
    order = np.unique(comp.ravel())[np.argsort(first)]
    remap = np.empty(int(comp.max()) + 1, np.int64)
    remap[order] = np.arange(len(order))
    return remap[comp].astype(np.int32)


def segment_image(rgb, n_regions=5, oversegmentations=DEFAULT_OVERSEGMENTATIONS, alpha=1e-3,
                  beta=20.0, nb=1, random_state=0):
    """(H, W) int32 region map with exactly ``n_regions`` connected regions covering every pixel
    (SAS bipartite graph + Transfer cuts + connectivity post-processing, module docstring)."""
    from skimage.color import rgb2lab

    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) RGB image, got shape {rgb.shape}")
    overs = oversegment(rgb, oversegmentations)
    B, groups = bipartite_graph(rgb, overs, alpha=alpha, beta=beta, nb=nb)
    npx = rgb.shape[0] * rgb.shape[1]
    clusters = transfer_cut(B, npx, n_regions, groups=groups, random_state=random_state)
    return connected_regions(clusters.reshape(rgb.shape[:2]), n_regions, rgb2lab(rgb))


def overlay(rgb, regions):
    """Side-by-side RGB uint8 picture: the image | region boundaries over a mean-colour fill."""
    from skimage.segmentation import find_boundaries

    n = int(regions.max()) + 1
    mean = _segment_means(regions, rgb.astype(float), n)
    fill = (0.5 * rgb + 0.5 * mean[regions]).astype(np.uint8)
    fill[find_boundaries(regions, mode="inner")] = (255, 0, 0)
    gap = np.full((rgb.shape[0], 4, 3), 255, np.uint8)
    return np.concatenate([rgb, gap, fill], axis=1)


# --------------------------------------------------------------------------------------------
# 3. per-pixel descriptors, codebooks, region histograms
# --------------------------------------------------------------------------------------------
def hsv_descriptor(rgb):
    """(H, W, 3) float32 HSV in [0, 1] (OpenCV ``COLOR_RGB2HSV_FULL``, hue 0..255 -> [0, 1])."""
    import cv2

    return cv2.cvtColor(np.ascontiguousarray(rgb, np.uint8), cv2.COLOR_RGB2HSV_FULL).astype(np.float32) / 255.0


def hog_descriptor(rgb, cell=4, n_orient=4, clip=0.2):
    """(H, W, 16) float32 dense HOG in [0, 1], one descriptor per pixel.

    Layout: gradients of the grey image by the centred [-1, 0, 1] filter; unsigned orientation
    in [0, π) voted into ``n_orient`` = 4 bins (centres 22.5°, 67.5°, 112.5°, 157.5°) with
    linear interpolation, weighted by gradient magnitude; for each pixel a 2 × 2 block of
    ``cell`` × ``cell`` (4 × 4 px) cells centred on the pixel (cell centres at (±cell/2,
    ±cell/2)); dims ordered cell-major (top-left, top-right, bottom-left, bottom-right) ×
    orientation; L2-Hys normalisation (L2, clip at 0.2, L2 again).  Flat areas give 0.
    """
    import cv2

    g = cv2.cvtColor(np.ascontiguousarray(rgb, np.uint8), cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=1, borderType=cv2.BORDER_REFLECT)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=1, borderType=cv2.BORDER_REFLECT)
    mag = np.sqrt(gx * gx + gy * gy)
    ang = np.mod(np.arctan2(gy, gx), np.pi)
    t = ang / (np.pi / n_orient) - 0.5
    lo = np.floor(t).astype(np.int64)
    frac = (t - lo).astype(np.float32)
    H, W = g.shape
    b0, b1 = np.mod(lo, n_orient), np.mod(lo + 1, n_orient)
    w0, w1 = mag * (1 - frac), mag * frac
    votes = np.stack([np.where(b0 == b, w0, 0) + np.where(b1 == b, w1, 0)
                      for b in range(n_orient)]).astype(np.float32)
    cells = np.stack([cv2.boxFilter(v, -1, (cell, cell), normalize=False,
                                    borderType=cv2.BORDER_REFLECT) for v in votes], -1)  # (H,W,n)
    h = cell // 2
    pad = np.pad(cells, ((h, h), (h, h), (0, 0)), mode="edge")
    blocks = [pad[dy:dy + H, dx:dx + W] for dy in (0, 2 * h) for dx in (0, 2 * h)]
    d = np.concatenate(blocks, axis=-1)                    # (H, W, 4 * n_orient)
    eps = 1e-6
    d = d / np.sqrt((d * d).sum(-1, keepdims=True) + eps ** 2)
    d = np.minimum(d, clip)
    d = d / np.sqrt((d * d).sum(-1, keepdims=True) + eps ** 2)
    return d.astype(np.float32)


def lbp_codes(rgb, radii=(1, 2), points=8):
    """(H, W, len(radii)) int LBP codes 0..2^points-1 (``skimage.feature.local_binary_pattern``,
    method "default", grey image)."""
    import cv2
    from skimage.feature import local_binary_pattern

    g = cv2.cvtColor(np.ascontiguousarray(rgb, np.uint8), cv2.COLOR_RGB2GRAY)
    return np.stack([local_binary_pattern(g, points, r, method="default").astype(np.int64)
                     for r in radii], -1)


def lbp_descriptor(rgb, radii=(1, 2), points=8):
    """(H, W, points·len(radii)) float32 in {0, 1}: the sign bits of the LBP codes at radius 1
    and 2 (8 neighbours each, 16 dims).  The 256-word k-means codebook is learnt on these bits
    (a single 8-bit code would make the codebook the identity)."""
    codes = lbp_codes(rgb, radii, points)
    bits = (codes[..., None] >> np.arange(points)) & 1
    return bits.reshape(*codes.shape[:2], -1).astype(np.float32)


DESCRIPTORS = {"hsv": hsv_descriptor, "hog": hog_descriptor, "lbp": lbp_descriptor}
DESCRIPTOR_DIMS = {"hsv": 3, "hog": 16, "lbp": 16}


def pixel_descriptors(rgb, views=VIEWS):
    """{view: (H·W, d) float32} per-pixel descriptors."""
    return {v: DESCRIPTORS[v](rgb).reshape(-1, DESCRIPTOR_DIMS[v]) for v in views}


def _sample_one(path, views, per_image, seed):
    rgb = load_rgb(path)
    desc = pixel_descriptors(rgb, views)
    n = rgb.shape[0] * rgb.shape[1]
    idx = np.random.default_rng(seed).choice(n, size=min(per_image, n), replace=False)
    return {v: desc[v][idx] for v in views}


MIN_IMAGES_PER_WORKER = 32


def _parallel(fn, args, n_jobs):
    """Map ``fn`` over argument tuples; worker processes (joblib/loky) only when each worker
    gets at least ``MIN_IMAGES_PER_WORKER`` images (starting a worker costs seconds of imports)."""
    n_jobs = min(int(n_jobs or 1), len(args) // MIN_IMAGES_PER_WORKER)
    if n_jobs <= 1:
        return [fn(*a) for a in args]
    from joblib import Parallel, delayed
    return Parallel(n_jobs=n_jobs, backend="loky")(delayed(fn)(*a) for a in args)


def fit_codebooks(paths, views=VIEWS, n_words=256, pixels_per_image=500, random_state=0,
                  n_jobs=1, max_iter=100):
    """One k-means codebook per view (MiniBatchKMeans, unsupervised), fitted on a seeded sample
    of ``pixels_per_image`` pixels from every image.  Returns {view: (n_words, d) float32}."""
    from sklearn.cluster import MiniBatchKMeans

    seeds = np.random.SeedSequence(random_state).generate_state(len(paths))
    samples = _parallel(_sample_one, [(p, views, pixels_per_image, int(s))
                                      for p, s in zip(paths, seeds)], n_jobs)
    books = {}
    for v in views:
        X = np.concatenate([s[v] for s in samples])
        if len(X) < n_words:
            raise ValueError(f"{v}: {len(X)} sampled pixels < {n_words} codewords")
        km = MiniBatchKMeans(n_clusters=n_words, random_state=random_state, n_init=3,
                             batch_size=4096, max_iter=max_iter, reassignment_ratio=0.01)
        km.fit(X)
        books[v] = km.cluster_centers_.astype(np.float32)
    return books


def encode(desc, centers):
    """Nearest codeword (squared Euclidean) of every row of ``desc``."""
    d = (centers * centers).sum(1)[None, :] - 2.0 * (desc @ centers.T)
    return np.argmin(d, axis=1)


def region_histograms(codes, regions, n_regions, n_words):
    """(n_regions, n_words) float32 rows summing to 1: code frequencies inside each region."""
    regions = np.asarray(regions).ravel()
    h = np.bincount(regions * n_words + np.asarray(codes).ravel(),
                    minlength=n_regions * n_words).reshape(n_regions, n_words).astype(np.float64)
    return (h / np.maximum(h.sum(1, keepdims=True), 1)).astype(np.float32)


def image_instances(rgb, regions, codebooks):
    """{view: (n_regions, n_words)} region histograms of one image."""
    n = int(regions.max()) + 1
    desc = pixel_descriptors(rgb, tuple(codebooks))
    return {v: region_histograms(encode(desc[v], c), regions, n, len(c))
            for v, c in codebooks.items()}


def _segment_one(path, seg_kw):
    return segment_image(load_rgb(path), **seg_kw)


def segment_images(paths, n_regions=5, oversegmentations=DEFAULT_OVERSEGMENTATIONS, alpha=1e-3,
                   beta=20.0, nb=1, random_state=0, n_jobs=1):
    """Region maps of many images (list of (H, W) int32)."""
    kw = dict(n_regions=n_regions, oversegmentations=oversegmentations, alpha=alpha, beta=beta,
              nb=nb, random_state=random_state)
    return _parallel(_segment_one, [(p, kw) for p in paths], n_jobs)


def _instances_one(path, regions, codebooks):
    return image_instances(load_rgb(path), regions, codebooks)


def build_bags(table, segments, codebooks, meta=None, n_jobs=1):
    """Bags (bag = image, instance = region) with views {"hsv", "hog", "lbp"} stacked in that
    order; ``segments`` maps image_id -> region map; ``table`` has image_id, path, label,
    keywords."""
    views = [v for v in VIEWS if v in codebooks]
    ids = table["image_id"].astype(str).tolist()
    per = _parallel(_instances_one, [(p, segments[i], {v: codebooks[v] for v in views})
                                     for i, p in zip(ids, table["path"])], n_jobs)
    blocks = [np.concatenate([p[v] for p in per]) for v in views]
    X = np.hstack(blocks)
    sizes = np.array([len(p[views[0]]) for p in per])
    starts = np.r_[0, np.cumsum([codebooks[v].shape[0] for v in views])]
    return Bags(X, np.r_[0, np.cumsum(sizes)], table["label"].to_numpy(), np.asarray(ids),
                names=table["keywords"].to_numpy().astype(str),
                views={v: (int(starts[k]), int(starts[k + 1])) for k, v in enumerate(views)},
                meta=dict(meta or {}))


def save_segments(path, ids, segments):
    """One compressed npz holding every image's region map under its image id."""
    np.savez_compressed(path, **{_key(i): s for i, s in zip(ids, segments)})


def load_segments(path):
    with np.load(path) as z:
        return {_unkey(k): z[k] for k in z.files}


def _key(image_id):
    return "img__" + str(image_id).replace("/", "__SLASH__")


def _unkey(key):
    return key[len("img__"):].replace("__SLASH__", "/")


def save_codebooks(path, books, **info):
    np.savez_compressed(path, **{f"centers_{v}": c for v, c in books.items()},
                        **{f"info_{k}": np.asarray(v) for k, v in info.items()})


def load_codebooks(path):
    with np.load(path) as z:
        return {k[len("centers_"):]: z[k] for k in z.files if k.startswith("centers_")}


