"""milbench.utils.lbfgsb: scipy's L-BFGS-B driven without minimize's wrapper, bit for bit."""

import numpy as np
import pytest
from scipy.optimize import minimize

from milbench.classifiers.milr import COMBINE, milr_loss_grad
from milbench.selectors.midr import _bag_sq_loss
from milbench.utils.lbfgsb import lbfgsb


def _same_as_minimize(fun, x0, maxiter, gtol, maxfun=15000):
    res = lbfgsb(fun, x0, maxiter, gtol, maxfun)
    ref = minimize(fun, x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": maxiter, "gtol": gtol, "maxfun": maxfun})
    np.testing.assert_array_equal(res.x, ref.x)
    assert (res.fun, res.nit, res.nfev, res.status, res.success) == \
        (ref.fun, ref.nit, ref.nfev, ref.status, ref.success)
    assert res.f0 == fun(x0)[0]
    return res


def test_midr_v_refit_iterates_equal_minimize():
    """MIDR's v-refit (a few capped iterations of the ridge bag loss)."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(120, 7))
    y = (np.arange(30) % 2).astype(float)
    off = np.arange(0, 121, 4)

    def fun(t):
        loss, g = _bag_sq_loss(Z @ t[:7] + t[7], off, y, 3.5)
        return loss + 0.05 * t[:7] @ t[:7], np.concatenate([Z.T @ g + 0.1 * t[:7], [g.sum()]])

    statuses = set()
    for maxiter in (1, 3, 10, 50):
        statuses.add(_same_as_minimize(fun, rng.normal(size=8) * 0.3, maxiter, 1e-8).status)
    assert statuses == {0, 1}     # converged within 50 iterations, capped at 1-10


@pytest.mark.parametrize("combine", COMBINE)
def test_milr_solves_equal_minimize(combine):
    """MILR's solve to tolerance, at its iteration cap and at its evaluation cap."""
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 8, 40)
    off = np.concatenate([[0], np.cumsum(sizes)])
    X = rng.normal(size=(off[-1], 5))
    y = (rng.random(40) < 0.5).astype(float)
    X[np.repeat(y, sizes) == 1, 0] += 1.0

    def fun(t):
        return milr_loss_grad(t, X, off, y, 3.0, combine, 3.5)

    x0 = np.zeros(6)
    assert _same_as_minimize(fun, x0, 1000, 1e-6).status == 0
    assert _same_as_minimize(fun, x0, 2, 1e-6).status == 1
    assert _same_as_minimize(fun, x0, 1000, 1e-6, maxfun=3).status == 1
