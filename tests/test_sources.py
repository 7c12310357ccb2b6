from pathlib import Path

import numpy as np
import pytest

from milbench.data.sources import (
    SourceError,
    fetch,
    load_builtin,
    load_dataset,
    load_manifest,
    read_arff,
    read_c45,
    read_csv,
    read_mat,
    read_uci_musk,
    safe_extract,
)

SHAPES = {"musk1": (92, 476, 47, 166), "musk2": (102, 6598, 39, 166),
          "elephant": (200, 1391, 100, 230), "fox": (200, 1320, 100, 230),
          "tiger": (200, 1220, 100, 230), "protein": (193, 26611, 25, 9)}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_builtin_shapes(shared_data, name):
    b = load_dataset(name, shared_data)
    assert (len(b), len(b.instances), int(b.labels.sum()), b.n_features) == SHAPES[name]


@pytest.mark.parametrize("name", ["elephant", "fox", "tiger"])
def test_c45_column_order_matches_mat(shared_data, name):
    """The .names file lists attributes sorted as strings; after reordering, the C4.5 copy
    equals the .mat copy (bags matched by their sorted instance rows)."""
    c45 = read_c45(shared_data / f"andrews/c45/{name}.data")
    mat = read_mat(shared_data / f"andrews/mat/{name}")
    key = lambda b: sorted((int(y), tuple(np.round(np.sort(x, axis=0).ravel(), 4)))  # noqa: E731
                           for x, y in zip(b.as_list(), b.labels))
    assert key(c45) == key(mat)
    # the string order itself would not match: column "10" is feature 10, not feature 2
    names = [l.split(":")[0] for l in (shared_data / f"andrews/c45/{name}.names").read_text()
             .splitlines()[3:6]]
    assert names == ["1", "10", "100"]
    assert (c45.instances == 0).all(axis=0).sum() == 87


@pytest.mark.parametrize("name", ["musk1", "musk2", "elephant", "protein"])
def test_offline_copy_equals_download(shared_data, name):
    off, raw = load_builtin(name, offline=True), load_dataset(name, shared_data)
    assert len(off) == len(raw) and off.labels.sum() == raw.labels.sum()
    np.testing.assert_allclose(np.sort(off.instances.sum(1)), np.sort(raw.instances.sum(1)),
                               rtol=1e-4, atol=1e-3)


def test_uci_musk_bag_is_molecule(shared_data):
    b = read_uci_musk(shared_data / "musk/clean1.data")
    assert b.bag_ids[0].startswith("MUSK-")


def test_csv_errors_name_file_and_line(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,a,0.5,0.2\n0,b,0.1,oops\n")
    with pytest.raises(SourceError, match=r"d.csv, line 2"):
        read_csv(p)
    p.write_text("1,a,0.5,0.2\n0,b,0.1,inf\n")
    with pytest.raises(SourceError, match=r"line 2"):
        read_csv(p)
    p.write_text("1,a,0.5,0.2\n3,b,0.1,0.3\n")
    with pytest.raises(SourceError, match=r"line 2: label"):
        read_csv(p)


def test_uci_malformed_line(tmp_path):
    p = tmp_path / "m.data"
    p.write_text("M1,c1,1,2,1.\nM1,c2,1,2\n")
    with pytest.raises(SourceError, match=r"m.data, line 2: expected 5 columns"):
        read_uci_musk(p)


def test_arff_multi_instance(tmp_path):
    p = tmp_path / "x.arff"
    p.write_text("""@relation t
@attribute bag_id {b1,b2}
@attribute bag relational
  @attribute f1 numeric
  @attribute f2 numeric
@end bag
@attribute class {0,1}
@data
b1,"1,2\\n3,4",1
b2,"5,6",0
""")
    b = read_arff(p)
    assert len(b) == 2 and b.sizes.tolist() == [2, 1] and b.labels.tolist() == [1, 0]
    np.testing.assert_array_equal(b[0], [[1, 2], [3, 4]])
    p.write_text(p.read_text().replace('"5,6"', '"5"'))
    with pytest.raises(SourceError, match="line 10"):
        read_arff(p)


def test_download_through_http_mirror(http_mirror, tmp_path, shared_data):
    manifest = load_manifest()
    for name in ("musk1", "elephant"):
        for f in manifest[name]["files"]:
            fetch(f, tmp_path / f["path"], mirror=http_mirror)
        b = load_builtin(name, raw_dir=tmp_path)
        ref = load_dataset(name, shared_data)
        np.testing.assert_array_equal(b.instances, ref.instances)


def test_checksum_mismatch_leaves_nothing(http_mirror, tmp_path):
    entry = dict(load_manifest()["musk1"]["files"][0], sha256="0" * 64)
    with pytest.raises(SourceError, match="checksum mismatch"):
        fetch(entry, tmp_path / "x" / "clean1.data", mirror=http_mirror)
    assert list((tmp_path / "x").iterdir()) == []


def _tar(tmp_path, add):
    import io
    import tarfile
    p = tmp_path / "a.tar.gz"
    with tarfile.open(p, "w:gz") as t:
        add(t, tarfile, io)
    return p


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink-out"])
def test_safe_extract_refuses(tmp_path, kind):
    def add(t, tarfile, io):
        good = tarfile.TarInfo("ok/file.txt")
        good.size = 2
        t.addfile(good, io.BytesIO(b"hi"))
        if kind == "symlink-out":
            bad = tarfile.TarInfo("ok/link")
            bad.type, bad.linkname = tarfile.SYMTYPE, "../../etc/passwd"
            t.addfile(bad)
        else:
            bad = tarfile.TarInfo("../evil.txt" if kind == "dotdot" else "/tmp/evil.txt")
            bad.size = 1
            t.addfile(bad, io.BytesIO(b"x"))
    archive = _tar(tmp_path, add)
    with pytest.raises(SourceError, match="refusing"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil.txt").exists()


def test_safe_extract_ok(tmp_path):
    def add(t, tarfile, io):
        ti = tarfile.TarInfo("d/f.txt")
        ti.size = 2
        t.addfile(ti, io.BytesIO(b"ok"))
    out = safe_extract(_tar(tmp_path, add), tmp_path / "out")
    assert (Path(out) / "d/f.txt").read_text() == "ok"
