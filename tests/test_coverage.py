"""Bag coverage of selected features (cvfs-mil.txt Fig. 8)."""
import numpy as np
import pandas as pd
import pytest
from test_cvfs import two_view_bags

from milbench.data.bags import Bags
from milbench.data.store import write_bags
from milbench.preprocessing import BagScaler
from milbench.report.coverage import (
    bag_coverage,
    feature_names,
    top_feature_coverage,
    write_coverage,
)
from milbench.selectors.cvfs import CVFS
from milbench.selectors.pca import BagPCA


def hand_bags():
    """3 positive and 2 negative bags (sizes 3, 4, 6, 1, 2) over 3 features:
    f0 present in positives 0, 1, 2 and negative 3; f1 in negative 4 only; f2 nowhere."""
    B = [np.zeros((3, 3)), np.zeros((4, 3)), np.zeros((6, 3)), np.zeros((1, 3)), np.zeros((2, 3))]
    B[0][2, 0] = 0.5           # one instance of the bag is enough
    B[1][0, 0] = -1.0          # negative values count as present too
    B[2][5, 0] = 2.0
    B[3][0, 0] = 1.0
    B[4][1, 1] = 3.0
    return Bags.from_list(B, [1, 1, 1, 0, 0], views={"a": (0, 2), "b": (2, 3)},
                          meta={"feature_names": {"a": ["red", "blue"]}})


def test_bag_coverage_matches_hand_counts():
    t = bag_coverage(hand_bags())
    assert t["positive_bags"].tolist() == [3, 0, 0]
    assert t["negative_bags"].tolist() == [1, 1, 0]
    assert t["majority"].tolist() == ["positive", "negative", "none"]
    # f0: positive rate 3/3 over negative rate 1/2
    assert t.loc[0, "coverage_ratio"] == pytest.approx(2.0)
    # f1: negative rate 1/2 over a positive minority floored at one bag, 1/3
    assert t.loc[1, "coverage_ratio"] == pytest.approx(1.5)
    assert t["minority_zero"].tolist() == [False, True, False]
    assert np.isnan(t.loc[2, "coverage_ratio"])            # covers no bag at all
    assert t["view"].tolist() == ["a", "a", "b"]
    assert t["name"].tolist() == ["red", "blue", "0"]       # view b has no stored names


def test_balanced_classes_give_the_papers_count_ratio():
    bags, _ = two_view_bags(n_bags=40)
    t = bag_coverage(bags)
    big, small = (np.maximum(t.positive_bags, t.negative_bags),
                  np.maximum(np.minimum(t.positive_bags, t.negative_bags), 1))
    assert np.allclose(t.coverage_ratio, big / small)      # 20 + 20 bags: rates = counts
    assert (t.coverage_ratio >= 1).all()


def test_feature_names_fall_back_to_view_index():
    bags, _ = two_view_bags(d1=3, d2=2)
    assert feature_names(bags) == ["0", "1", "2", "0", "1"]


def test_top_features_come_from_the_informative_view():
    """Only view 2's first 4 features carry signal (raised in one instance of every positive
    bag), and they are the only sparse ones: CVFS ranks them first and they cover positives."""
    bags, _ = two_view_bags(n_bags=60, d1=20, d2=20, k=4)
    X = bags.instances.copy()
    X[:, 20:24] = np.where(X[:, 20:24] > 1.0, X[:, 20:24], 0.0)   # present only when raised
    bags = Bags(X, bags.offsets, bags.labels, bags.bag_ids, views=bags.views)
    t = top_feature_coverage(bags, CVFS(m=4), 4, BagScaler("minmax"))
    assert t["rank"].tolist() == [1, 2, 3, 4]
    assert sorted(t["feature"]) == [20, 21, 22, 23]
    assert (t["view"] == "v2").all() and (t["majority"] == "positive").all()
    assert (t["negative_bags"] == 0).all() and t["minority_zero"].all()


def test_projection_is_refused_with_a_clear_message():
    bags, _ = two_view_bags()
    with pytest.raises(ValueError, match="no support_"):
        top_feature_coverage(bags, BagPCA(dims=3), 3)


def test_write_coverage_writes_table_and_figure(tmp_path):
    bags, _ = two_view_bags(n_bags=30)
    write_bags(bags, tmp_path / "bags" / "toy")
    paths = write_coverage({"toy": tmp_path / "bags" / "toy"},
                           [{"name": "top5", "selector": {"name": "cvfs", "m": 5}}],
                           "minmax", tmp_path / "coverage", experiment="exp")
    names = sorted(p.name for p in paths)
    assert names == ["top5_toy.csv", "top5_toy.png", "top5_toy.svg"]
    t = pd.read_csv(tmp_path / "coverage" / "top5_toy.csv")
    assert len(t) == 5 and t["coverage_ratio"].ge(1).all()


def test_a_grid_in_a_coverage_entry_is_named(tmp_path):
    bags, _ = two_view_bags(n_bags=20)
    write_bags(bags, tmp_path / "toy")
    with pytest.raises(ValueError, match=r"'top'.*\['m'\]"):
        write_coverage({"toy": tmp_path / "toy"},
                       [{"name": "top", "selector": {"name": "cvfs", "m": [5, 10]}}],
                       "minmax", tmp_path / "out")


def test_sampling_selector_is_seeded_so_tables_repeat(tmp_path):
    """ReliefF-MI samples m of the bags; with no random_state in the entry it gets the
    experiment's seed, so two runs write the same table."""
    bags, _ = two_view_bags(n_bags=40)
    write_bags(bags, tmp_path / "toy")
    entry = [{"name": "r", "selector": {"name": "relieff-mi", "m": 5, "k": 3}, "top": 10}]
    tables = []
    for run in ("a", "b"):
        write_coverage({"toy": tmp_path / "toy"}, entry, "minmax", tmp_path / run, seed=3)
        tables.append((tmp_path / run / "r_toy.csv").read_text())
    assert tables[0] == tables[1]
