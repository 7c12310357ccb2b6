"""Per-bag segment reductions (milbench.utils.segments) against direct loops over the bags."""
import numpy as np
import pytest

from milbench.utils.segments import averaging_matrix, segment_arg, segment_argmax, segment_mean

OFF = np.array([0, 3, 4, 9, 10])          # bags of 3, 1, 5 and 1 instances


def loop_arg(V, off, fn, axis):
    red, arg = [], []
    for a, b in zip(off[:-1], off[1:]):
        seg = np.take(V, np.arange(a, b), axis=axis)
        red.append(np.min(seg, axis=axis) if fn is np.minimum else np.max(seg, axis=axis))
        pick = np.argmin(seg, axis=axis) if fn is np.minimum else np.argmax(seg, axis=axis)
        arg.append(a + pick)                     # argmin / argmax: the first of tied values
    return np.stack(red, axis=axis), np.stack(arg, axis=axis)


@pytest.mark.parametrize("ufunc", [np.minimum, np.maximum])
@pytest.mark.parametrize("axis", [0, 1])
def test_segment_arg_matches_a_loop_with_ties_and_one_instance_bags(ufunc, axis):
    rng = np.random.default_rng(0)
    V = rng.integers(0, 3, size=(10, 4)).astype(float)      # small integers: many ties
    V = V if axis == 0 else V.T.copy()
    red, arg = segment_arg(V, OFF, ufunc, axis=axis)
    ref_red, ref_arg = loop_arg(V, OFF, ufunc, axis)
    np.testing.assert_array_equal(red, ref_red)
    np.testing.assert_array_equal(arg, ref_arg)
    assert arg.dtype == np.int64


def test_segment_arg_one_dimensional():
    s = np.array([1.0, 5.0, 5.0, -2.0, 0.0, 7.0, 7.0, 3.0, 7.0, 4.0])
    red, arg = segment_arg(s, OFF, np.maximum)
    np.testing.assert_array_equal(red, [5.0, -2.0, 7.0, 4.0])
    np.testing.assert_array_equal(arg, [1, 3, 5, 9])          # first of the tied maxima
    red, arg = segment_arg(s, OFF, np.minimum)
    np.testing.assert_array_equal(red, [1.0, -2.0, 0.0, 4.0])
    np.testing.assert_array_equal(arg, [0, 3, 4, 9])


def test_segment_argmax_is_the_first_maximum_per_bag():
    rng = np.random.default_rng(1)
    s = rng.integers(0, 4, size=10).astype(float)
    ref = [a + int(np.argmax(s[a:b])) for a, b in zip(OFF[:-1], OFF[1:])]
    np.testing.assert_array_equal(segment_argmax(s, OFF), ref)
    np.testing.assert_array_equal(segment_argmax(np.zeros(10), OFF), OFF[:-1])   # all tied


def test_segment_mean_matches_a_loop():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(10, 3))
    ref = np.stack([X[a:b].mean(axis=0) for a, b in zip(OFF[:-1], OFF[1:])])
    np.testing.assert_allclose(segment_mean(X, OFF), ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(segment_mean(X, OFF)[[1, 3]], X[[3, 9]])    # one-instance bags


def test_averaging_matrix_averages_each_bag():
    W = averaging_matrix(OFF)
    ref = np.zeros((4, 10))
    for i, (a, b) in enumerate(zip(OFF[:-1], OFF[1:])):
        ref[i, a:b] = 1.0 / (b - a)
    np.testing.assert_array_equal(W.toarray(), ref)
    X = np.random.default_rng(3).normal(size=(10, 2))
    np.testing.assert_allclose(W @ X, segment_mean(X, OFF), rtol=1e-12, atol=1e-15)
