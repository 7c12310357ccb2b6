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


def test_labels_pm1():
    y, classes = labels_to_01([-1, 1, 1])
    assert y.tolist() == [0, 1, 1] and classes.tolist() == [-1, 1]


def test_bags_container_rejects_empty_bag():
    with pytest.raises(BagError, match="no instances"):
        Bags(np.ones((2, 2)), [0, 2, 2], [0, 1], ["a", "b"])
