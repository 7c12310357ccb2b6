"""scipy's L-BFGS-B without ``scipy.optimize.minimize``'s per-call wrapper.

``minimize(fun, x0, jac=True, method="L-BFGS-B")`` builds a ScalarFunction and an
OptimizeResult around scipy's Fortran/C routine ``setulb`` and evaluates f(x0) once more than the
routine asks for.  On the small problems MIDR's v-refit and MILR solve thousands of times in an
inner CV the wrapper costs about as much as the objective (docs/performance.md).  :func:`lbfgsb`
drives ``setulb`` with the same reverse-communication loop as scipy's ``_minimize_lbfgsb`` (its
defaults: 10 corrections, 20 line-search steps, ``ftol`` 2.2e-9, no bounds), so the iterates are
bit-identical (tests), and it stops where scipy stops (``maxiter`` iterations, more than
``maxfun`` evaluations, convergence, or an abnormal line search).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

try:    # scipy's private driver (scipy 1.17, pinned); tests check lbfgsb against minimize
    from scipy.optimize._lbfgsb import setulb as _setulb
except ImportError:  # pragma: no cover - another scipy: lbfgsb falls back to minimize
    _setulb = None

_CONVERGED, _NEW_X, _EVALUATE, _STOP = 4, 1, 3, 5


class LBFGSBResult(NamedTuple):
    """What :func:`lbfgsb` found: ``x``, ``fun`` = f(x), ``f0`` = f(x0), ``nit`` iterations,
    ``nfev`` evaluations; ``status`` 0 converged, 1 stopped at ``maxiter`` / ``maxfun``, 2 an
    abnormal stop (scipy's ``OptimizeResult.status``); ``success`` = status 0."""
    x: np.ndarray
    fun: float
    f0: float
    nit: int
    nfev: int
    status: int

    @property
    def success(self):
        return self.status == 0


def lbfgsb(fun, x0, maxiter, gtol, maxfun=15000):
    """``minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": maxiter, "gtol":
    gtol, "maxfun": maxfun})``, bit for bit, as an :class:`LBFGSBResult`.  Falls back to
    ``minimize`` where scipy's private ``setulb`` is missing or has another signature."""
    x = np.array(x0, dtype=np.float64).ravel()
    n, m, maxls = x.size, 10, 20
    if _setulb is None:
        return _via_minimize(fun, x, maxiter, gtol, maxfun)
    factr = 2.2204460492503131e-09 / np.finfo(float).eps
    z = np.zeros(n, np.float64)
    nbd = np.zeros(n, np.int32)
    f, g = np.array(0.0), np.zeros(n)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m)
    iwa = np.zeros(3 * n, np.int32)
    task, ln_task = np.zeros(2, np.int32), np.zeros(2, np.int32)
    lsave, isave, dsave = np.zeros(4, np.int32), np.zeros(44, np.int32), np.zeros(29)
    f0, nit, nfev = None, 0, 0
    while True:
        try:
            _setulb(m, x, z, z, nbd, f, g, factr, gtol, wa, iwa, task, lsave, isave, dsave,
                    maxls, ln_task)
        except TypeError:   # pragma: no cover - setulb has another signature (another scipy)
            if f0 is not None:
                raise
            return _via_minimize(fun, np.array(x0, dtype=np.float64).ravel(), maxiter, gtol,
                                 maxfun)
        if task[0] == _EVALUATE:
            f, g = fun(x.copy())
            g = np.asarray(g, dtype=np.float64)
            nfev += 1
            if f0 is None:
                f0 = f
        elif task[0] == _NEW_X:
            nit += 1
            if nit >= maxiter:
                task[0], task[1] = _STOP, 504
            elif nfev > maxfun:
                task[0], task[1] = _STOP, 502
        else:
            break
    status = 0 if task[0] == _CONVERGED else 1 if nfev > maxfun or nit >= maxiter else 2
    return LBFGSBResult(x, float(f), float(f0), nit, nfev, status)


def _via_minimize(fun, x, maxiter, gtol, maxfun):
    """:func:`lbfgsb` through ``scipy.optimize.minimize`` (where scipy's driver differs)."""
    f0 = fun(x.copy())[0]
    res = minimize(fun, x, jac=True, method="L-BFGS-B",
                   options={"maxiter": maxiter, "gtol": gtol, "maxfun": maxfun})
    return LBFGSBResult(res.x, float(res.fun), float(f0), int(res.nit), int(res.nfev),
                        int(res.status))
