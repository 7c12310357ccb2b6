"""B-MILSD fit vs one LinearSVC fit on the same instances (CPU s, ratio), next to milsd.txt Table 2.

Table 2 reports 245.7 s on webkb-student and 1.7 s on protein.  Fits B-MILSD on webkb-student at training ratio 0.5 (inductive graph = links among the
training pages; and transductive = all links, test pages as unlabeled nodes) and reports CCCP
rounds, cutting-plane iterations per round, CPU seconds, and the ratio to one LinearSVC fit
(hinge, same per-bag C) on the same training instances (each labelled with its bag's label),
measured in the same run.  Then the same on protein-graph (5-fold CV).  ``--accuracy`` adds a
short accuracy run at ratio 0.2 (a few repeats, fixed C, μ; no inner CV) for the three tasks.

    python -m benchmarks.methods.bench_milsd [--bags results/bags/webkb-student@<source tag>] [--accuracy]

``--grid`` times the tuned grid of config/paper/milsd.yaml instead: on webkb-faculty and
webkb-student at ``--ratios`` (transductive, as the config), the inner-CV fits of a sample of the
11 C x 4 mu grid (``--grid-mu`` columns, every C, ``--folds`` of the 5 inner folds) under MILSD's
own options, one after the other in this run (``--variants``): ``no-reuse`` (every fit builds
its own design matrix, graph and round-1 cuts: ``SETUP_CACHE`` off), ``reuse`` (the setup shared
by the grid's fits, as a run's cell; the same models bit for bit), ``cd`` (reuse and
``solver="cd"``) and ``warm`` (reuse and ``warm_C=True``); CPU seconds per fit and per sample,
ratios to the first variant, the J objective and test accuracy of every fit; with all 5 folds
also the chosen (C, mu), its refit's J and test accuracy.  The CPU of a tuned cell (44 x 5 + 1
fits) is scaled up from the sample: 5 / folds x 4 / len(mu) x (sample CPU) + the mean fit for
the refit.

    python -m benchmarks.methods.bench_milsd --grid --bags results/bags/webkb-student@<tag> \
        [--ratios 0.2 0.5] [--grid-mu 0.1] [--folds 1] [--variants no-reuse reuse warm]

``--qp`` records every 15th restricted dual QP of one webkb-faculty fit (``--C``, ``--mu``,
first ``--ratios``) and solves them with both of MILSD's solvers, the active set and CD
(objectives compared):  python -m benchmarks.methods.bench_milsd --qp --C 32 --bags ...

``--solvers`` compares the two solvers of the restricted dual QP on the config's own splits
(config/paper/milsd.yaml's protocol, training ratio ``--ratios``, repeats 0..``--repeats``−1,
transductive, at the fixed (C, mu) points ``--points``): each fit by both, in the same run
(CPU s with the setup shared, J, test accuracy), and every CCCP subproblem of the active-set
fit — the same linearisation — solved by the cutting plane with either solver (the
subproblem's objective at the returned w, CPU s):
python -m benchmarks.methods.bench_milsd --solvers --tasks faculty course --repeats 3 --bags ...

Without ``--bags`` the WebKB archive in ../shared/data is extracted (safe_extract) and parsed
here (~1 min).  Single-threaded BLAS is assumed (OMP_NUM_THREADS=1).
"""
from __future__ import annotations

from benchmarks import DATA
import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from milbench.chains import webkb as W
from milbench.classifiers.lcmf import LCMF
from milbench.classifiers.milsd import MILSD
from milbench.experiment.fold import Unlabeled
from milbench.utils.cache import reuse

from benchmarks._timing import best_of


def stratified(y, ratio, seed):
    rng = np.random.default_rng(seed)
    tr = []
    for c in (0, 1):
        idx = rng.permutation(np.flatnonzero(y == c))
        tr.append(idx[:max(1, int(round(ratio * len(idx))))])
    tr = np.sort(np.concatenate(tr))
    return tr, np.setdiff1d(np.arange(len(y)), tr)


def load_tasks(bags_dir, tasks, max_features):
    if bags_dir:
        from milbench.data.store import read_bags
        tag = Path(bags_dir).name.partition("@")[2]          # the chain's source tag
        return {t: read_bags(Path(bags_dir).parent / (f"webkb-{t}@{tag}" if tag else f"webkb-{t}"))
                for t in tasks}
    tmp = Path(tempfile.mkdtemp(prefix="bench-milsd-"))
    t0 = time.perf_counter()
    root = W.extract_archive(DATA / "webkb" / "webkb-data.tar.gz", tmp / "site")
    site = W.read_site(root)
    nodes = W.linked_nodes(site)
    passages, _ = W.site_passages(site, nodes)
    vocab, idf = W.fit_vocabulary(passages, max_features, 2)
    out = {t: W.build_task_bags(site, t, nodes=nodes, vocab=vocab, idf=idf)[0] for t in tasks}
    print(f"parsed the crawl: {site.stats['files']} files, {len(nodes)} linked pages "
          f"({time.perf_counter() - t0:.1f} s wall)")
    return out


def linear_svc_seconds(train, C_per_bag):
    from sklearn.svm import LinearSVC
    y = np.repeat(train.labels, train.sizes)
    return best_of(lambda: LinearSVC(C=C_per_bag, loss="hinge", max_iter=100000)
                   .fit(train.instances, y)).cpu


def fit_report(name, est, train, test, unlabeled=None):
    _, s, m = best_of(lambda: est.fit(train, train.labels, unlabeled=unlabeled))
    acc = float((m.predict(test) == test.labels).mean())
    per_round = [h["cp_iterations"] for h in m.history_]
    print(f"  {name:<32} {s:8.2f} s CPU  acc {acc:.3f}  CCCP rounds {len(per_round)}  "
          f"cutting planes per round {per_round}  edges {m.diagnostics_['n_bag_edges']}")
    return s, acc


def bench_student(bags, ratio, C, mu):
    tr, te = stratified(bags.labels, ratio, 0)
    train, test = bags.subset(tr), bags.subset(te)
    unl = Unlabeled(bags).complement(train)   # test pages, labels removed, every link kept
    print(f"\nwebkb-student, ratio {ratio}: {len(train)} training bags, "
          f"{len(train.instances)} instances x {bags.n_features} terms "
          f"({bags.instances.nbytes / 1e6:.0f} MB float32 for the whole data set)")
    base = linear_svc_seconds(train, C)
    print(f"  LinearSVC (hinge, C={C}) on the {len(train.instances)} training instances: "
          f"{base:.2f} s CPU")
    for label, est, u in (
            (f"B-MILSD C={C} mu=0 (MI-SVM)", MILSD(C=C, mu=0.0, scaling="sum"), None),
            (f"B-MILSD C={C} mu={mu} inductive", MILSD(C=C, mu=mu, scaling="sum"), None),
            (f"B-MILSD C={C} mu={mu} transductive", MILSD(C=C, mu=mu, scaling="sum"), unl)):
        s, _ = fit_report(label, est, train, test, u)
        print(f"  {'':<32} ratio to one LinearSVC fit: {s / base:.1f}x  (paper: 245.7 s)")


def bench_protein(C, mu):
    from sklearn.model_selection import StratifiedKFold

    from milbench.chains.protein import build_protein_graph
    from milbench.data.sources import read_csv

    g = build_protein_graph(read_csv(DATA / "protein" / "protein.csv"), k=5)
    X = g.instances
    g = g.with_instances((X - X.min(0)) / (X.max(0) - X.min(0)))     # keeps the edges
    print(f"\nprotein-graph (kNN substitute, {len(g.edges)} edges), 5-fold CV, C={C}, mu={mu}")
    times, accs, base = [], [], []
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for tr, te in cv.split(np.zeros(len(g)), g.labels):
        A, B = g.subset(tr), g.subset(te)
        _, s, m = best_of(lambda: MILSD(C=C, mu=mu, scaling="sum").fit(A, A.labels))
        times.append(s)
        accs.append((m.predict(B) == B.labels).mean())
        base.append(linear_svc_seconds(A, C))
    print(f"  B-MILSD {np.mean(times):.2f} s CPU per fit (paper 1.7 s), accuracy "
          f"{np.mean(accs):.3f} (paper 0.962; majority class 0.870); LinearSVC on the "
          f"instances {np.mean(base):.2f} s -> ratio {np.mean(times) / np.mean(base):.1f}x")


def accuracy_run(tasks, ratio, repeats, C, mu):
    print(f"\nshort accuracy run: ratio {ratio}, {repeats} repeats, fixed C={C}, mu={mu} "
          "(no inner CV), inductive (pipeline) and transductive graph")
    for t, bags in tasks.items():
        res = {}
        for r in range(repeats):
            tr, te = stratified(bags.labels, ratio, r)
            train, test = bags.subset(tr), bags.subset(te)
            unl = Unlabeled(bags).complement(train)
            runs = {"B-MILSD mu=0 (MI-SVM)": (MILSD(C=C, mu=0.0, scaling="sum"), None),
                    f"B-MILSD mu={mu} inductive": (MILSD(C=C, mu=mu, scaling="sum"), None),
                    f"B-MILSD mu={mu} transductive": (MILSD(C=C, mu=mu, scaling="sum"), unl),
                    "LC-MF inductive": (LCMF(random_state=r), None),
                    "LC-MF transductive": (LCMF(random_state=r), unl)}
            for k, (est, u) in runs.items():
                _, s, m = best_of(lambda: est.fit(train, train.labels, unlabeled=u))
                res.setdefault(k, []).append(((m.predict(test) == test.labels).mean(), s))
        for k, v in res.items():
            a = np.array(v)
            print(f"  webkb-{t:<8} {k:<32} acc {a[:, 0].mean():.3f} ± {a[:, 0].std():.3f}  "
                  f"{a[:, 1].mean():6.2f} s CPU")


GRID_C = [0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]   # milsd.yaml
VARIANTS = {"no-reuse": {}, "reuse": {}, "cd": {"solver": "cd"}, "warm": {"warm_C": True}}


def grid_run(bags, ratio, repeat, mus, n_folds, variants):
    """Inner-CV fits of the C x ``mus`` sample in GridSearchCV's order (C outer, μ, fold)."""
    from sklearn.model_selection import StratifiedKFold

    from milbench.classifiers import milsd as M

    tr, te = stratified(bags.labels, ratio, repeat)
    train, test = bags.subset(tr), bags.subset(te)
    unl = Unlabeled(bags)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=repeat)
                 .split(np.zeros(len(train)), train.labels))[:n_folds]
    inner = [(train.subset(a), train.subset(b)) for a, b in folds]
    out = {}
    for v in variants:
        M.SETUP_CACHE.clear()
        kw = VARIANTS[v]
        fits = []                                     # (C, mu, fold, cpu, J, val acc, test acc)
        for C in GRID_C:
            for mu in mus:
                for f, (A, B) in enumerate(inner):
                    est = MILSD(C=C, mu=mu, scaling="sum", **kw)
                    t = time.process_time()
                    with reuse(v != "no-reuse"):
                        est.fit(A, A.labels, unlabeled=unl.complement(A))
                    cpu = time.process_time() - t
                    fits.append((C, mu, f, cpu, est.diagnostics_["objective"],
                                 float((est.predict(B) == B.labels).mean()),
                                 float((est.predict(test) == test.labels).mean())))
        res = {"fits": np.array(fits), "cpu": sum(r[3] for r in fits)}
        if n_folds == 5:                              # the chosen point and its refit
            a = res["fits"]
            pts = [(C, mu) for C in GRID_C for mu in mus]
            means = [a[(a[:, 0] == C) & (a[:, 1] == mu), 5].mean() for C, mu in pts]
            C, mu = pts[int(np.argmax(means))]         # first best, as GridSearchCV's rank 1
            est = MILSD(C=C, mu=mu, scaling="sum", **kw)
            t = time.process_time()
            with reuse(v != "no-reuse"):
                est.fit(train, train.labels, unlabeled=unl.complement(train))
            res["refit"] = (C, mu, float(max(means)), time.process_time() - t,
                            est.diagnostics_["objective"],
                            float((est.predict(test) == test.labels).mean()))
        out[v] = res
    return out


def qp_report(bags, ratio, C, mu, every):
    """The restricted dual QPs of one B-MILSD fit (every ``every``-th), solved by MILSD's two
    solvers: the active set and CD at the gap the fit would use (qp_gap = 1e-6, MILSD's
    default, and 0.01 of C·ε1 + μ·ε2): CPU seconds and dual objectives."""
    from milbench.classifiers import milsd as M

    tr, _ = stratified(bags.labels, ratio, 0)
    train = bags.subset(tr)
    rec, solve = [], M.SOLVERS["active-set"]

    def spy(K, lin, block, caps, g0=None, tol=1e-12):
        if spy.n % every == 0:
            rec.append((K.copy(), lin.copy(), block.copy(), caps.copy(), g0.copy()))
        spy.n += 1
        return solve(K, lin, block, caps, g0, tol=tol)

    spy.n = 0
    M.SOLVERS["active-set"] = spy
    try:
        est = MILSD(C=C, mu=mu, scaling="sum").fit(train, train.labels,
                                                   unlabeled=Unlabeled(bags).complement(train))
    finally:
        M.SOLVERS["active-set"] = solve
    eps = est.eps1 * C * len(train) + est.eps2 * mu * est.diagnostics_["n_bag_edges"]
    print(f"\nrestricted dual QPs of one fit (C={C}, mu={mu}, ratio {ratio}, {len(train)} bags): "
          f"{len(rec)} of {spy.n} recorded, m = {min(len(r[1]) for r in rec)}.."
          f"{max(len(r[1]) for r in rec)}")
    runs = {"active set": lambda r: M.solve_dual_qp(*r),
            "cd, gap 1e-6(Ce1+me2)": lambda r: M.solve_dual_cd(*r, tol=1e-6 * eps),
            "cd, gap .01(Ce1+me2)": lambda r: M.solve_dual_cd(*r, tol=0.01 * eps)}
    base = None
    for name, f in runs.items():
        cpu, D = 0.0, []
        for r in rec:
            t = time.process_time()
            g, _ = f(r)
            cpu += time.process_time() - t
            K, lin = r[0], r[1]
            D.append(lin @ g - 0.5 * g @ K @ g)
        D = np.array(D)
        base = (cpu, D) if base is None else base
        rel = (base[1] - D) / np.abs(base[1])
        print(f"  {name:<22} {cpu:7.3f} s CPU  x{base[0] / cpu:5.2f} vs active set   dual "
              f"objective below its by max {rel.max():.1e} (mean {rel.mean():.1e})")


def subproblem_objective(prob, P, C, mu, w):
    """Objective of CCCP subproblem (2) at ``w``: ½‖w‖² + C·(linearised hinges) + μ·(edge
    terms), the most violated constraints' values (the 1-slack form's exact slacks)."""
    s = prob.scores(w)
    J = 0.5 * w @ w + C * max(0.0, prob.bag_constraint(s, P[:prob.n])[2])
    if prob.has_graph and mu > 0:
        J += mu * max(0.0, prob.edge_constraint(s, P)[1])
    return J


def solver_report(bags_dir, tasks, ratio, repeats, points):
    """Both QP solvers on the config's splits: fits and their subproblems (module docstring)."""
    from milbench.classifiers import milsd as M

    from benchmarks.methods import _milsd_cell as cell

    fold = cell.RATIOS.index(ratio)
    tag = Path(bags_dir).name.partition("@")[2]
    print(f"\nMILSD solvers, ratio {ratio}, repeats 0..{repeats - 1}, transductive, scaling=sum")
    fits, subs = [], []
    for t in tasks:
        bags, folds = cell.load(Path(bags_dir).parent / f"webkb-{t}@{tag}", repeats)
        for r in range(repeats):
            train, test = cell.cell_split(bags, folds, r, fold)
            unl = Unlabeled(bags).complement(train)
            with reuse():
                MILSD(C=GRID_C[0], mu=0.0, scaling="sum").fit(
                    train, train.labels, unlabeled=unl)                # the setup
                for C, mu in points:
                    calls, cut = [], M.cutting_plane

                    def spy(*a, **k):
                        calls.append((a, k))
                        return cut(*a, **k)

                    row = {}
                    for solver in ("active-set", "cd"):
                        est = MILSD(C=C, mu=mu, scaling="sum", solver=solver)
                        M.cutting_plane = spy if solver == "active-set" else cut
                        try:
                            t0 = time.process_time()
                            est.fit(train, train.labels, unlabeled=unl)
                            cpu = time.process_time() - t0
                        finally:
                            M.cutting_plane = cut
                        row[solver] = (cpu, est.diagnostics_["objective"],
                                       float((est.predict(test) == test.labels).mean()))
                    fits.append((t, r, C, mu, row))
                    for (prob, P, lin_pos, Cs, mus, *rest), k in calls:
                        sub = {}
                        for solver in ("active-set", "cd"):
                            t0 = time.process_time()
                            w = cut(prob, P, lin_pos, Cs, mus, *rest, **{**k, "solver": solver})[0]
                            sub[solver] = (subproblem_objective(prob, P, Cs, mus, w),
                                           time.process_time() - t0)
                        subs.append((sub, Cs * est.eps1 + mus * est.eps2))
                    a, c = row["active-set"], row["cd"]
                    print(f"  webkb-{t:<8} repeat {r} C={C:<6g} mu={mu:<5g} active set {a[0]:6.2f} s"
                          f"  cd {c[0]:6.2f} s (x{a[0] / c[0]:.2f})  J {a[1]:.4f} / {c[1]:.4f}"
                          f"  test acc {a[2]:.4f} / {c[2]:.4f}")
    A = np.array([[f[4]["active-set"][i] for i in range(3)] for f in fits])
    Cd = np.array([[f[4]["cd"][i] for i in range(3)] for f in fits])
    dJ = (Cd[:, 1] - A[:, 1]) / A[:, 1]
    F = np.array([(s["active-set"][0], s["cd"][0], s["active-set"][1], s["cd"][1], tol)
                  for s, tol in subs])
    dF = (F[:, 1] - F[:, 0]) / np.abs(F[:, 0])
    moved = [f"{t} repeat {r} C={C:g} mu={mu:g}" for (t, r, C, mu, _), d in zip(fits, dJ)
             if abs(d) > 1e-9]
    print(f" {len(fits)} fits: CPU {A[:, 0].sum():.1f} s active set, {Cd[:, 0].sum():.1f} s cd "
          f"(x{A[:, 0].sum() / Cd[:, 0].sum():.2f}); J of cd minus active set, relative: "
          f"{dJ.min():+.1e} .. {dJ.max():+.1e}; same test accuracy in "
          f"{int((A[:, 2] == Cd[:, 2]).sum())} of {len(fits)}; mean test acc "
          f"{A[:, 2].mean():.4f} / {Cd[:, 2].mean():.4f}; J differs by more than 1e-9 in "
          f"{moved or 'none'}")
    print(f" {len(subs)} subproblems: CPU {F[:, 2].sum():.1f} s active set, {F[:, 3].sum():.1f} s "
          f"cd (x{F[:, 2].sum() / F[:, 3].sum():.2f}); objective of cd minus active set, "
          f"relative {dF.min():+.1e} .. {dF.max():+.1e}, in units of C·eps1 + mu·eps2 at most "
          f"{((F[:, 1] - F[:, 0]) / F[:, 4]).max():+.1e}; {int((np.abs(dF) > 1e-9).sum())} "
          f"differ by more than 1e-9 relative")


def grid_report(tasks, ratios, mus, n_folds, variants, repeat=0):
    print(f"\nMILSD tuned-grid sample: C in 2^[-5..5] x mu {mus}, {n_folds} of 5 inner folds, "
          f"transductive, scaling=sum, repeat {repeat}")
    scale = 5 / n_folds * 4 / len(mus)
    for t, bags in tasks.items():
        for ratio in ratios:
            res = grid_run(bags, ratio, repeat, mus, n_folds, variants)
            print(f"\n webkb-{t} ratio {ratio}:")
            base = res[variants[0]]
            for v, r in res.items():
                a = r["fits"]
                n = len(a)
                cell = scale * r["cpu"] + r["cpu"] / n
                dJ = (a[:, 4] - base["fits"][:, 4]) / base["fits"][:, 4]
                same_acc = (a[:, 6] == base["fits"][:, 6]).mean()
                ref = variants[0]
                print(f"  {v:<5} {n} fits {r['cpu']:8.1f} s CPU ({r['cpu'] / n:6.2f} s/fit, "
                      f"x{base['cpu'] / r['cpu']:.2f} vs {ref})"
                      f"  cell est. {cell:7.0f} s  J rel. diff vs base max {np.abs(dJ).max():.1e}"
                      f" (mean {dJ.mean():+.1e})  test acc {a[:, 6].mean():.4f}"
                      f" (same as base in {same_acc:.0%} of fits)")
                print("        per C (s/fit): " + " ".join(
                    f"{C:g}:{a[a[:, 0] == C, 3].mean():.2f}" for C in GRID_C))
                if "refit" in r:
                    C, mu, cv, cpu, J, acc = r["refit"]
                    print(f"        chosen C={C:g} mu={mu:g} (CV acc {cv:.4f}); refit {cpu:.1f} s "
                          f"CPU, J {J:.6f}, test acc {acc:.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bags", help="results/bags/webkb-student@<source tag> (siblings give the other tasks)")
    ap.add_argument("--ratio", type=float, default=0.5)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--mu", type=float, default=0.1)
    ap.add_argument("--max-features", type=int, default=3000)
    ap.add_argument("--accuracy", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--grid", action="store_true", help="time the tuned grid under --variants")
    ap.add_argument("--ratios", type=float, nargs="+", default=[0.2])
    ap.add_argument("--grid-mu", type=float, nargs="+", default=[0.1], dest="mus")
    ap.add_argument("--folds", type=int, default=1, choices=range(1, 6))
    ap.add_argument("--tasks", nargs="+", default=["faculty", "student"])
    ap.add_argument("--variants", nargs="+", default=["no-reuse", "reuse", "warm"],
                    choices=list(VARIANTS), help="ratios are to the first")
    ap.add_argument("--qp", action="store_true",
                    help="time the restricted dual QPs of one fit: active set vs CD")
    ap.add_argument("--solvers", action="store_true",
                    help="both QP solvers on the config's splits at --points (needs --bags)")
    ap.add_argument("--points", nargs="+", default=["0.25:0.1", "2:0.01", "32:0.1"],
                    help="C:mu pairs for --solvers")
    a = ap.parse_args()
    if a.solvers:
        solver_report(a.bags, a.tasks, a.ratios[0], a.repeats,
                      [tuple(float(v) for v in p.split(":")) for p in a.points])
        return
    if a.qp:
        bags = load_tasks(a.bags, ("faculty",), a.max_features)["faculty"]
        qp_report(bags, a.ratios[0], a.C, a.mu, 15)
        return
    if a.grid:
        grid_report(load_tasks(a.bags, a.tasks, a.max_features), a.ratios, a.mus, a.folds,
                    a.variants)
        return
    tasks = ("course", "faculty", "student") if a.accuracy else ("student",)
    data = load_tasks(a.bags, tasks, a.max_features)
    bench_student(data["student"], a.ratio, a.C, a.mu)
    bench_protein(a.C, a.mu)
    if a.accuracy:
        accuracy_run(data, 0.2, a.repeats, a.C, a.mu)


if __name__ == "__main__":
    with reuse():       # fits and kernels reused as in a run's cells (milbench.utils.cache)
        main()
