"""Exhaustive threshold search on bag scores (milbench.classifiers._thresholds), against brute
force over every cut."""
import numpy as np
import pytest

from milbench.classifiers._thresholds import best_thresholds


def test_best_thresholds_matches_brute_force():
    rng = np.random.default_rng(5)
    scores = np.round(rng.normal(size=(4, 15)), 1)       # rounding creates ties
    y = rng.integers(0, 2, 15)
    w = rng.uniform(0.5, 2, 15)
    acc, thr = best_thresholds(scores, y, w)
    for r in range(4):
        cands = np.unique(scores[r])
        cuts = np.r_[cands[0] - 1, (cands[:-1] + cands[1:]) / 2, cands[-1] + 1]
        accs = [np.sum(w * ((scores[r] > c) == (y == 1))) / w.sum() for c in cuts]
        assert acc[r] == pytest.approx(max(accs))
        assert np.sum(w * ((scores[r] > thr[r]) == (y == 1))) / w.sum() == pytest.approx(acc[r])


def test_ties_take_the_lowest_or_the_preferred_threshold():
    scores, y = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 1, 0, 1])
    acc, thr = best_thresholds(scores, y)                   # cuts −1, 0.5, 1.5, 2.5, 4
    assert acc[0] == 0.75 and thr[0] == 0.5                 # 0.5 and 2.5 tie: the lowest
    assert best_thresholds(scores, y, prefer=2.0)[1][0] == 2.5
    one = best_thresholds(np.ones(3), np.array([1, 1, 0]), ends=False)
    assert one[0][0] == -np.inf                              # one distinct score, no inner cut
    np.testing.assert_array_equal(best_thresholds(np.ones(3), np.array([1, 1, 0]))[1], [0.0])
