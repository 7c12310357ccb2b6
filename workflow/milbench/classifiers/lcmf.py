"""LC-MF: joint link-content matrix factorisation + linear SVM (Zhu, Yu, Chi & Gong 2007, SIGIR)
[lcmf], the non-MIL baseline of Zhang et al. (2011), NIPS, §3.1.

Every bag (web page) becomes one content vector c_i — the mean of its instances, L2-normalised
(Zhang et al. (2011), §3.2: "the instances which are the averages of the instances in each
bag") — and the
bag-level graph gives the adjacency matrix A (A_pq = edge weight).  With Z (pages × k latent
factors), U (k × k) and V (terms × k), LC-MF minimises

    J = ‖A − Z U Zᵀ‖²_F + α ‖C − Z Vᵀ‖²_F + γ ‖U‖²_F + β (‖V‖²_F + ‖Z‖²_F)

(Zhu et al. eq. 5; their link model Z U Zᵀ for directed graphs, shared factors Z).  The
gradient is analytic and uses only k × k products with A kept sparse
(‖ZUZᵀ‖² = tr(S U S Uᵀ), S = ZᵀZ); minimised with L-BFGS (the paper used conjugate gradient).
A linear SVM (``LinearSVC(C=svm_C)``, hinge loss) is then trained on the training pages'
factors, standardised on the training rows.  k = ``n_factors`` = 50 as in both papers.

Inductive vs transductive (stated, not hidden): the factorisation is unsupervised, and the
paper factorises all pages at once.  ``fit(X, y, unlabeled=U)`` does that (unlabeled bags join
A and C; their factors are stored by bag id and used by ``decision_function`` when it is given
those bag ids).  Without ``unlabeled`` only the training bags are factorised and a new page is
*folded in*: z = argmin α‖c − Vz‖² + β‖z‖² (+ ‖a_out − Z Uᵀ z‖² + ‖a_in − Z U z‖² when the
container given to ``decision_function`` has edges to training bag ids).

The factorisation does not depend on ``svm_C``: while reuse is on (:mod:`milbench.utils.cache`:
the workflow's cells), each distinct factorisation (the same A, C, k, parameters and integer
seed) is computed once per process (:class:`FactorCache`), so an inner CV over ``svm_C`` does
not factorise once per C (the same models, tests).  The pages are factorised in bag-id order
(the seeded start is drawn row by row), so a factorisation depends on the set of pages only,
not on which of them are labelled: in the transductive setting every inner fold and the refit
of a cell factorise the same pages, once, and so do the cells of one seed that a process runs
(in the fit's own order, the labelled pages first, a cell would factorise once per inner fold
and again for the refit).
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from milbench.base import (
    COUNT,
    NON_NEGATIVE,
    POSITIVE,
    MILClassifier,
    lbfgs_status,
    validate_params,
    warn_cap,
)
from milbench.data.bags import Bags, check_bags
from milbench.utils.cache import LRUCache, ReusesFits, fit_key
from milbench.utils.hashing import array_digest
from milbench.utils.segments import segment_mean


def lcmf_objective(theta, A, Cm, k, alpha, gamma, beta, A_sq=None, C_sq=None):
    """J and its gradient for θ = (Z, U, V) flattened; A sparse (n × n), Cm dense (n × m)."""
    n, m = Cm.shape
    Z = theta[:n * k].reshape(n, k)
    U = theta[n * k:n * k + k * k].reshape(k, k)
    V = theta[n * k + k * k:].reshape(m, k)
    A_sq = A.multiply(A).sum() if A_sq is None else A_sq
    C_sq = float(np.sum(Cm * Cm)) if C_sq is None else C_sq
    S = Z.T @ Z
    AZ = A @ Z                       # n × k
    ATZ = A.T @ Z
    ZtAZ = Z.T @ AZ                  # k × k
    link = A_sq - 2 * np.sum(ZtAZ * U) + np.sum((S @ U @ S) * U)
    CV = Cm @ V                      # n × k
    VtV = V.T @ V
    content = C_sq - 2 * np.sum(Z * CV) + np.sum(S * VtV)
    J = link + alpha * content + gamma * np.sum(U * U) + beta * (np.sum(V * V) + np.sum(Z * Z))
    GS = U @ S @ U.T + U.T @ S @ U
    gZ = -2 * (AZ @ U.T + ATZ @ U) + 2 * Z @ GS + alpha * (-2 * CV + 2 * Z @ VtV) + 2 * beta * Z
    gU = -2 * ZtAZ + 2 * S @ U @ S + 2 * gamma * U
    gV = alpha * (-2 * Cm.T @ Z + 2 * V @ S) + 2 * beta * V
    return float(J), np.concatenate([gZ.ravel(), gU.ravel(), gV.ravel()])


def factorise(A, Cm, k=50, alpha=1.0, gamma=0.1, beta=0.1, max_iter=300, tol=1e-6,
              random_state=None):
    """(Z, U, V, scipy result) minimising the LC-MF objective from a seeded small random start."""
    rng = np.random.default_rng(random_state)
    n, m = Cm.shape
    theta0 = 0.1 * rng.standard_normal(n * k + k * k + m * k)
    A = sp.csr_matrix(A, dtype=np.float64)
    A_sq = float(A.multiply(A).sum())
    C_sq = float(np.sum(Cm * Cm))
    res = minimize(lcmf_objective, theta0, args=(A, Cm, k, alpha, gamma, beta, A_sq, C_sq),
                   jac=True, method="L-BFGS-B",
                   options={"maxiter": int(max_iter), "ftol": tol * 1e-3, "gtol": 1e-8})
    th = res.x
    Z = th[:n * k].reshape(n, k)
    U = th[n * k:n * k + k * k].reshape(k, k)
    V = th[n * k + k * k:].reshape(m, k)
    return Z, U, V, res


class FactorCache(LRUCache):
    """Factorisations of this process, keyed on the adjacency's and content matrix's bytes
    (sha1), k and the parameters but ``LCMF.cache_ignores``
    (:func:`~milbench.utils.cache.fit_key`); only fits seeded by an integer are kept (another
    seed draws a new start each time).  Every fit of a transductive cell, each C of each inner
    fold and the refit, hands LC-MF the same pages, and so do the cells of one seed: the runner
    keeps this cache from cell to cell (``spans_cells``).  A hit returns the (Z, U, V, result)
    a fresh factorisation computes (tests).  64 MiB: θ is (n + m)·k + k² floats, 1.9 MB for
    WebKB faculty."""

    def __init__(self, max_bytes=64 * 2**20):
        super().__init__(max_bytes, sizeof=lambda f: f[3].x.nbytes + 200, spans_cells=True)

    def prepare(self, factors):
        for a in factors[:3] + (factors[3].x,):
            a.flags.writeable = False
        return factors


FACTOR_CACHE = FactorCache()


def _page_vectors(inst, offsets):
    """Mean instance of every bag, L2-normalised (zero rows stay zero)."""
    M = segment_mean(np.asarray(inst, dtype=np.float64), offsets)
    nrm = np.linalg.norm(M, axis=1, keepdims=True)
    return M / np.where(nrm > 0, nrm, 1.0)


def _page_order(ids):
    """The order the pages are factorised in: by bag id, so that the factorisation (its seeded
    start is drawn row by row) depends on the set of pages only, not on which of them are
    labelled.  A page without an id (a list of arrays) counts by its position as
    ``Bags.from_list`` names it ("0", "1", ...), so a list and its Bags fit alike."""
    keys = [str(i) if b is None else b for i, b in enumerate(ids)]
    return np.argsort(np.asarray(keys, dtype=str), kind="stable")


def _adjacency(containers, ids_index, n):
    """Sparse n × n adjacency from the bag-level edges of the containers (ids -> rows)."""
    rows, cols, vals = [], [], []
    for c in containers:
        e = getattr(c, "edges", None)
        if e is None or len(e) == 0:
            continue
        e = e[e["level"] == "bag"]
        s = np.fromiter((ids_index.get(v, -1) for v in e["src"].astype(str)), np.int64, len(e))
        t = np.fromiter((ids_index.get(v, -1) for v in e["dst"].astype(str)), np.int64, len(e))
        ok = (s >= 0) & (t >= 0) & (s != t)
        rows.append(s[ok])
        cols.append(t[ok])
        vals.append(e["weight"].to_numpy(float)[ok])
    if not rows:
        return sp.csr_matrix((n, n))
    r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    _, first = np.unique(np.stack([r, c], 1), axis=0, return_index=True)   # an edge listed
    first = np.sort(first)                                                  # twice counts once
    return sp.csr_matrix((v[first], (r[first], c[first])), shape=(n, n))


class LCMF(ReusesFits, MILClassifier):
    """Link-content MF (50 factors) + linear SVM on the factors (Zhu et al. 2007).

    Parameters: n_factors (k), alpha (content weight α), gamma (‖U‖² weight), beta (‖V‖², ‖Z‖²
    weight), svm_C (LinearSVC C), max_iter (L-BFGS iterations), random_state (start).
    ``diagnostics_["converged"]`` = 1 when the factorisation's L-BFGS-B met its tolerance and
    the LinearSVC stopped before its own iteration cap; 0 when L-BFGS-B stopped at ``max_iter``
    (then a ConvergenceWarning), on a failed line search, or the LinearSVC hit its cap
    (scikit-learn warns); ``n_iter`` = L-BFGS-B iterations.
    """

    # FACTOR_CACHE's key: every parameter but these (milbench.utils.cache.ReusesFits)
    cache_ignores = {"svm_C": "the SVM is trained on the factors after the factorisation"}

    _parameter_constraints = {
        "n_factors": COUNT,
        "alpha": NON_NEGATIVE,
        "gamma": NON_NEGATIVE,
        "beta": NON_NEGATIVE,
        "svm_C": POSITIVE,
        "max_iter": COUNT,
        "random_state": ["random_state"],
    }

    def __init__(self, n_factors=50, alpha=1.0, gamma=0.1, beta=0.1, svm_C=1.0, max_iter=300,
                 random_state=None):
        self.n_factors = n_factors
        self.alpha = alpha
        self.gamma = gamma
        self.beta = beta
        self.svm_C = svm_C
        self.max_iter = max_iter
        self.random_state = random_state

    @staticmethod
    def _unpack(X, y=None):
        """(instances, offsets, bag ids, y01, classes): :func:`check_bags`'s float64 stacked
        input plus the ids the graph is keyed by (None for the bags of a list)."""
        inst, off, y01, classes = check_bags(X, y)
        ids = X.bag_ids.tolist() if isinstance(X, Bags) else [None] * (len(off) - 1)
        return inst, off, ids, y01, classes

    def fit(self, X, y, unlabeled=None):
        """Factorise the training bags (plus ``unlabeled`` ones, transductive) and fit the SVM."""
        validate_params(self)
        inst, off, ids, y01, classes = self._unpack(X, y)
        self.classes_ = classes
        self.n_features_in_ = inst.shape[1]
        Cm = _page_vectors(inst, off)
        containers = [X]
        all_ids = list(ids)
        if unlabeled is not None:
            u_inst, u_off, u_ids, _, _ = self._unpack(unlabeled)
            Cm = np.vstack([Cm, _page_vectors(u_inst, u_off)])
            containers.append(unlabeled)
            all_ids += u_ids
        index = {b: i for i, b in enumerate(all_ids) if b is not None}
        n = len(all_ids)
        order = _page_order(all_ids)
        A = _adjacency(containers, index, n)[order][:, order]
        A.sort_indices()                # the same matrix, bit for bit, whatever the edges' order
        Cm = Cm[order]
        k = int(min(self.n_factors, n, Cm.shape[1]))
        args = dict(k=k, alpha=self.alpha, gamma=self.gamma, beta=self.beta,
                    max_iter=self.max_iter, random_state=self.random_state)
        key = fit_key(self, array_digest(A.data, A.indices, A.indptr, Cm), A.shape, k) \
            if FACTOR_CACHE.active and isinstance(self.random_state, numbers.Integral) else None
        Zc, U, V, res = FACTOR_CACHE.get(key, lambda: factorise(A, Cm, **args))
        Z = np.empty_like(Zc)
        Z[order] = Zc
        self.U_, self.V_ = U, V
        n_lab = len(ids)
        self.Z_train_ = Z[:n_lab]
        self.train_index_ = {b: i for i, b in enumerate(ids) if b is not None}
        self.stored_ = {b: Z[i] for b, i in index.items()}
        self.scaler_ = StandardScaler().fit(Z[:n_lab])
        self.svm_ = LinearSVC(C=self.svm_C, loss="hinge", max_iter=200000,
                              random_state=self.random_state).fit(
            self.scaler_.transform(Z[:n_lab]), y01)
        converged, at_cap = lbfgs_status(res)
        if at_cap:
            warn_cap(self, "max_iter", self.max_iter, "L-BFGS-B iterations of the factorisation")
        svm_converged = int(self.svm_.n_iter_ < self.svm_.max_iter)
        self.diagnostics_ = {"n_iter": int(res.nit), "converged": int(converged and svm_converged),
                             "svm_converged": svm_converged, "objective": float(res.fun),
                             "n_edges": int(A.nnz), "transductive": int(unlabeled is not None)}
        return self

    def transform_factors(self, X):
        """Latent factors of the bags of X: stored ones by bag id, else folded in."""
        inst, off, ids, _, _ = self._unpack(X)
        if inst.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {inst.shape[1]} features; fitted with {self.n_features_in_}")
        if all(b is not None and b in self.stored_ for b in ids):
            return np.array([self.stored_[b] for b in ids])
        Cm = _page_vectors(inst, off)
        V, U, Zt = self.V_, self.U_, self.Z_train_
        k = V.shape[1]
        M = self.alpha * V.T @ V + self.beta * np.eye(k)
        R = self.alpha * Cm @ V
        e = getattr(X, "edges", None)
        if e is not None and len(e) and self.train_index_:
            e = e[e["level"] == "bag"]
            here = {b: i for i, b in enumerate(ids)}
            n_t = len(Zt)
            out_r, out_c, in_r, in_c, w_o, w_i = [], [], [], [], [], []
            for s, t, w in zip(e["src"].astype(str), e["dst"].astype(str), e["weight"]):
                if s in here and t in self.train_index_:
                    out_r.append(here[s]); out_c.append(self.train_index_[t]); w_o.append(w)
                elif t in here and s in self.train_index_:
                    in_r.append(here[t]); in_c.append(self.train_index_[s]); w_i.append(w)
            if out_r or in_r:
                A_out = sp.csr_matrix((w_o, (out_r, out_c)), shape=(len(ids), n_t))
                A_in = sp.csr_matrix((w_i, (in_r, in_c)), shape=(len(ids), n_t))
                ZU_T, ZU = Zt @ U.T, Zt @ U
                M = M + ZU_T.T @ ZU_T + ZU.T @ ZU
                R = R + A_out @ ZU_T + A_in @ ZU
        return np.linalg.solve(M, R.T).T

    def decision_function(self, X):
        return self.svm_.decision_function(self.scaler_.transform(self.transform_factors(X)))
