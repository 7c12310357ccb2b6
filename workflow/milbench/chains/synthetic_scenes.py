"""SYNTHETIC stand-in for the Corel photos (for the offline default), in Corel-5k layout.

``make_synthetic_scenes(outdir, ...)`` writes::

    outdir/SYNTHETIC.txt                      what this is (every output that uses it says so)
    outdir/train_jpeg/<id>.jpeg, test_jpeg/<id>.jpeg
    outdir/labels/words                       one keyword per line (1-based indices)
    outdir/labels/training_label, test_label  "<id> <kw_idx> <kw_idx> ..."

Scenes are textured backgrounds (grass, sand, water, rock, sky bands) with one to three
animal-like shapes (body ellipse + head disc + legs) carrying a species texture.  Positive
scenes contain a "cat" (keywords ``cat`` + ``tiger``: orange with dark stripes, or ``cat`` +
``leopard``: tan with dark spots); negative scenes contain only other animals, chosen so that no
single view separates the classes: ``fox`` (orange, smooth: same colour as a tiger),
``zebra`` (black/white stripes: same texture as a tiger), ``elephant`` (grey, wrinkled),
``bear`` (dark brown fur), ``horses`` (brown, smooth), ``birds`` (small, blue-grey).
Some scenes without animals (``city``/``sky``) are added as unused distractors.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

# cv2 is imported inside the functions that use it: heavy, needed only to draw the scenes
CATS = ("tiger", "leopard")
OTHERS = ("fox", "zebra", "elephant", "bear", "horses", "birds")
BACKGROUNDS = ("grass", "sand", "water", "rocks")


def _smooth_noise(rng, shape, scale):
    """Low-pass random field in [0, 1] (Gaussian blur of white noise)."""
    import cv2

    n = rng.standard_normal(shape).astype(np.float32)
    k = max(1, int(scale) * 2 + 1)
    n = cv2.GaussianBlur(n, (k, k), scale)
    n -= n.min()
    return n / max(float(n.max()), 1e-6)


def _background(rng, H, W):
    kind = BACKGROUNDS[rng.integers(len(BACKGROUNDS))]
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    fine, coarse = _smooth_noise(rng, (H, W), 1), _smooth_noise(rng, (H, W), 6)
    if kind == "grass":
        blades = 0.5 + 0.5 * np.sin(xx * rng.uniform(1.2, 2.0) + 3 * fine)
        base = np.array([70, 130, 50]) * (0.6 + 0.4 * coarse)[..., None]
        img = base + 40 * (blades * fine)[..., None] * np.array([0.4, 1.0, 0.3])
    elif kind == "sand":
        img = np.array([200, 180, 130]) * (0.8 + 0.2 * coarse)[..., None] + 25 * (fine - 0.5)[..., None]
    elif kind == "water":
        ripples = np.sin(yy * rng.uniform(0.5, 0.9) + 4 * coarse)
        img = np.array([40, 90, 150]) * (0.8 + 0.2 * coarse)[..., None] + 25 * ripples[..., None]
    else:  # rocks
        img = np.array([120, 115, 110]) * (0.55 + 0.45 * coarse)[..., None] + 40 * (fine - 0.5)[..., None]
    keywords = [kind]
    if rng.random() < 0.4:                                   # a sky band on top
        h = int(H * rng.uniform(0.15, 0.35))
        sky = np.array([150, 190, 235]) * (0.9 + 0.1 * _smooth_noise(rng, (h, W), 8))[..., None]
        img[:h] = sky
        keywords.append("sky")
    return img, keywords


def _texture(rng, species, H, W):
    """(H, W, 3) float texture of one species over the whole canvas (masked later)."""
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    fine = _smooth_noise(rng, (H, W), 1)
    theta = rng.uniform(0, np.pi)
    u = xx * np.cos(theta) + yy * np.sin(theta)
    if species in ("tiger", "zebra"):
        freq = rng.uniform(0.45, 0.7)
        warp = 3.0 * _smooth_noise(rng, (H, W), 5)
        stripe = (np.sin(u * freq + warp) > 0.35).astype(np.float32)
        base = np.array([225, 120, 30]) if species == "tiger" else np.array([235, 235, 235])
        dark = np.array([25, 15, 10])
        tex = base * (1 - stripe)[..., None] + dark * stripe[..., None]
    elif species == "leopard":
        base = np.array([215, 175, 95])
        tex = np.broadcast_to(base, (H, W, 3)).astype(np.float32).copy()
        n = int(H * W / 40)
        cy, cx = rng.uniform(0, H, n), rng.uniform(0, W, n)
        r = rng.uniform(1.2, 2.6, n)
        spots = np.zeros((H, W), bool)
        for y0, x0, rr in zip(cy, cx, r):                    # a few hundred discs per image
            y1, y2 = int(max(0, y0 - rr - 1)), int(min(H, y0 + rr + 2))
            x1, x2 = int(max(0, x0 - rr - 1)), int(min(W, x0 + rr + 2))
            spots[y1:y2, x1:x2] |= (yy[y1:y2, x1:x2] - y0) ** 2 + (xx[y1:y2, x1:x2] - x0) ** 2 <= rr * rr
        tex[spots] = np.array([40, 30, 20])
    elif species == "fox":
        tex = np.array([220, 115, 35]) * (0.85 + 0.15 * _smooth_noise(rng, (H, W), 4))[..., None]
    elif species == "elephant":
        wr = np.sin(u * 1.3 + 6 * _smooth_noise(rng, (H, W), 3))
        tex = np.array([125, 122, 118]) * (0.9 + 0.06 * wr)[..., None] + 12 * (fine - 0.5)[..., None]
    elif species == "bear":
        tex = np.array([80, 50, 30]) * (0.7 + 0.6 * fine)[..., None]
    elif species == "horses":
        tex = np.array([140, 85, 45]) * (0.9 + 0.1 * _smooth_noise(rng, (H, W), 6))[..., None]
    elif species == "birds":
        tex = np.array([90, 110, 140]) * (0.8 + 0.4 * fine)[..., None]
    else:
        raise ValueError(species)
    return tex.astype(np.float32)


def _animal_mask(rng, H, W, scale):
    """Boolean mask of an animal-like shape: body ellipse, head disc, four legs, tail."""
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    a, b = scale * W * rng.uniform(0.16, 0.24), scale * H * rng.uniform(0.12, 0.18)
    cx, cy = rng.uniform(a + 2, W - a - 2), rng.uniform(b + 2, H - b - H * 0.12)
    ang = rng.uniform(-0.3, 0.3)
    xr, yr = (xx - cx) * np.cos(ang) + (yy - cy) * np.sin(ang), -(xx - cx) * np.sin(ang) + (yy - cy) * np.cos(ang)
    m = (xr / a) ** 2 + (yr / b) ** 2 <= 1
    side = rng.choice([-1, 1])
    hx, hy, hr = cx + side * a * 0.95, cy - b * 0.7, b * 0.75
    m |= (xx - hx) ** 2 + (yy - hy) ** 2 <= hr * hr
    for f in (-0.6, -0.3, 0.3, 0.6):                         # legs
        lx = cx + f * a
        m |= (np.abs(xx - lx) <= max(1.0, a * 0.08)) & (yy >= cy) & (yy <= cy + b * 1.8)
    tx = cx - side * a                                     # tail
    m |= (np.abs(yy - (cy - 0.2 * b) - 0.3 * (xx - tx) * side) <= 1.0) & \
         (np.abs(xx - tx - side * -a * 0.25) <= a * 0.25)
    return m


def render_scene(rng, H, W, species):
    """(H, W, 3) uint8 scene with the given animals; returns (image, keywords)."""
    import cv2

    img, kws = _background(rng, H, W)
    for i, sp in enumerate(species):
        scale = 0.55 if sp == "birds" else rng.uniform(0.8, 1.15)
        m = _animal_mask(rng, H, W, scale)
        img[m] = _texture(rng, sp, H, W)[m]
        kws.append(sp)
        if sp in CATS:
            kws.append("cat")
    img = cv2.GaussianBlur(np.clip(img, 0, 255).astype(np.float32), (3, 3), 0.6)
    img += rng.normal(0, 4, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8), sorted(set(kws))


def make_synthetic_scenes(outdir, n_pos=40, n_neg=40, n_other=10, size=(128, 192), seed=0,
                          test_fraction=0.1, jpeg_quality=90):
    """Write a SYNTHETIC Corel-5k-layout image collection (module docstring); returns outdir."""
    import cv2

    outdir = Path(outdir)
    for d in ("train_jpeg", "test_jpeg", "labels"):
        (outdir / d).mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    H, W = size
    plans = []
    for _ in range(n_pos):
        extra = list(rng.choice(OTHERS, size=rng.integers(0, 2), replace=False))
        plans.append([CATS[rng.integers(2)]] + extra)
    for _ in range(n_neg):
        plans.append(list(rng.choice(OTHERS, size=rng.integers(1, 3), replace=False)))
    plans += [[] for _ in range(n_other)]
    order = rng.permutation(len(plans))
    vocab = list(CATS) + ["cat"] + list(OTHERS) + list(BACKGROUNDS) + ["sky", "city"]
    widx = {w: i + 1 for i, w in enumerate(vocab)}
    lines = {"train": [], "test": []}
    for n, p in enumerate(order):
        image_id = str(100000 + n)
        img, kws = render_scene(rng, H, W, plans[p])
        if not plans[p]:
            kws = sorted(set(kws) | {"city"})
        split = "test" if rng.random() < test_fraction else "train"
        folder = "test_jpeg" if split == "test" else "train_jpeg"
        cv2.imwrite(str(outdir / folder / f"{image_id}.jpeg"), cv2.cvtColor(img, cv2.COLOR_RGB2BGR),
                    [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality])
        lines[split].append(f"{image_id} " + " ".join(str(widx[k]) for k in kws))
    (outdir / "labels" / "words").write_text("\n".join(vocab) + "\n")
    (outdir / "labels" / "training_label").write_text("\n".join(lines["train"]) + "\n")
    (outdir / "labels" / "test_label").write_text("\n".join(lines["test"]) + ("\n" if lines["test"] else ""))
    (outdir / "SYNTHETIC.txt").write_text(
        "SYNTHETIC scenes generated by milbench.chains.synthetic_scenes "
        f"(seed={seed}, n_pos={n_pos}, n_neg={n_neg}, n_other={n_other}, size={H}x{W}); "
        "not Corel photos.\n")
    return outdir


def is_synthetic(source):
    """True when ``source`` is a folder written by :func:`make_synthetic_scenes`."""
    return (Path(source) / "SYNTHETIC.txt").exists()
