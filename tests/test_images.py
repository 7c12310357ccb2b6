"""Corel image chain: selection, SAS/Tcut segmentation, descriptors, codebooks, bags."""
from __future__ import annotations

import numpy as np
import pytest

from milbench.chains import images as im
from milbench.chains import synthetic_scenes as ss

SMALL = (64, 96)


@pytest.fixture(scope="module")
def scenes(tmp_path_factory):
    root = tmp_path_factory.mktemp("scenes")
    return ss.make_synthetic_scenes(root, n_pos=5, n_neg=5, n_other=2, size=SMALL, seed=3)


def small_scene(seed, species=("tiger",)):
    return ss.render_scene(np.random.default_rng(seed), *SMALL, list(species))[0]


# ---------------------------------------------------------------------------------------------
# image table and selection
# ---------------------------------------------------------------------------------------------
def test_corel_layout_and_selection(scenes):
    table = im.read_image_table(scenes)
    assert len(table) == 12 and set(table["split"]) <= {"train", "test"}
    sel, info = im.select_images(table, n_pos=None, n_neg=None)
    assert info["n_positive"] == 5 and info["n_negative"] == 5
    kw = sel["keywords"].str.split()
    pos = sel["label"] == 1
    assert kw[pos].map(lambda k: bool({"tiger", "lion", "leopard"} & set(k))).all()
    assert not kw[~pos].map(lambda k: bool({"tiger", "lion", "leopard", "cat"} & set(k))).any()
    assert not kw[~pos].map(lambda k: k == ["city"] or set(k) <= {"city", "sky", *ss.BACKGROUNDS}).any()
    a, _ = im.select_images(table, n_pos=3, n_neg=3, seed=1)
    b, _ = im.select_images(table, n_pos=3, n_neg=3, seed=1)
    assert a["image_id"].tolist() == b["image_id"].tolist() and len(a) == 6
    big, info = im.select_images(table, n_pos=50, n_neg=50)
    assert len(big) == 10 and info["requested_positive"] == 50


def test_plain_category_folder(tmp_path):
    import cv2

    for cat, n in (("tiger", 2), ("elephant", 3), ("city", 1)):
        (tmp_path / cat).mkdir()
        for i in range(n):
            cv2.imwrite(str(tmp_path / cat / f"{i}.png"), np.zeros((8, 8, 3), np.uint8))
    table = im.read_image_table(tmp_path)
    assert sorted(table["keywords"].unique()) == ["city", "elephant", "tiger"]
    sel, info = im.select_images(table, n_pos=None, n_neg=None)
    assert sel["label"].tolist() == [1, 1, 0, 0, 0]
    assert sel["image_id"].tolist()[:2] == ["tiger/0", "tiger/1"]


def test_bad_sources(tmp_path):
    with pytest.raises(ValueError, match="neither Corel-5k layout"):
        im.read_image_table(tmp_path)
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "words").write_text("tiger\n")
    (tmp_path / "labels" / "training_label").write_text("1 5\n")
    with pytest.raises(ValueError, match="keyword index 5"):
        im.read_image_table(tmp_path)


# ---------------------------------------------------------------------------------------------
# segmentation
# ---------------------------------------------------------------------------------------------
def _n_components(mask):
    from skimage.measure import label
    return int(label(mask, connectivity=1).max())


@pytest.mark.parametrize("k", [3, 5, 8])
def test_segmentation_gives_k_connected_regions_covering_every_pixel(k):
    rgb = small_scene(k, ("tiger", "elephant"))
    seg = im.segment_image(rgb, n_regions=k)
    assert seg.shape == rgb.shape[:2] and seg.dtype == np.int32
    assert sorted(np.unique(seg).tolist()) == list(range(k))     # every pixel in one of k regions
    assert all(_n_components(seg == r) == 1 for r in range(k))  # each region 4-connected
    np.testing.assert_array_equal(seg, im.segment_image(rgb, n_regions=k))  # deterministic


def test_segmentation_of_a_flat_image_splits_to_k_regions():
    seg = im.segment_image(np.full((20, 30, 3), 128, np.uint8), n_regions=5)
    assert sorted(np.unique(seg).tolist()) == list(range(5))
    assert all(_n_components(seg == r) == 1 for r in range(5))


def test_connected_regions_merges_and_splits():
    rng = np.random.default_rng(0)
    noisy = rng.integers(0, 3, (30, 40))                     # hundreds of tiny components
    feats = rng.random((30, 40, 3))
    out = im.connected_regions(noisy, 4, feats)
    assert sorted(np.unique(out).tolist()) == [0, 1, 2, 3]
    assert all(_n_components(out == r) == 1 for r in range(4))
    two = np.zeros((10, 10), int)
    two[:, 5:] = 1
    out = im.connected_regions(two, 6, np.zeros((10, 10, 3)))
    assert len(np.unique(out)) == 6 and all(_n_components(out == r) == 1 for r in range(6))
    # region ids follow raster order of their first pixel
    assert out[0, 0] == 0


def test_transfer_cut_separates_two_flat_halves():
    rgb = np.zeros((24, 32, 3), np.uint8)
    rgb[:, 16:] = (250, 30, 30)
    seg = im.segment_image(rgb, n_regions=2)
    assert len(np.unique(seg[:, :16])) == 1 and len(np.unique(seg[:, 16:])) == 1
    assert seg[0, 0] != seg[0, -1]


def test_bipartite_graph_structure():
    rgb = small_scene(1)
    overs = im.oversegment(rgb, im.DEFAULT_OVERSEGMENTATIONS[:2])
    B, groups = im.bipartite_graph(rgb, overs, alpha=1e-3)
    npx = rgb.shape[0] * rgb.shape[1]
    nsp = sum(int(o.max()) + 1 for o in overs)
    assert B.shape == (npx + nsp, nsp)
    pix = B[:npx]
    np.testing.assert_allclose(np.asarray(pix.sum(1)).ravel(), 2e-3)   # one superpixel per map
    WY = B[npx:].toarray()
    np.testing.assert_allclose(WY, WY.T)
    np.testing.assert_allclose(np.diag(WY), 1.0)
    assert groups.shape == (npx,)


# ---------------------------------------------------------------------------------------------
# descriptors (documented shapes and ranges)
# ---------------------------------------------------------------------------------------------
def test_descriptor_shapes_and_ranges():
    rgb = small_scene(2)
    H, W = SMALL
    hsv, hog, lbp = im.hsv_descriptor(rgb), im.hog_descriptor(rgb), im.lbp_descriptor(rgb)
    assert hsv.shape == (H, W, 3) and hog.shape == (H, W, 16) and lbp.shape == (H, W, 16)
    for d in (hsv, hog, lbp):
        assert d.dtype == np.float32 and d.min() >= 0 and d.max() <= 1
    norms = np.linalg.norm(hog, axis=-1)
    assert np.all((norms < 1e-6) | (np.abs(norms - 1) < 1e-4))          # L2-Hys: unit or zero
    assert set(np.unique(lbp).tolist()) <= {0.0, 1.0}
    codes = im.lbp_codes(rgb)
    np.testing.assert_array_equal(
        (lbp[..., :8] * (1 << np.arange(8))).sum(-1).astype(int), codes[..., 0])
    assert codes.min() >= 0 and codes.max() <= 255
    # pure red has hue 0, full saturation and value
    np.testing.assert_allclose(im.hsv_descriptor(np.full((2, 2, 3), (255, 0, 0), np.uint8))[0, 0],
                               [0, 1, 1])


def test_hog_orientation_bins():
    v = np.zeros((32, 32, 3), np.uint8)
    v[:, 16:] = 255                                           # vertical edge: gradient along x
    h = np.ascontiguousarray(np.swapaxes(v, 0, 1))            # horizontal edge: along y
    dv, dh = im.hog_descriptor(v)[16, 16].reshape(4, 4), im.hog_descriptor(h)[16, 16].reshape(4, 4)
    # θ = 0 lies between bin 3 (157.5°) and bin 0 (22.5°); θ = 90° between bins 1 and 2
    assert dv[:, [1, 2]].sum() < 1e-6 and dv[:, [0, 3]].sum() > 0.5
    assert dh[:, [0, 3]].sum() < 1e-6 and dh[:, [1, 2]].sum() > 0.5
    flat = im.hog_descriptor(np.full((16, 16, 3), 90, np.uint8))
    assert np.abs(flat).max() == 0


def test_region_histograms_sum_to_one():
    codes = np.array([0, 1, 1, 2, 3, 3, 3, 0])
    regions = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    h = im.region_histograms(codes, regions, 3, 4)
    np.testing.assert_allclose(h.sum(1), 1.0)
    np.testing.assert_allclose(h[0], [1 / 3, 2 / 3, 0, 0])
    np.testing.assert_allclose(h[2], [0.5, 0, 0, 0.5])


def test_encode_is_nearest_codeword():
    rng = np.random.default_rng(0)
    X, C = rng.random((50, 4)).astype(np.float32), rng.random((7, 4)).astype(np.float32)
    want = np.argmin(((X[:, None] - C[None]) ** 2).sum(-1), 1)
    np.testing.assert_array_equal(im.encode(X, C), want)


# ---------------------------------------------------------------------------------------------
# the whole chain on small synthetic scenes -> Parquet store
# ---------------------------------------------------------------------------------------------
def test_chain_builds_three_view_bags(scenes, tmp_path):
    from milbench.data.store import read_bags, write_bags

    table = im.read_image_table(scenes)
    sel, info = im.select_images(table, n_pos=3, n_neg=3, seed=0)
    segs = im.segment_images(sel["path"].tolist(), n_regions=4)
    books = im.fit_codebooks(sel["path"].tolist(), n_words=16, pixels_per_image=200, random_state=0)
    assert {v: c.shape for v, c in books.items()} == {"hsv": (16, 3), "hog": (16, 16), "lbp": (16, 16)}
    books2 = im.fit_codebooks(sel["path"].tolist(), n_words=16, pixels_per_image=200, random_state=0)
    for v in books:
        np.testing.assert_array_equal(books[v], books2[v])              # seeded
    im.save_segments(tmp_path / "seg.npz", sel["image_id"], segs)
    im.save_codebooks(tmp_path / "cb.npz", books, n_words=16)
    segs_loaded, books_loaded = im.load_segments(tmp_path / "seg.npz"), im.load_codebooks(tmp_path / "cb.npz")
    bags = im.build_bags(sel, segs_loaded, books_loaded, meta={"synthetic": True})
    assert len(bags) == 6 and (bags.sizes == 4).all()
    assert bags.views == {"hsv": (0, 16), "hog": (16, 32), "lbp": (32, 48)}
    for a, b in bags.views.values():
        np.testing.assert_allclose(bags.instances[:, a:b].sum(1), 1.0, rtol=1e-5)
    assert bags.labels.tolist() == [1, 1, 1, 0, 0, 0]
    write_bags(bags, tmp_path / "corel-cats")
    back = read_bags(tmp_path / "corel-cats")
    assert back.meta["synthetic"] is True and set(back.views) == set(bags.views)
    for v in bags.views:                       # (the store may reorder views by name)
        np.testing.assert_array_equal(back.view(v).instances, bags.view(v).instances)


def test_overlay_marks_boundaries():
    rgb = small_scene(4)
    seg = im.segment_image(rgb, 5)
    ov = im.overlay(rgb, seg)
    assert ov.shape == (SMALL[0], 2 * SMALL[1] + 4, 3)
    assert ((ov[:, SMALL[1] + 4:] == (255, 0, 0)).all(-1)).sum() > 0


def test_real_corel_archive_layout(tmp_path, shared_data):
    archive = shared_data / "corel5k" / "corel5k.tar.gz"
    from milbench.data.sources import safe_extract

    root = safe_extract(archive, tmp_path / "corel5k")
    table = im.read_image_table(root)
    assert len(table) == 4999
    sel, info = im.select_images(table, n_pos=2, n_neg=2, seed=0)
    assert info["available_positive"] == 113                   # tiger 101, lion 11, leopard 1
    rgb = im.load_rgb(sel["path"].iloc[0])
    assert rgb.shape[2] == 3 and max(rgb.shape[:2]) == 192
    seg = im.segment_image(rgb, 5)
    assert sorted(np.unique(seg).tolist()) == list(range(5))
