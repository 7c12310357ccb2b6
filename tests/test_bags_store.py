import numpy as np
import pandas as pd
import pytest

from milbench.data.bags import BagError, Bags, check_bags, labels_to_01, stack
from milbench.data.store import StoreError, read_bags, write_bags

from conftest import toy_bags


def make():
    bags, y = toy_bags(12, d=5)
    b = Bags.from_list(bags, y, bag_ids=[f"b{i}" for i in range(12)])
    b.views = {"a": (0, 2), "b": (2, 5)}
    b.edges = pd.DataFrame({"src": ["b0", "b1"], "dst": ["b2", "b3"], "weight": [1.0, 0.5],
                            "level": ["bag", "bag"]})
    b.instance_labels = (np.arange(len(b.instances)) % 2).astype(np.int8)
    return b


def test_parquet_round_trip(tmp_path):
    b = make()
    write_bags(b, tmp_path / "ds", extra_meta={"source": "test"})
    r = read_bags(tmp_path / "ds")
    np.testing.assert_array_equal(r.instances, b.instances)
    np.testing.assert_array_equal(r.offsets, b.offsets)
    np.testing.assert_array_equal(r.labels, b.labels)
    np.testing.assert_array_equal(r.bag_ids, b.bag_ids)
    np.testing.assert_array_equal(r.instance_labels, b.instance_labels)
    assert r.views == {"a": (0, 2), "b": (2, 5)}
    pd.testing.assert_frame_equal(r.edges, b.edges)
    assert r.meta["source"] == "test" and r.meta["n_bags"] == 12
    one = read_bags(tmp_path / "ds", views=["b"])
    np.testing.assert_array_equal(one.instances, b.instances[:, 2:5])
    with pytest.raises(StoreError, match="unknown view"):
        read_bags(tmp_path / "ds", views=["zzz"])


def test_failed_write_leaves_nothing(tmp_path):
    b = make()
    b.edges = object()  # not a DataFrame: the write fails half-way
    with pytest.raises(Exception):
        write_bags(b, tmp_path / "ds")
    assert list(tmp_path.iterdir()) == []


def test_subset_view_and_stack():
    b = make()
    s = b.subset([3, 1])
    np.testing.assert_array_equal(s[0], b[3])
    np.testing.assert_array_equal(s[1], b[1])
    assert list(s.bag_ids) == ["b3", "b1"]
    X, off = stack(b.as_list())
    np.testing.assert_array_equal(X, b.instances)
    np.testing.assert_array_equal(off, b.offsets)
    assert b.view("b").n_features == 3


@pytest.mark.parametrize("bad, msg", [
    (([np.zeros((0, 3)), np.ones((2, 3))], [0, 1]), "no instances"),
    (([np.array([[np.nan, 1.0]]), np.ones((2, 2))], [0, 1]), "non-finite"),
    (([np.ones((1, 2)), np.ones((2, 3))], [0, 1]), "shape"),
    (([np.ones((1, 2)), np.ones((2, 2))], [1, 1]), "single class"),
    (([np.ones((1, 2)), np.ones((2, 2))], [0, 1, 1]), "labels"),
    (([np.ones((1, 2)), np.ones((2, 2))], [0, 2]), "0/1 or -1/\\+1"),
])
def test_check_bags_errors(bad, msg):
    with pytest.raises(BagError, match=msg):
        check_bags(*bad)


def test_check_bags_returns_the_stacked_input():
    bags = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([[7, 8, 9]])]
    b = Bags.from_list(bags, [0, 1])
    for X in (b, bags):
        Xs, off, y01, classes = check_bags(X, [-1, 1])
        assert Xs.dtype == np.float64 and Xs.flags.c_contiguous
        np.testing.assert_array_equal(Xs, [[0, 1, 2], [3, 4, 5], [7, 8, 9]])
        assert off.tolist() == [0, 2, 3] and y01.tolist() == [0, 1] and classes.tolist() == [-1, 1]
    assert check_bags(b)[2:] == (None, None)
    assert check_bags([np.array([7, 8, 9])])[0].shape == (1, 3)    # 1-D: one instance
    assert check_bags(b, dtype=None)[0] is b.instances        # a Bags' matrix as it is stored
    assert check_bags(bags, dtype=None)[0].dtype == np.float64
    b.instances[2, 1] = np.inf                                 # changed after construction
    with pytest.raises(BagError, match="instance row 2"):
        check_bags(b)


def test_labels_pm1():
    y, classes = labels_to_01([-1, 1, 1])
    assert y.tolist() == [0, 1, 1] and classes.tolist() == [-1, 1]


def test_bags_container_rejects_empty_bag():
    with pytest.raises(BagError, match="no instances"):
        Bags(np.ones((2, 2)), [0, 2, 2], [0, 1], ["a", "b"])


def _write_often(outdir, start, n, errors):
    """Write ``make()``'s store to ``outdir`` ``n`` times once ``start`` is set (a process of
    :func:`test_concurrent_writers_leave_one_whole_store`)."""
    b = make()
    start.wait()
    try:
        for _ in range(n):
            write_bags(b, outdir)
    except BaseException as e:
        errors.put(f"write: {type(e).__name__}: {e}")


def _read_often(outdir, start, n, errors):
    start.wait()
    try:
        for _ in range(n):
            assert read_bags(outdir).meta["n_bags"] == 12
    except BaseException as e:
        errors.put(f"read: {type(e).__name__}: {e}")


def test_concurrent_writers_leave_one_whole_store(tmp_path):
    """Two processes rewrite one store at once while a third reads it (two runs in one
    directory with --nolock): no write or read fails, and the store reads back whole."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    out = tmp_path / "ds"
    write_bags(make(), out)
    start, errors = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=f, args=(out, start, 40, errors))
             for f in (_write_often, _write_often, _read_often)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == [] and [p.exitcode for p in procs] == [0, 0, 0], found
    r, b = read_bags(out), make()
    np.testing.assert_array_equal(r.instances, b.instances)
    np.testing.assert_array_equal(r.labels, b.labels)
    pd.testing.assert_frame_equal(r.edges, b.edges)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ds.lock", "ds"]   # no temp left


def test_write_frame_replaces_whole(tmp_path):
    """write_frame leaves the file or nothing: a failed write keeps the previous file."""
    from milbench.data.store import write_frame

    path = tmp_path / "f.parquet"
    write_frame(pd.DataFrame({"a": [1, 2]}), path)
    with pytest.raises(Exception):
        write_frame(pd.DataFrame({"a": [object()]}), path)      # not writable as Parquet
    pd.testing.assert_frame_equal(pd.read_parquet(path), pd.DataFrame({"a": [1, 2]}))
    assert [p.name for p in tmp_path.iterdir()] == ["f.parquet"]


def test_store_without_flock_still_writes_and_reads(tmp_path, monkeypatch):
    """A file system without flock (Lustre mounted without it: ENOLCK) writes and reads as
    before, the swap unguarded."""
    import errno

    from milbench.data import store

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(store.fcntl, "flock", no_locks)
    write_bags(make(), tmp_path / "ds")
    write_bags(make(), tmp_path / "ds")
    assert read_bags(tmp_path / "ds").meta["n_bags"] == 12
