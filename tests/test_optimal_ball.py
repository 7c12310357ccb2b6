"""MI optimal ball: exhaustive search checked against a plain-loop oracle (Weka's procedure)."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate

from milbench.classifiers.optimal_ball import MIOptimalBall
from milbench.data.bags import BagError

from conftest import poisoned_bags


def weka_optimal_ball(bags, y, w=None):
    """Weka MIOptimalBall.findRadius as plain loops (already-preprocessed data)."""
    w = np.ones(len(bags)) if w is None else w
    best = (-1.0, -1.0, None)
    for i, b in enumerate(bags):
        if y[i] != 1:
            continue
        for c in b:
            dist = np.array([np.sqrt(((bb - c) ** 2).sum(1)).min() for bb in bags])
            s = np.sort(dist)
            for k in range(1, len(s)):
                r = s[k] - (s[k] - s[k - 1]) / 2
                correct = sum(w[n] for n in range(len(bags))
                              if (dist[n] <= r and y[n] == 1) or (dist[n] > r and y[n] == 0))
                if correct > best[0] + 1e-12 or (abs(correct - best[0]) <= 1e-12 and r > best[1]):
                    best = (correct, r, c)
    return best


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_weka_loop_oracle(seed):
    rng = np.random.default_rng(seed)
    bags = [np.round(rng.uniform(size=(rng.integers(1, 4), 3)), 1) for _ in range(14)]  # ties
    y = np.array([1, 0] * 7)
    w = rng.uniform(0.5, 2.0, 14)
    m = MIOptimalBall(preprocess="none").fit(bags, y, sample_weight=w)
    correct, radius, centre = weka_optimal_ball(bags, y, w)
    assert m.diagnostics_["train_accuracy"] == pytest.approx(correct / w.sum())
    assert m.radius_ == pytest.approx(radius)
    # several centres can tie on (accuracy, radius); the chosen one must achieve them
    pred = m.predict(bags)
    assert np.sum(w * (pred == y)) == pytest.approx(correct)


def test_poisoned_witness_found_where_mean_pooling_fails():
    """The ball has no feature weights, so it gets a stronger witness (a = 4) and one noise
    dimension; 4-fold CV accuracy >= 0.9 while bag-mean logistic regression is at chance."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    bags, y = poisoned_bags(n_bags=48, a=4.0, d=3)
    cv = StratifiedKFold(4)
    assert cross_val_score(MIOptimalBall(), bags, y, cv=cv).mean() >= 0.9
    means = np.array([b.mean(0) for b in bags])
    assert cross_val_score(LogisticRegression(), means, y, cv=cv).mean() <= 0.7
    m = MIOptimalBall().fit(bags, y)                 # the centre is a witness or its companion
    c = m.center_ * m.span_ + m.shift_
    assert np.allclose(np.abs(c[:2]), 4.0, atol=1.0) and np.sign(c[0]) == np.sign(c[1])


def test_integer_weights_equal_duplicated_bags():
    bags, y = poisoned_bags(n_bags=16, seed=2)
    w = np.array([1, 2, 3, 1] * 4, float)
    a = MIOptimalBall().fit(bags, y, sample_weight=w)
    dup = [b for b, k in zip(bags, w) for _ in range(int(k))]
    b = MIOptimalBall().fit(dup, np.repeat(y, w.astype(int)))
    assert a.radius_ == pytest.approx(b.radius_)
    np.testing.assert_allclose(a.center_, b.center_)
    np.testing.assert_allclose(a.decision_function(bags), b.decision_function(bags))


def test_instance_scores_and_decision():
    bags, y = poisoned_bags(n_bags=12)
    m = MIOptimalBall().fit(bags, y)
    inst = m.decision_instances(bags)
    off = np.r_[0, np.cumsum([len(b) for b in bags])]
    np.testing.assert_allclose(np.maximum.reduceat(inst, off[:-1]), m.decision_function(bags))
    assert ((m.decision_function(bags) > 0) == (m.predict(bags) == 1)).all()


def test_errors_and_sklearn_contract():
    bags, y = poisoned_bags(n_bags=24)
    with pytest.raises(BagError, match="single class"):
        MIOptimalBall().fit(bags, np.zeros(len(bags), int))
    with pytest.raises(BagError, match="no instances"):
        MIOptimalBall().fit(bags[:-1] + [np.zeros((0, 4))], y)
    with pytest.raises(ValueError, match="preprocess"):
        MIOptimalBall(preprocess="bogus").fit(bags, y)
    assert clone(MIOptimalBall(max_centres=5)).get_params()["max_centres"] == 5
    gs = GridSearchCV(MIOptimalBall(), {"preprocess": ["normalize", "standardize"]},
                      cv=StratifiedKFold(3)).fit(bags, y)
    assert gs.best_score_ >= 0.8
    r = cross_validate(MIOptimalBall(max_centres=20, random_state=0), bags, y,
                       cv=StratifiedKFold(3), scoring="roc_auc")
    assert r["test_score"].mean() >= 0.8
    a = MIOptimalBall(max_centres=10, random_state=1).fit(bags, y)
    b = MIOptimalBall(max_centres=10, random_state=1).fit(bags, y)
    np.testing.assert_array_equal(a.center_, b.center_)
