"""The linear soft-margin SVM with an unregularised bias, solved exactly by a primal-dual
interior point method (Ferris & Munson, "Interior-point methods for massive support vector
machines", SIAM J. Optim. 13(3), 2003, §2-3): the problem libsvm's SVC(kernel="linear") solves,

  min_{w,b,ξ} ½‖w‖² + C Σ_i ξ_i   s.t.  y_i (⟨w, x_i⟩ + b) ≥ 1 − ξ_i,  ξ_i ≥ 0,

with its dual  max_α Σ α_i − ½‖Σ α_i y_i x_i‖²  s.t.  Σ α_i y_i = 0,  0 ≤ α_i ≤ C.

Each Newton step of the KKT system reduces to one (d+1) × (d+1) positive definite system in
(Δw, Δb), Z'Θ⁻¹Z + diag(1, …, 1, 0) with Z = [X, 1] and Θ a positive diagonal, so an iteration
costs O(n d²) and the solve does not depend on how ill-conditioned the dual is: SMO (libsvm) can
take millions of pair updates at a large C on many instances with few features, where this
takes a few dozen iterations (Mehrotra's predictor-corrector).  It stops when the primal and
dual residuals and the duality gap are below ``tol`` (relative to the objective), so its
objective is the optimum's to that precision, not to SMO's KKT tolerance.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lu_factor, lu_solve
from sklearn.exceptions import ConvergenceWarning

STEP = 0.995          # fraction of the step to the boundary of the positive orthant


class LinearSVMIPM:
    """Binary linear SVM (labels 0 / 1; class 1 is positive) fitted by the interior point
    method above.  After ``fit``: ``coef_`` (w), ``intercept_`` ([b]), ``alpha_`` (the dual
    variables), ``support_`` (rows with α_i > 1e-8 C), ``dual_coef_`` ([y_i α_i] over
    ``support_``, scikit-learn's SVC convention), ``n_iter_`` ([Newton iterations]) and
    ``converged_`` (False when ``max_iter`` iterations ran out first: then a
    ConvergenceWarning, and (w, b) is the last iterate).  ``decision_function(X)`` = X w + b.
    """

    def __init__(self, C=1.0, tol=1e-10, max_iter=200):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, X, y):
        y = np.where(np.asarray(y) == 1, 1.0, -1.0)
        if np.all(y == y[0]):
            raise ValueError("LinearSVMIPM needs instances of both classes")
        n, d = X.shape
        C = float(self.C)
        Z = sp.hstack([X, np.ones((n, 1))], format="csr") if sp.issparse(X) \
            else np.hstack([X, np.ones((n, 1))])
        E = np.ones(d + 1)
        E[d] = 0.0
        v = np.zeros(d + 1)                               # (w, b)
        xi, r = np.ones(n), np.ones(n)                    # slacks of ξ ≥ 0 and of the margins
        alpha, mu = np.full(n, C / 2), np.full(n, C / 2)  # their multipliers
        # the size of the terms the dual residual w − Σ α_i y_i x_i sums (α_i ≤ C): the
        # precision it can reach is relative to that, not to ‖w‖
        scale = 1.0 + C * np.linalg.norm(np.asarray(abs(Z).sum(axis=0)).ravel())
        converged = False
        for it in range(1, self.max_iter + 1):
            f = Z @ v
            R_v = E * v - Z.T @ (y * alpha)               # w − X'(yα);  −y'α (the bias row)
            R_xi = C - alpha - mu
            R_r = y * f + xi - 1.0 - r
            gap = alpha @ r + mu @ xi
            objective = 0.5 * v[:d] @ v[:d] + C * np.maximum(0.0, 1.0 - y * f).sum()
            if (np.linalg.norm(R_v) <= self.tol * scale and np.abs(R_xi).max() <= self.tol * C
                    and np.abs(R_r).max() <= self.tol * (1 + np.abs(f).max())
                    and gap <= self.tol * (1 + objective)):
                converged = True
                break
            tau = gap / (2 * n)
            theta = xi / mu + r / alpha
            M = (Z.T @ sp.diags(1 / theta) @ Z).toarray() if sp.issparse(Z) \
                else Z.T @ (Z / theta[:, None])
            M += np.diag(E)
            solve = _spd_solver(M)

            def direction(rho_a, rho_m):
                g = -R_r - (rho_m - xi * R_xi) / mu + rho_a / alpha
                dv = solve(-R_v + Z.T @ (y * g / theta))
                da = (g - y * (Z @ dv)) / theta
                dmu = R_xi - da
                return dv, da, dmu, (rho_m - xi * dmu) / mu, (rho_a - r * da) / alpha

            aff = direction(-alpha * r, -mu * xi)
            s_aff = _step((alpha, mu, xi, r), aff[1:])
            tau_aff = ((alpha + s_aff * aff[1]) @ (r + s_aff * aff[4])
                       + (mu + s_aff * aff[2]) @ (xi + s_aff * aff[3])) / (2 * n)
            sigma_tau = (tau_aff / tau) ** 3 * tau
            dv, da, dmu, dxi, dr = direction(sigma_tau - alpha * r - aff[1] * aff[4],
                                             sigma_tau - mu * xi - aff[2] * aff[3])
            s = STEP * _step((alpha, mu, xi, r), (da, dmu, dxi, dr))
            v = v + s * dv
            alpha, mu, xi, r = alpha + s * da, mu + s * dmu, xi + s * dxi, r + s * dr
        self.coef_ = v[:d]
        self.intercept_ = np.array([v[d]])
        self.alpha_ = alpha
        self.support_ = np.flatnonzero(alpha > 1e-8 * C)
        self.dual_coef_ = (y * alpha)[self.support_][None, :]
        self.n_iter_ = np.array([it])
        self.converged_ = converged
        if not converged:
            warnings.warn(f"LinearSVMIPM stopped at max_iter={self.max_iter} Newton iterations "
                          f"short of tol={self.tol:g}; (w, b) is the last iterate",
                          ConvergenceWarning, stacklevel=2)
        return self

    def decision_function(self, X):
        return np.asarray(X @ self.coef_).ravel() + self.intercept_[0]


def _spd_solver(M):
    """x ↦ M⁻¹x for the Newton system's positive definite M, by Cholesky after a symmetric
    diagonal (Jacobi) scaling; LU where round-off near the optimum, with Θ spanning many
    orders of magnitude, has cost the scaled matrix its numerical definiteness."""
    s = 1 / np.sqrt(np.diag(M))
    Ms = M * s[:, None] * s[None, :]
    try:
        f = cho_factor(Ms)
        return lambda x: s * cho_solve(f, s * x)
    except LinAlgError:
        f = lu_factor(Ms)
        return lambda x: s * lu_solve(f, s * x)


def _step(point, direction):
    """The largest step in [0, 1] that keeps every vector of ``point`` non-negative."""
    s = 1.0
    for p, dp in zip(point, direction):
        neg = dp < 0
        if neg.any():
            s = min(s, float((-p[neg] / dp[neg]).min()))
    return s


def primal_objective(X, y01, C, w, b):
    """½‖w‖² + C Σ max(0, 1 − y_i(⟨w, x_i⟩ + b)) for labels 0 / 1 (class 1 positive)."""
    y = np.where(np.asarray(y01) == 1, 1.0, -1.0)
    f = np.asarray(X @ w).ravel() + b
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1 - y * f).sum())
