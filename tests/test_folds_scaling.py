import numpy as np
import pytest

from milbench.data.bags import BagError, Bags
from milbench.data.folds import fold_keys, make_folds, split
from milbench.preprocessing import BagScaler

from conftest import toy_bags

IDS = np.array([f"b{i}" for i in range(40)])
Y = np.array([1] * 14 + [0] * 26)


def test_kfold_stratified_disjoint_covering():
    p = {"kind": "kfold", "folds": 5, "repeats": 3, "seed": 7}
    f = make_folds(IDS, Y, p)
    assert sorted(set(zip(f.repeat, f.fold))) == fold_keys(p)
    for r in range(3):
        tests = [set(f[(f.repeat == r) & (f.fold == k) & (f.role == "test")].bag_id) for k in range(5)]
        assert set().union(*tests) == set(IDS)                       # covering
        assert sum(len(t) for t in tests) == len(IDS)                # disjoint
        for t in tests:                                              # stratified
            pos = sum(Y[int(b[1:])] for b in t)
            assert pos in (2, 3)
    assert not f[(f.repeat == 0)].equals(f[(f.repeat == 1)])          # repeats reshuffle
    assert make_folds(IDS, Y, p).equals(f)                           # deterministic


def test_holdout_and_ratio():
    h = make_folds(IDS, Y, {"kind": "holdout", "train": 0.8, "repeats": 4, "seed": 0})
    for r in range(4):
        tr = h[(h.repeat == r) & (h.role == "train")]
        assert len(tr) == 32 and sum(Y[int(b[1:])] for b in tr.bag_id) == 11
    q = make_folds(IDS, Y, {"kind": "ratio", "train_ratios": [0.01, 0.5], "repeats": 2})
    tiny = q[(q.fold == 0) & (q.repeat == 0) & (q.role == "train")]
    assert set(Y[[int(b[1:]) for b in tiny.bag_id]]) == {0, 1}       # both classes kept
    assert q[q.fold == 1].train_ratio.eq(0.5).all()


def test_fold_errors():
    with pytest.raises(BagError, match="at least 2 bags of each class"):
        make_folds(IDS[:5], [1, 0, 0, 0, 0], {"kind": "kfold", "folds": 2})
    with pytest.raises(BagError, match="10-fold CV needs"):
        make_folds(IDS, Y[::-1] * 0 + (np.arange(40) < 5), {"kind": "kfold", "folds": 10})
    f = make_folds(IDS, Y, {"kind": "kfold", "folds": 2})
    with pytest.raises(BagError, match="does not cover"):
        split(f, 0, 0, np.append(IDS, "new"))


@pytest.mark.parametrize("kind", ["minmax", "zscore"])
def test_scaler_uses_training_instances_only(kind):
    bags, y = toy_bags(20, d=3)
    b = Bags.from_list(bags, y)
    train, test = b.subset(np.arange(10)), b.subset(np.arange(10, 20))
    test.instances[:] *= 100  # wildly different test data must not change the fit
    s = BagScaler(kind).fit(train, train.labels)
    ref = BagScaler(kind).fit(train.as_list(), train.labels)
    np.testing.assert_allclose(s.shift_, ref.shift_)
    Xt = s.transform(train).instances
    if kind == "minmax":
        assert Xt.min() == pytest.approx(0) and Xt.max() == pytest.approx(1)
    else:
        np.testing.assert_allclose(Xt.mean(0), 0, atol=1e-6)
    assert np.abs(s.transform(test).instances).max() > 10


def test_scaler_constant_column():
    s = BagScaler("minmax").fit([np.ones((3, 2)), np.ones((2, 2))], [0, 1])
    assert np.isfinite(s.transform([np.ones((1, 2))])[0]).all()


def test_scale_none_and_no_selection_pass_bags_through_bit_for_bit():
    """``scale: none`` and selector ``none`` return a Bags container as it is: the same
    instances, bit for bit, as the arithmetic path ((x − 0) / 1, all columns), uncopied."""
    from milbench.selectors.identity import NoSelection

    bags = Bags.from_list(*toy_bags(n_bags=12, seed=3))
    bags = bags.with_instances(np.where(np.arange(bags.n_features) % 3 == 0, -0.0,
                                        bags.instances * 1e-30))   # −0 and tiny values survive
    for t in (BagScaler("none"), NoSelection()):
        t.fit(bags, bags.labels)
        out = t.transform(bags)
        arith = bags.with_instances(t._transform_instances(bags.instances.astype(float)))
        assert out is bags
        assert arith.instances.dtype == out.instances.dtype
        assert np.array_equal(arith.instances.view(np.uint32), out.instances.view(np.uint32))
        assert [a.tolist() for a in t.transform(bags.as_list())] == \
            [a.tolist() for a in arith.as_list()]                  # a list: the float64 path
        with pytest.raises(ValueError, match="features"):
            t.transform(bags.with_instances(bags.instances[:, :2]))
