"""MILSD (milsd.txt §2): oracles for the objective, CCCP, the two-set cutting plane, the dual
QP, the graph term, I-/BI-MILSD, transduction; plus the protein graph chain."""
import itertools
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from milbench.chains.protein import build_protein_graph, knn_edges, similarity_edges
from milbench.classifiers import milsd as M
from milbench.classifiers.milsd import MILSD
from milbench.data.bags import Bags
from milbench.utils.cache import reuse


def mil_data(n_bags=24, d=3, seed=0, size=(2, 5)):
    """Positive bags hold one instance shifted along feature 0."""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        k = int(rng.integers(*size))
        b = rng.normal(size=(k, d))
        lab = i % 2
        if lab:
            b[rng.integers(k), 0] += 3.0
        bags.append(b)
        y.append(lab)
    return bags, np.array(y)


def misvm_objective(w, b, bags, y, C):
    """½‖(w, b)‖² + C/n Σ hinge(Y_i max_j (wᵀx_ij + b)) — the MI-SVM objective (μ = 0)."""
    ypm = 2 * np.asarray(y) - 1
    f = np.array([np.max(x @ w + b) for x in bags])
    return 0.5 * (w @ w + b * b) + C / len(bags) * np.maximum(0, 1 - ypm * f).sum()


def slsqp_convex(Zs, y, witness, C):
    """Reference convex solver (n-slack QP by SLSQP) of one CCCP subproblem with μ = 0:
    positive bag i represented by the vector witness[i]; negative bags by all instances."""
    n, d = len(Zs), Zs[0].shape[1]

    def obj(v):
        return 0.5 * v[:d] @ v[:d] + C / n * v[d:].sum()

    def grad(v):
        return np.concatenate([v[:d], np.full(n, C / n)])

    cons = []
    for i in range(n):
        rows = [witness[i]] if y[i] else list(-Zs[i])
        for r in rows:
            a = np.zeros(d + n)
            a[:d] = r
            a[d + i] = 1.0
            cons.append({"type": "ineq", "fun": lambda v, a=a: a @ v - 1.0,
                         "jac": lambda v, a=a: a})
    res = minimize(obj, np.zeros(d + n), jac=grad, constraints=cons,
                   bounds=[(None, None)] * d + [(0, None)] * n, method="SLSQP",
                   options={"ftol": 1e-12, "maxiter": 1000})
    return res.x[:d]


# ----------------------------------------------------------------------------- μ = 0
def test_singleton_bags_equal_linear_svm():
    """Singleton bags, μ = 0: the objective is a linear SVM's (bias regularised, as absorbed)."""
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.4 * rng.normal(size=50) > 0).astype(int)
    C = 2.0
    m = MILSD(C=C, mu=0.0, eps1=1e-7).fit([x[None] for x in X], y)
    Z = np.hstack([X, np.ones((50, 1))])
    svc = LinearSVC(C=C / 50, loss="hinge", fit_intercept=False, tol=1e-12,
                    max_iter=200000).fit(Z, y)
    J = lambda w: 0.5 * w @ w + C / 50 * np.maximum(0, 1 - (2 * y - 1) * (Z @ w)).sum()  # noqa
    ours = np.concatenate([m.coef_, [m.intercept_]])
    assert J(ours) == pytest.approx(J(svc.coef_.ravel()), rel=1e-6)
    assert m.diagnostics_["objective"] == pytest.approx(J(ours), rel=1e-12)
    assert np.allclose(ours, svc.coef_.ravel(), atol=1e-3)


def test_mu0_is_the_mi_svm_objective_and_matches_alternating_reference():
    bags, y = mil_data(20, 3, seed=2)
    C = 4.0
    m = MILSD(C=C, mu=0.0, eps1=1e-8, tol=0.0, max_cccp=30).fit(bags, y)
    J_ours = misvm_objective(m.coef_, m.intercept_, bags, y, C)
    assert m.diagnostics_["objective"] == pytest.approx(J_ours, rel=1e-10)
    # reference: alternate witness selection and an exact convex solve (SLSQP), same start
    Zs = [np.hstack([b, np.ones((len(b), 1))]) for b in bags]
    wit = [z.mean(0) for z in Zs]
    prev = None
    for _ in range(30):
        w = slsqp_convex(Zs, y, wit, C)
        idx = [int(np.argmax(z @ w)) for z in Zs]
        if idx == prev:
            break
        prev = idx
        wit = [z[k] for z, k in zip(Zs, idx)]
    J_ref = misvm_objective(w[:-1], w[-1], bags, y, C)
    assert J_ours == pytest.approx(J_ref, rel=1e-4)
    # CCCP never increases the objective
    hist = [h["objective"] for h in m.history_]
    assert all(b <= a + 1e-7 for a, b in zip(hist, hist[1:]))


def test_agrees_with_misvm_classifier():
    from milbench.classifiers import misvm
    bags, y = mil_data(80, 3, seed=4)
    tb, ty = mil_data(60, 3, seed=5)
    ours = MILSD(C=10.0, mu=0.0, scaling="sum").fit(bags, y).predict(tb)
    theirs = misvm.MISVM(kernel="linear", C=10.0).fit(bags, y).predict(tb)
    assert (ours == ty).mean() >= 0.75 and (theirs == ty).mean() >= 0.75
    assert (ours == theirs).mean() >= 0.9


# ----------------------------------------------------------------------------- cutting plane
def small_problem(mu=0.5, seed=0):
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(2, 2)) for _ in range(6)]
    y = np.array([1, 0, 1, 0, 1, 0])
    edges = (np.array([0, 1, 2, 4]), np.array([1, 2, 3, 0]), np.ones(4))
    X, off = np.concatenate(bags), np.array([0, 2, 4, 6, 8, 10, 12])
    prob = M._Problem(M._design(X, 1.0), off, 6, 2.0 * y - 1, edges,
                      (np.zeros(0, int), np.zeros(0, int), np.zeros(0)), "out")
    return prob, bags, y, edges


@pytest.mark.parametrize("eps", [1e-2, 1e-4])
def test_cutting_plane_stops_with_every_constraint_satisfied(eps):
    C, mu = 2.0, 0.5
    prob, bags, y, (es, ed, ew) = small_problem(mu)
    rng = np.random.default_rng(7)
    w0 = rng.normal(size=3)
    P, _ = prob.argmax_linearisation(prob.scores(w0))       # a CCCP linearisation point
    w, xi, zeta, info = M.cutting_plane(prob, P, P[:6], C, mu, eps, eps)
    Z = prob.Z if isinstance(prob.Z, np.ndarray) else prob.Z.toarray()
    lin = P.toarray() @ Z                                    # linearised vector per node
    rows = [Z[prob.offsets[i]:prob.offsets[i + 1]] for i in range(6)]
    n, E = 6, len(es)
    # all bag constraints: c ∈ {0,1}^n and, for negative bags, every instance choice
    worst1 = -np.inf
    neg = [i for i in range(n) if not y[i]]
    for c in itertools.product((0, 1), repeat=n):
        for pick in itertools.product(range(2), repeat=len(neg)):
            g = np.zeros(3)
            for i in range(n):
                if c[i]:
                    g += lin[i] if y[i] else -rows[i][pick[neg.index(i)]]
            v = sum(c) / n - w @ g / n
            assert v <= xi + eps + 1e-9
            worst1 = max(worst1, v)
    # all edge constraints: per edge none, or one instance of p (direction 1) or of q
    deg = np.maximum(np.bincount(es, minlength=6), 1)
    r = 1 / np.sqrt(deg)
    options = []
    for p, q in zip(es, ed):
        opts = [np.zeros(3)]
        opts += [r[p] * x - r[q] * lin[q] for x in rows[p]]
        opts += [r[q] * x - r[p] * lin[p] for x in rows[q]]
        options.append(opts)
    worst2 = -np.inf
    for combo in itertools.product(*options):
        v = w @ sum(combo) / E
        assert v <= zeta + eps + 1e-9
        worst2 = max(worst2, v)
    # the slacks are attained (not trivially large): ξ, ζ equal the worst violation up to ε
    assert worst1 >= xi - 1e-9 and worst2 >= zeta - 1e-9
    assert info["iterations"] >= 2 and set(info["block"]) == {0, 1}


def test_dual_qp_solver_matches_slsqp():
    rng = np.random.default_rng(3)
    for trial in range(5):
        m = int(rng.integers(3, 12))
        A = rng.normal(size=(m, 4))
        K = A @ A.T
        lin = np.abs(rng.normal(size=m))
        block = rng.integers(0, 2, size=m)
        caps = np.array([1.5, 0.7])
        g, _ = M.solve_dual_qp(K, lin, block, caps)
        D = lambda v: lin @ v - 0.5 * v @ K @ v  # noqa: E731
        cons = [{"type": "ineq", "fun": lambda v, b=b: caps[b] - v[block == b].sum()}
                for b in (0, 1)]
        ref = minimize(lambda v: -D(v), np.zeros(m), jac=lambda v: -(lin - K @ v),
                       bounds=[(0, None)] * m, constraints=cons, method="SLSQP",
                       options={"ftol": 1e-14, "maxiter": 500})
        assert (g >= 0).all() and all(g[block == b].sum() <= caps[b] + 1e-12 for b in (0, 1))
        assert D(g) >= -ref.fun - 1e-9
        assert D(g) == pytest.approx(-ref.fun, rel=1e-7, abs=1e-9)


# ----------------------------------------------------------------------------- graph term
def test_graph_term_zero_when_linked_bags_have_equal_scores():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(3, 4))
    bags = [base[rng.permutation(3)] for _ in range(5)]      # same instances, any order
    y = np.array([1, 0, 1, 0, 1])
    ids = [f"b{i}" for i in range(5)]
    edges = pd.DataFrame({"src": ids, "dst": ids[1:] + ids[:1], "weight": 1.0, "level": "bag"})
    B = Bags.from_list(bags, y, bag_ids=ids, edges=edges)      # a directed cycle: d = 1
    prob = M._Problem(M._design(B.instances, 1.0), B.offsets, 5, 2.0 * y - 1,
                      M.MILSD()._graph([B])[0], (np.zeros(0, int),) * 2 + (np.zeros(0),), "out")
    for _ in range(5):
        w = rng.normal(size=5)
        assert prob.objective(w, 1.0, 3.0) == pytest.approx(prob.objective(w, 1.0, 0.0), abs=1e-12)
    a = MILSD(C=1.0, mu=3.0, eps1=1e-6, eps2=1e-6).fit(B, y)
    a0 = clone(a).set_params(mu=0.0)
    a0.coef_, a0.intercept_ = a.coef_, a.intercept_
    assert a.objective(B, y) == pytest.approx(a0.objective(B, y), abs=1e-12)
    # ... and it is not zero once the out-degrees differ (edge 0 -> 2 added: d(0) = 2)
    B.edges = pd.concat([edges, pd.DataFrame({"src": ["b0"], "dst": ["b2"], "weight": [1.0],
                                              "level": ["bag"]})], ignore_index=True)
    assert a.objective(B, y) > a0.objective(B, y) + 1e-6


def test_graph_term_value_by_hand():
    bags, y = mil_data(8, 3, seed=9)
    ids = [f"p{i}" for i in range(8)]
    src, dst = [0, 0, 1, 2, 5, 7, 3], [1, 2, 2, 0, 6, 6, 4]
    e = pd.DataFrame({"src": [ids[i] for i in src], "dst": [ids[i] for i in dst],
                      "weight": [1.0, 2.0, 1.0, 0.5, 1.0, 1.0, 3.0], "level": "bag"})
    B = Bags.from_list(bags, y, bag_ids=ids, edges=e)
    m = MILSD(C=1.5, mu=0.7).fit(B, y)
    w, b = m.coef_, m.intercept_
    f = np.array([np.max(x @ w + b) for x in bags])
    outdeg = np.zeros(8)
    for s, wt in zip(src, e.weight):
        outdeg[s] += wt
    d = np.maximum(outdeg, 1)
    G = sum(wt * abs(f[s] / np.sqrt(d[s]) - f[t] / np.sqrt(d[t]))
            for s, t, wt in zip(src, dst, e.weight)) / len(src)
    J = misvm_objective(w, b, bags, y, 1.5) + 0.7 * G
    assert m.objective(B, y) == pytest.approx(J, rel=1e-10)
    assert m.diagnostics_["objective"] == pytest.approx(J, rel=1e-10)


def convex_reference(Z, y, n_lab, edges, r_src, r_dst, C, mu):
    """SLSQP on the n-slack form of singleton-bag B-MILSD (a convex QP)."""
    n_all, d = Z.shape
    es, ed, ew = edges
    E = len(es)

    def obj(v):
        return 0.5 * v[:d] @ v[:d] + C / n_lab * v[d:d + n_lab].sum() + mu / E * ew @ v[d + n_lab:]

    cons = []
    for i in range(n_lab):
        cons.append({"type": "ineq",
                     "fun": lambda v, i=i: (2 * y[i] - 1) * Z[i] @ v[:d] - 1 + v[d + i]})
    for k, (p, q) in enumerate(zip(es, ed)):
        for sgn in (1, -1):
            cons.append({"type": "ineq", "fun": lambda v, k=k, p=p, q=q, sgn=sgn:
                         v[d + n_lab + k]
                         - sgn * (r_src[k] * Z[p] @ v[:d] - r_dst[k] * Z[q] @ v[:d])})
    res = minimize(obj, np.zeros(d + n_lab + E), constraints=cons, method="SLSQP",
                   bounds=[(None, None)] * d + [(0, None)] * (n_lab + E),
                   options={"ftol": 1e-13, "maxiter": 2000})
    return res.fun


@pytest.mark.parametrize("transductive", [False, True])
def test_singleton_b_milsd_matches_convex_qp(transductive):
    """Singleton bags make B-MILSD convex: compare with a direct n-slack QP solve, with and
    without unlabeled bags in the graph."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(16, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=16) > 0).astype(int)
    ids = [f"n{i}" for i in range(16)]
    src = rng.integers(0, 16, size=30)
    dst = (src + rng.integers(1, 16, size=30)) % 16
    e = pd.DataFrame({"src": [ids[i] for i in src], "dst": [ids[i] for i in dst],
                      "weight": 1.0, "level": "bag"}).drop_duplicates(["src", "dst"])
    full = Bags.from_list([x[None] for x in X], y, bag_ids=ids, edges=e)
    n_lab = 10 if transductive else 16
    lab = full.subset(np.arange(n_lab))
    lab.edges = e
    unl = full.subset(np.arange(n_lab, 16)) if transductive else None
    C, mu = 3.0, 2.0
    m = MILSD(C=C, mu=mu, eps1=1e-7, eps2=1e-7, tol=0.0).fit(lab, y[:n_lab], unlabeled=unl)
    est = MILSD(C=C, mu=mu)
    bag_e, _ = est._graph([lab] + ([unl] if transductive else []))
    if not transductive:
        keep = (bag_e[0] < n_lab) & (bag_e[1] < n_lab)
        bag_e = tuple(a[keep] for a in bag_e)
    deg = np.maximum(np.bincount(bag_e[0], weights=bag_e[2], minlength=16), 1)
    Z = np.hstack([X, np.ones((16, 1))])
    ref = convex_reference(Z, y, n_lab, bag_e, 1 / np.sqrt(deg[bag_e[0]]),
                           1 / np.sqrt(deg[bag_e[1]]), C, mu)
    assert m.diagnostics_["objective"] == pytest.approx(ref, rel=1e-5)
    assert m.diagnostics_["n_bag_edges"] == len(bag_e[0])


def test_i_milsd_on_singletons_equals_b_milsd_and_bi_adds_terms():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(12, 3))
    y = (X[:, 1] > 0).astype(int)
    ids = [f"s{i}" for i in range(12)]
    src, dst = np.arange(12), (np.arange(12) + 5) % 12
    bag_e = pd.DataFrame({"src": [ids[i] for i in src], "dst": [ids[i] for i in dst],
                          "weight": 1.0, "level": "bag"})
    inst_e = pd.DataFrame({"src": src.astype(str), "dst": dst.astype(str), "weight": 1.0,
                           "level": "instance"})
    B = Bags.from_list([x[None] for x in X], y, bag_ids=ids,
                       edges=pd.concat([bag_e, inst_e], ignore_index=True))
    kw = dict(C=2.0, mu=1.0, eps1=1e-7, eps2=1e-7)
    b = MILSD(graph="bag", **kw).fit(B, y)
    i = MILSD(graph="instance", **kw).fit(B, y)
    assert np.allclose(b.coef_, i.coef_, atol=1e-4)
    assert b.diagnostics_["objective"] == pytest.approx(i.diagnostics_["objective"], rel=1e-8)
    both = MILSD(graph="both", **kw).fit(B, y)
    # BI objective at any w = hinge part + μ (bag term + instance term)
    both0 = clone(both).set_params(mu=0.0)
    both0.coef_, both0.intercept_ = both.coef_, both.intercept_
    bag_only = clone(b)
    bag_only.coef_, bag_only.intercept_ = both.coef_, both.intercept_
    inst_only = clone(i)
    inst_only.coef_, inst_only.intercept_ = both.coef_, both.intercept_
    hinge = both0.objective(B, y)
    assert both.objective(B, y) == pytest.approx(
        bag_only.objective(B, y) + inst_only.objective(B, y) - hinge, rel=1e-10)
    assert both.diagnostics_["n_bag_edges"] == 12 and both.diagnostics_["n_instance_edges"] == 12


def test_mu_zero_with_graph_ignores_edges_and_warning_without_edges():
    bags, y = mil_data(16, 3, seed=1)
    ids = [str(i) for i in range(16)]
    e = pd.DataFrame({"src": ids[:-1], "dst": ids[1:], "weight": 1.0, "level": "bag"})
    B = Bags.from_list(bags, y, bag_ids=ids, edges=e)
    a = MILSD(mu=0.0).fit(B, y)
    b = MILSD(mu=0.0).fit(replace(B, edges=None), y)         # same (float32) instances
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = MILSD(mu=0.0).fit(bags, y)                           # float64: same to the QP gap
    assert np.allclose(a.coef_, c.coef_, rtol=1e-3, atol=1e-3)
    with pytest.warns(UserWarning, match="no graph edges"):
        MILSD(mu=1.0).fit(bags, y)
    sub = B.subset(np.arange(8))
    m = MILSD(mu=1.0).fit(sub, y[:8])
    assert m.diagnostics_["n_bag_edges"] == 7


# ----------------------------------------------------------------------------- sklearn contract
def test_sklearn_contract_and_determinism():
    bags, y = mil_data(30, 3, seed=3)
    est = MILSD(C=1.0, mu=0.0)
    assert clone(est).get_params() == est.get_params()
    ypm = 2 * y - 1
    m1 = MILSD(mu=0.0).fit(bags, ypm)
    m2 = MILSD(mu=0.0).fit(bags, ypm)
    assert np.array_equal(m1.coef_, m2.coef_)
    assert set(m1.predict(bags)) <= {-1, 1} and list(m1.classes_) == [-1, 1]
    assert m1.decision_function(bags).shape == (30,)
    gs = GridSearchCV(MILSD(mu=0.0), {"C": [0.5, 4.0]}, cv=3).fit(bags, y)
    assert gs.best_params_["C"] in (0.5, 4.0)
    with pytest.raises(ValueError, match="'graph' parameter"):
        MILSD(graph="nodes").fit(bags, y)
    with pytest.raises(ValueError, match="features"):
        m1.decision_function([b[:, :2] for b in bags])


def test_sum_scaling_is_mean_scaling_with_c_times_n():
    bags, y = mil_data(20, 3, seed=6)
    ids = [str(i) for i in range(20)]
    e = pd.DataFrame({"src": ids[:-1], "dst": ids[1:], "weight": 1.0, "level": "bag"})
    B = Bags.from_list(bags, y, bag_ids=ids, edges=e)
    a = MILSD(C=0.5, mu=0.2, scaling="sum").fit(B, y)
    b = MILSD(C=0.5 * 20, mu=0.2 * 19, scaling="mean").fit(B, y)
    assert np.allclose(a.coef_, b.coef_) and a.intercept_ == pytest.approx(b.intercept_)


# ----------------------------------------------------------------------------- protein graph
def protein_like(n=12, seed=0):
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(int(rng.integers(2, 5)), 9)) for _ in range(n)]
    return Bags.from_list(bags, np.arange(n) % 2, bag_ids=[f"P{i}" for i in range(n)],
                          names=np.array([f"prot{i}" for i in range(n)]))


def test_knn_substitute_graph():
    B = protein_like()
    e = knn_edges(B, k=3)
    assert len(e) == 36 and (e.groupby("src").size() == 3).all()
    assert not (e.src == e.dst).any()
    g = build_protein_graph(B, k=3)
    assert g.meta["graph_source"] == "knn-substitute" and g.n_features == 8
    assert g.edges.equals(knn_edges(B.with_instances(B.instances[:, 1:]), k=3))


def test_similarity_table_threshold(tmp_path):
    B = protein_like()
    f = tmp_path / "scores.csv"
    f.write_text("a,b,score\nprot0,prot1,30\nP2,P3,25\nprot4,P5,80.5\nP6,P6,99\n")
    e = similarity_edges(B, f, threshold=25)
    assert sorted(zip(e.src, e.dst)) == [("P0", "P1"), ("P1", "P0"), ("P4", "P5"), ("P5", "P4")]
    g = build_protein_graph(B, table=f)
    assert g.meta["graph_source"] == "user similarity table" and len(g.edges) == 4
    f2 = tmp_path / "bad.tsv"
    f2.write_text("P0\tPX\t40\n")
    with pytest.raises(ValueError, match="unknown bag"):
        similarity_edges(B, f2)


def test_real_protein_kfold_runs(shared_data):
    from milbench.data.sources import read_csv

    g = build_protein_graph(read_csv(shared_data / "protein" / "protein.csv"), k=5)
    assert len(g) == 193 and g.n_features == 8 and len(g.edges) == 965
    tr = np.arange(0, 193, 2)
    A = g.subset(tr)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = MILSD(C=1.0, mu=0.1, scaling="sum").fit(A, A.labels)
    assert m.diagnostics_["n_bag_edges"] > 0
    assert np.isfinite(m.decision_function(g.subset(np.arange(1, 193, 2)))).all()


# ----------------------------------------------------------------------------- QP solvers
def random_subproblems(n=60, seed=0):
    """Restricted duals like the cutting plane's: near-repeated cuts (ill-conditioned K), one
    block capped at 0 (μ = 0) now and then, warm starts that may be infeasible."""
    rng = np.random.default_rng(seed)
    for t in range(n):
        m, d = int(rng.integers(2, 50)), int(rng.integers(2, 60))
        A = rng.normal(size=(m, d))
        if t % 3 == 0:
            A[m // 2:] = A[:m - m // 2] + 1e-3 * rng.normal(size=(m - m // 2, d))
        lin = np.abs(rng.normal(size=m))
        block = rng.integers(0, 2, size=m)
        caps = np.array([rng.uniform(0.1, 5), 0.0 if t % 5 == 0 else rng.uniform(0.1, 5)])
        g0 = np.abs(rng.normal(size=m)) * 0.2 if t % 2 else None
        yield A @ A.T, lin, block, caps, g0


def recorded_subproblems(fit):
    """The (K, lin, block, caps, γ0) of every QP a fit solves (through M.SOLVERS)."""
    rec, solve = [], M.SOLVERS["active-set"]

    def spy(K, lin, block, caps, g0=None, tol=1e-12):  # noqa: D401
        rec.append((K.copy(), lin.copy(), block.copy(), caps.copy(),
                    None if g0 is None else g0.copy()))
        return solve(K, lin, block, caps, g0, tol=tol)

    M.SOLVERS["active-set"] = spy
    try:
        with M.SETUP_CACHE.disabled():
            fit()
    finally:
        M.SOLVERS["active-set"] = solve
    return rec


def feasible(g, block, caps):
    return (g >= 0).all() and all(g[block == b].sum() <= caps[b] * (1 + 1e-12) for b in (0, 1))


def duality_gap(g, K, lin, block, caps):
    """Σ_b caps_b·max(0, max_{k∈b} ∇_k) − γᵀ∇ with ∇ = lin − Kγ: primal minus dual value."""
    grad = lin - K @ g
    return sum(caps[b] * max(0.0, grad[block == b].max(initial=0.0))
               - g[block == b] @ grad[block == b] for b in (0, 1) if caps[b] > 0)


def kkt_violation(g, K, lin, block, caps):
    """The KKT conditions of the restricted dual, as (stationarity, complementarity): with
    ∇ = lin − Kγ and the cap multiplier ν_b = max(0, max_{k∈b} ∇_k), every γ_k > 0 has
    ∇_k = ν_b (largest ν_b − ∇_k over the support), and ν_b > 0 only at a saturated cap
    (largest ν_b·(caps_b − Σ_b γ)).  The duality gap is Σ_b ν_b·slack_b + Σ_k γ_k(ν_b − ∇_k)."""
    grad = lin - K @ g
    stat = comp = 0.0
    for b in (0, 1):
        if caps[b] <= 0:
            continue
        i = block == b
        nu = max(0.0, grad[i].max(initial=0.0))
        sup = i & (g > 1e-9 * caps[b])
        stat = max(stat, float((nu - grad[sup]).max(initial=0.0)))
        comp = max(comp, nu * (caps[b] - g[i].sum()))
    return stat, comp


def check_solvers(problems, cd_tol=1e-9):
    """The reference is solve_dual_qp, the active-set solver (kept as first written, the
    default; itself checked against SLSQP above).  The CD solver is feasible, stops before its
    step cap at a duality gap ≤ tol or, where round-off in ∇ = lin − Kγ (times the caps) keeps
    the gap above tol, at the reference's own gap; it satisfies the KKT conditions, and its
    dual value — the restricted QP's primal objective at the optimum — is
    no lower than the reference's, up to round-off (1e-12 relative)."""
    for K, lin, block, caps, g0 in problems:
        D = lambda v: lin @ v - 0.5 * v @ K @ v  # noqa: E731
        ref, _ = M.solve_dual_qp(K, lin, block, caps, g0)
        cd, steps = M.solve_dual_cd(K, lin, block, caps, g0, tol=cd_tol)
        for g in (ref, cd):
            assert feasible(g, block, caps)
            assert (g[caps[block] <= 0] == 0).all()
        scale = max(1.0, abs(D(ref)))
        gap = duality_gap(cd, K, lin, block, caps)
        floor = duality_gap(ref, K, lin, block, caps)       # the reference's round-off
        assert -1e-12 * scale <= gap <= max(cd_tol, floor + 1e-12 * scale)
        assert steps < 10 * len(lin) + 100
        assert D(cd) >= D(ref) - 1e-12 * scale
        stat, comp = kkt_violation(cd, K, lin, block, caps)
        gscale = max(float(np.abs(lin).max()), float(np.abs(K).max() * cd.sum()))  # |∇|'s terms
        assert stat <= 1e-10 * gscale and comp <= max(cd_tol, floor + 1e-12 * scale)


def test_cd_solver_against_the_active_set_on_random_subproblems():
    check_solvers(random_subproblems(40))


def test_cd_solver_against_the_active_set_on_recorded_cutting_plane_subproblems():
    B, y = graph_data(60, seed=6, d=8)
    rec = recorded_subproblems(lambda: MILSD(C=8.0, mu=0.5, scaling="sum", eps1=1e-5,
                                             eps2=1e-5).fit(B, y))
    assert len(rec) > 20 and max(len(r[1]) for r in rec) > 10
    check_solvers(rec[::4])


def test_cd_solver_against_the_active_set_on_real_protein_subproblems(shared_data):
    from milbench.data.sources import read_csv

    g = build_protein_graph(read_csv(shared_data / "protein" / "protein.csv"), k=5)
    A = g.subset(np.arange(0, 193, 2))
    rec = recorded_subproblems(lambda: MILSD(C=4.0, mu=0.1, scaling="sum").fit(A, A.labels))
    check_solvers(rec[::max(1, len(rec) // 6)], cd_tol=1e-6)


def test_cd_solver_cutting_plane_reaches_the_active_set_objective():
    """The same CCCP subproblem (2) — round 1, the mean linearisation — by the cutting plane
    with either solver: the subproblem's objective ½‖w‖² + C·(linearised hinges) + μ·(edge
    terms) at the returned w is no higher with CD (to 1e-9 relative), in as many rounds."""
    B, y = graph_data(40, seed=11, d=6)
    with M.SETUP_CACHE.disabled():
        est = MILSD(C=4.0, mu=0.5, scaling="sum")
        est.fit(B, y)                                       # the data's problem, via a fit
    inst, off, _, y01, _ = est._as_bags(B, y)
    prob = M._Problem(M._design(inst, 1.0), np.asarray(off, np.int64), len(y01),
                      np.where(y01 > 0, 1.0, -1.0), *est._graph([B]), "out", "sum")
    P = prob.mean_linearisation()
    C, mu = 4.0 * prob.C_factor, 0.5 * prob.mu_factor

    def objective(w):
        s = prob.scores(w)
        v1 = prob.bag_constraint(s, P[:prob.n])[2]
        return 0.5 * w @ w + C * max(0.0, v1) + mu * max(0.0, prob.edge_constraint(s, P)[1])

    runs = {solver: M.cutting_plane(prob, P, P[:prob.n], C, mu, 1e-4, 1e-4, solver=solver)
            for solver in ("active-set", "cd")}
    a, c = (objective(runs[k][0]) for k in ("active-set", "cd"))
    assert runs["active-set"][3]["converged"] and runs["cd"][3]["converged"]
    assert c <= a * (1 + 1e-9)
    assert c == pytest.approx(a, rel=1e-9)
    assert runs["cd"][3]["iterations"] == runs["active-set"][3]["iterations"] > 5


def test_cd_solver_fit_reaches_the_active_set_objective_and_is_deterministic():
    """solver="cd" solves each QP to a duality gap of qp_gap·(C·ε1 + μ·ε2) (qp_gap 1e-6): the
    fit's J equals the active-set fit's to round-off, and two fits are identical."""
    bags, y = mil_data(30, 3, seed=8)
    ids = [str(i) for i in range(30)]
    e = pd.DataFrame({"src": ids[:-1], "dst": ids[1:], "weight": 1.0, "level": "bag"})
    B = Bags.from_list(bags, y, bag_ids=ids, edges=e)
    a = MILSD(C=2.0, mu=0.5, solver="active-set").fit(B, y)
    c = MILSD(C=2.0, mu=0.5, solver="cd").fit(B, y)
    c2 = MILSD(C=2.0, mu=0.5, solver="cd").fit(B, y)
    assert c.diagnostics_["objective"] <= a.diagnostics_["objective"] * (1 + 1e-9)
    assert c.diagnostics_["objective"] == pytest.approx(a.diagnostics_["objective"], rel=1e-9)
    assert np.array_equal(c.coef_, c2.coef_) and c.intercept_ == c2.intercept_
    with pytest.raises(ValueError, match="'solver' parameter"):
        MILSD(solver="smo").fit(B, y)


# ----------------------------------------------------------------------------- shared setup
def graph_data(n=36, seed=9, d=3):
    bags, y = mil_data(n, d, seed=seed)
    ids = [f"b{i}" for i in range(n)]
    rng = np.random.default_rng(seed)
    s, t = rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n)
    e = pd.DataFrame({"src": [ids[i] for i in s], "dst": [ids[i] for i in t],
                      "weight": 1.0, "level": "bag"})
    return Bags.from_list(bags, y, bag_ids=ids, edges=e), y


@pytest.mark.parametrize("transductive", [False, True])
def test_shared_setup_gives_the_identical_model(transductive, reuse_on):
    """The per-fold setup (design, graph, degrees, mean linearisation, first cut) built once
    and shared by a C x μ grid gives bit-identical models to building it per fit."""
    from milbench.experiment.fold import Unlabeled

    B, y = graph_data()
    tr = np.arange(0, 36, 3) % 36
    tr = np.setdiff1d(np.arange(36), np.arange(0, 36, 4))
    A = B.subset(tr)
    U = Unlabeled(B).complement(A) if transductive else None
    grid = [(C, mu) for C in (0.25, 4.0) for mu in (0.0, 0.1)]
    M.SETUP_CACHE.clear()
    shared = [MILSD(C=C, mu=mu, scaling="sum").fit(A, A.labels, unlabeled=U) for C, mu in grid]
    assert (M.SETUP_CACHE.misses, M.SETUP_CACHE.hits) == (1, len(grid) - 1)
    with M.SETUP_CACHE.disabled():
        alone = [MILSD(C=C, mu=mu, scaling="sum").fit(A, A.labels, unlabeled=U)
                 for C, mu in grid]
    for a, b in zip(shared, alone):
        np.testing.assert_array_equal(a.coef_, b.coef_)
        assert a.intercept_ == b.intercept_
        assert {k: v for k, v in a.diagnostics_.items() if k != "cpu_seconds"} == \
            {k: v for k, v in b.diagnostics_.items() if k != "cpu_seconds"}
    # a different parameter of the setup, or data differing in one value, misses
    MILSD(C=1.0, degree="total").fit(A, A.labels, unlabeled=U)
    X2 = replace(A, instances=A.instances.copy())
    X2.instances[0, 0] += 1.0
    MILSD(C=1.0).fit(X2, A.labels, unlabeled=U)
    assert M.SETUP_CACHE.misses == 3


def test_warm_start_along_c_is_opt_in(reuse_on):
    B, y = graph_data(seed=10)
    M.SETUP_CACHE.clear()
    cold = [MILSD(C=C, mu=0.1, scaling="sum").fit(B, y) for C in (0.5, 2.0)]
    assert all(m.warm_started_from_ is None for m in cold)
    warm = [MILSD(C=C, mu=0.1, scaling="sum", warm_C=True).fit(B, y) for C in (0.5, 2.0, 1.0)]
    assert [m.warm_started_from_ for m in warm] == [None, 0.5, 0.5]
    np.testing.assert_array_equal(warm[0].coef_, cold[0].coef_)       # nothing to start from
    # the warm fit starts at a solution, so it is never worse than that start's objective
    J_start = MILSD(C=2.0, mu=0.1, scaling="sum")
    J_start.coef_, J_start.intercept_ = warm[0].coef_, warm[0].intercept_
    J_start.n_features_in_ = warm[0].n_features_in_
    assert warm[1].diagnostics_["objective"] <= J_start.objective(B, y) + 1e-12
    with M.SETUP_CACHE.disabled():                 # no store: every fit starts cold
        m = MILSD(C=2.0, mu=0.1, scaling="sum", warm_C=True).fit(B, y)
    assert m.warm_started_from_ is None
    np.testing.assert_array_equal(m.coef_, cold[1].coef_)
    with reuse(False):                             # outside the workflow's cells: cold too
        m = MILSD(C=2.0, mu=0.1, scaling="sum", warm_C=True).fit(B, y)
    assert m.warm_started_from_ is None
    np.testing.assert_array_equal(m.coef_, cold[1].coef_)
