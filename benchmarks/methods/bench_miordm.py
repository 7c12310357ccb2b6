"""MIORDM fit vs one scikit-learn SVC fit (CPU s, ratio per round), same run; miordm.txt Table 5.

    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_miordm [--data ../shared/data] [--repeat 3]
        [--datasets musk1,musk2,tiger,elephant,fox] [--pure-dcd] [--cache]
    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_miordm --faculty
        [--bags results/bags/webkb-faculty@src-6455812d] [--candidates 4]
    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_miordm --density
    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_miordm --baselines
        [mirsvm,kisvm,mildm,citation-knn] [--bags results/bags/webkb-faculty@src-6455812d]

For every dataset: min-max scaling, a stratified 80 % training split (seed 0), MIORDM with
λ = 2⁸, θ = μ = 0.7, RBF γ = 1/d.  Reported (best of ``--repeat``; wall and CPU seconds):
* MIORDM fit time and its rounds / coordinate-descent sweeps;
* one ``sklearn.svm.SVC`` fit (RBF, same γ, C = 1) on MIORDM's final representatives — the
  same number of points and kernel one MIORDM round solves — measured in the same run;
* ratios (CPU seconds, robust to a shared machine): whole fit / SVC and per round / SVC
  (MIORDM should cost a small multiple of an SVC per round);
* the paper's Table 5 CPU time (MATLAB, Intel i7-8500U) for orientation only — different
  language, machine and stopping rule.
``--pure-dcd`` also times MIORDM with ``newton_every=0`` (Eq. 31 sweeps only, no face-Newton
step), to show what the hybrid solver buys.

``--cache`` measures the kernel reuse instead (CPU seconds, same run, same 80 % training bags):
the config/paper/miordm.yaml inner CV, the pipeline's GridSearchCV of min-max scaling + MIORDM
over 4 λ × 3 θ × 3 μ = 36 candidates × 5 folds + the refit, with the kernel cache off
(``milbench.utils.cache.CACHE.disabled()``: every fit computes its kernel) and on ("kernels":
computed / looked up); the chosen parameters and every candidate's score must agree ("same");
and Citation-kNN's GridSearchCV over 4 references × 4 citers × 5 folds + the refit with its
bag-distance tables cached or not.

``--faculty`` measures the sparse kernel on WebKB faculty (config/paper/miordm.yaml
``miordm-faculty``; bags read from the ``--bags`` store) at the 80 % holdout split (seed 0,
split 0), CPU seconds, MIORDM's own ways in this run:
(a) one fit (λ = 2⁸, θ = μ = 0.7, cold cache; run after (b)'s cell): CSR products every round
    (the kernel cache bounded below the packed kernel, as a worker with little memory runs it)
    against the packed kernel computed once; the largest bag-score and dual-coefficient
    differences and whether the representatives are the same;
(b) the tuned cell: the pipeline's GridSearchCV (min-max + MIORDM, 36 candidates × 5 inner
    folds + the refit) in full — CPU, chosen point, test accuracy, kernels computed / looked up,
    cache bytes, peak RSS; then with the kernel cache off on ``--candidates`` candidates (the
    chosen point first, the rest spread over the grid) × 5 folds + the refit of the chosen
    point, scaled to 36 candidates, with every shared candidate's inner-CV score and the test
    accuracy compared; the experiment's MIORDM CPU = 50 splits × the cell.

``--baselines [names]`` measures the same sharing on the config's other kernel / distance
baselines on WebKB faculty (the 80 % split above, CPU seconds, kernel cache off and on in this
run): MIRSVM, KI-SVM, MILDM (packed kernel or data-only tables kept for every grid point of a
fold) and Citation-kNN (Hausdorff tables).  Per method: one fit at the grid's middle point with
the largest test bag-score difference; the tuned cell (the pipeline's GridSearchCV, all
candidates × 5 inner folds + the refit) off and on in full, the chosen point, the largest
inner-CV score difference, test accuracy and AUROC, and the 50 splits' CPU.

``--density`` times one RBF kernel block (3000 × 3000 random sparse instances against 700 of
them, d = 3000) dense vs CSR at densities 1–20 %: where odm.SPARSE_MAX_DENSITY comes from.
"""
from __future__ import annotations

from benchmarks import DATA, REPO
import argparse
import contextlib
from pathlib import Path

from benchmarks._timing import best_of
from milbench.utils.cache import reuse

PAPER_TABLE5 = {"musk1": 0.08, "musk2": 1.16, "tiger": 0.35, "elephant": 0.30, "fox": 0.36}
PAPER_GRID = {"lam": [128.0, 256.0, 512.0, 1024.0], "theta": [0.6, 0.7, 0.8],
              "mu": [0.6, 0.7, 0.8]}


@contextlib.contextmanager
def cache_bound(nbytes):
    """Bound the kernel cache at ``nbytes`` for the block, as a method job's runner bounds it
    per worker (:func:`milbench.utils.cache.bound_per_worker`): below five times the packed
    kernel, MIORDM computes its kernel blocks through CSR every round."""
    from milbench.utils.cache import CACHE
    kept, CACHE.max_bytes = CACHE.max_bytes, nbytes
    try:
        yield
    finally:
        CACHE.max_bytes = kept


def faculty_split(bags_dir):
    """WebKB faculty's 80 % holdout split 0 (seed 0), as config/paper/miordm.yaml draws it."""
    import numpy as np

    from milbench.data.folds import make_folds, split
    from milbench.data.store import read_bags

    bags = read_bags(bags_dir)
    folds = make_folds(bags.bag_ids, bags.labels,
                       {"kind": "holdout", "train": 0.8, "repeats": 1, "seed": 0})
    tr, te, _ = split(folds, 0, 0, bags.bag_ids)
    train, test = bags.subset(tr), bags.subset(te)
    X = train.instances
    print(f"webkb-faculty split 0: {len(train.labels)} training bags, {X.shape[0]} x "
          f"{X.shape[1]} instances, {np.count_nonzero(X) / X.size:.2%} non-zero; "
          f"{len(test.labels)} test bags", flush=True)
    return train, test


# config/paper/miordm.yaml's baselines on WebKB faculty: spec, one fit's parameters (the grid's
# middle point)
BASELINES = {
    "mirsvm": ({"name": "mirsvm", "kernel": "rbf", "tune": {"C": [0.1, 1.0, 10.0, 100.0]}},
               {"C": 1.0}),
    "kisvm": ({"name": "kisvm", "kernel": "rbf", "tune": {"C": [0.1, 1.0, 10.0, 100.0]}},
              {"C": 1.0}),
    "mildm": ({"name": "mildm", "estimator": "knn", "tune": {"m": [0.05, 0.1, 0.2, 0.5]}},
              {"m": 0.1}),
    "citation-knn": ({"name": "citation-knn", "metric": "min",
                      "tune": {"references": [1, 2, 3], "citers": [2, 4, 6]}},
                     {"references": 2, "citers": 4}),
}


def baselines_table(bags_dir, names):
    """Kernel cache off (every fit computes its kernel / tables) vs on (the packed kernel and
    data-only tables shared per fold), CPU seconds, same run."""
    import time

    import numpy as np
    from sklearn.metrics import roc_auc_score

    from milbench.experiment.fold import build_estimator
    from milbench.preprocessing import BagScaler
    from milbench.registry import make
    from milbench.utils.cache import CACHE

    train, test = faculty_split(bags_dir)
    sc = BagScaler("minmax").fit(train)
    str_, ste = sc.transform(train), sc.transform(test)

    ways = (("OFF", CACHE.disabled), ("ON", contextlib.nullcontext))
    total = {"OFF": 0.0, "ON": 0.0}
    for name in names:
        spec, point = BASELINES[name]
        one = {}
        for label, context in ways:
            CACHE.clear()
            with context():
                m = make("classifier", {**{k: v for k, v in spec.items() if k != "tune"},
                                        **point})
                if "random_state" in m.get_params():      # as build_estimator seeds it
                    m.set_params(random_state=0)
                t = time.process_time()
                m.fit(str_, train.labels)
                one[label] = (time.process_time() - t, m.decision_function(ste))
        d = np.abs(one["ON"][1] - one["OFF"][1]).max()
        print(f"{name} one fit {point}: cache off {one['OFF'][0]:.2f} s, on "
              f"{one['ON'][0]:.2f} s, x{one['OFF'][0] / one['ON'][0]:.1f}; max |test bag "
              f"score diff| {d:.1e}", flush=True)
        cell = {}
        for label, context in ways:
            CACHE.clear()
            with context():
                est = build_estimator("minmax", {"name": "none"}, spec)
                t = time.process_time()
                est.fit(train, train.labels)
                cpu = time.process_time() - t
                acc = float((est.predict(test) == test.labels).mean())
                auc = roc_auc_score(test.labels, est.decision_function(test))
            cell[label] = (cpu, est, acc, auc)
            total[label] += cpu
        (o_cpu, o, o_acc, o_auc), (n_cpu, n, n_acc, n_auc) = cell["OFF"], cell["ON"]
        scores_diff = np.abs(o.cv_results_["mean_test_score"]
                             - n.cv_results_["mean_test_score"]).max()
        print(f"{name} tuned cell ({len(n.cv_results_['params'])} candidates x 5 + refit): off "
              f"{o_cpu:.1f} s, on {n_cpu:.1f} s, x{o_cpu / n_cpu:.1f}; chosen off "
              f"{o.best_params_} on {n.best_params_}; max |inner-CV score diff| "
              f"{scores_diff:.4f}; test accuracy off {o_acc:.4f} on {n_acc:.4f}, AUROC off "
              f"{o_auc:.4f} on {n_auc:.4f}; 50 splits: off {50 * o_cpu / 3600:.2f} CPU-h, on "
              f"{50 * n_cpu / 3600:.2f} CPU-h", flush=True)
    print(f"all tuned cells: cache off {total['OFF']:.1f} s, on {total['ON']:.1f} s, "
          f"x{total['OFF'] / total['ON']:.1f}; 50 splits: off {50 * total['OFF'] / 3600:.2f} "
          f"CPU-h, on {50 * total['ON'] / 3600:.2f} CPU-h", flush=True)


def faculty_table(bags_dir, n_part):
    import resource
    import time

    import numpy as np

    from milbench.classifiers.miordm import MIORDM
    from milbench.experiment.fold import build_estimator
    from milbench.preprocessing import BagScaler
    from milbench.utils.cache import CACHE

    train, test = faculty_split(bags_dir)

    # (b) the tuned cell, cache on first (peak RSS of this process = that cell's)
    spec = {"name": "miordm", "kernel": "rbf", "tune": PAPER_GRID}
    CACHE.clear()
    full = build_estimator("minmax", {"name": "none"}, spec)
    t = time.process_time()
    full.fit(train, train.labels)
    full_cpu = time.process_time() - t
    full_acc = float((full.predict(test) == test.labels).mean())
    cache_mib = CACHE.nbytes / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    params = full.cv_results_["params"]
    best = full.best_index_
    print(f"(b) tuned cell, kernel cache on: {full_cpu:.1f} s CPU for 36 x 5 + refit "
          f"({full_cpu / 181:.2f} s per fit); chosen {full.best_params_}, inner CV "
          f"{full.best_score_:.4f}, test accuracy {full_acc:.4f}; kernels computed/looked up "
          f"{CACHE.misses}/{CACHE.hits}, cache {cache_mib:.0f} MiB, peak RSS {peak:.0f} MiB",
          flush=True)
    # (a) one fit
    sc = BagScaler("minmax").fit(train)
    str_, ste = sc.transform(train), sc.transform(test)
    kw = dict(lam=2.0 ** 8, theta=0.7, mu=0.7, random_state=0)
    fits = {}
    for label, context in (("CSR/round", lambda: cache_bound(0)),
                           ("packed", contextlib.nullcontext)):
        CACHE.clear()
        with context():
            t = time.process_time()
            m = MIORDM(**kw).fit(str_, train.labels)
            fit_cpu = time.process_time() - t
            fits[label] = (fit_cpu, m, m.decision_function(ste))
    ref = fits["CSR/round"]
    print("(a) one fit, lam=2^8 theta=mu=0.7 (cpu s; vs CSR/round: max |bag score diff| on the "
          "test bags, max |dual coef diff|, same representatives, rounds):")
    for label, (c, m, d) in fits.items():
        print(f"  {label:10s} {c:7.2f} s  x{ref[0] / c:5.2f}  {np.abs(d - ref[2]).max():.1e}  "
              f"{np.abs(m.dual_coef_ - ref[1].dual_coef_).max():.1e}  "
              f"{np.array_equal(m.rep_index_, ref[1].rep_index_)}  {m.diagnostics_['n_iter']}",
              flush=True)

    pick = [int(best)] + [int(i) for i in np.linspace(0, len(params) - 1, n_part).round()
                          if i != best][:n_part - 1]
    CACHE.clear()
    with CACHE.disabled():
        est = build_estimator("minmax", {"name": "none"}, spec)
        est.set_params(param_grid=[{k: [v] for k, v in params[i].items()} for i in pick])
        t = time.process_time()
        est.fit(train, train.labels)
        part = time.process_time() - t
        part_acc = float((est.predict(test) == test.labels).mean())
    one = fits["packed"][0]
    off_cell = (part - one) * len(params) / len(pick) + one
    same = [bool(est.cv_results_["mean_test_score"][j] == full.cv_results_["mean_test_score"][i])
            for j, i in enumerate(pick)]
    print(f"    tuned cell, kernel cache off, on {len(pick)} candidates x 5 + refit: {part:.1f} s "
          f"CPU -> ~{off_cell:.0f} s for the cell (36 candidates; refit ~ the packed fit of (a)); "
          f"chosen {est.best_params_}, test accuracy {part_acc:.4f}; candidates {pick} inner-CV "
          f"scores equal to the cached cell's: {same}", flush=True)
    print(f"    cell ratio off/on {off_cell / full_cpu:.2f}; miordm-faculty MIORDM (50 splits): "
          f"off ~{50 * off_cell / 3600:.1f} CPU-h, on {50 * full_cpu / 3600:.1f} CPU-h",
          flush=True)


def density_table():
    import numpy as np
    import scipy.sparse as sp

    from milbench.classifiers._kernels import kernel_matrix, sq_norms

    rng = np.random.default_rng(0)
    print("RBF block 3000 x 700, d = 3000, cpu s (best of 3): density, dense, CSR, dense/CSR")
    for density in (0.01, 0.02, 0.05, 0.1, 0.2):
        X = sp.random(3000, 3000, density=density, random_state=rng, format="csr").toarray()
        R = X[rng.choice(3000, 700, replace=False)]
        xn, rn = sq_norms(X), sq_norms(R)
        Xs, Rs = sp.csr_matrix(X), sp.csr_matrix(R)
        dense = best_of(lambda: kernel_matrix(X, R, "rbf", 1 / 3000, xn, rn), 3).cpu
        csr = best_of(lambda: kernel_matrix(Xs, Rs, "rbf", 1 / 3000, xn, rn), 3).cpu
        print(f"  {density:4.2f} {dense:7.3f} {csr:7.3f} {dense / csr:6.2f}", flush=True)


def cache_table(names, data):
    import numpy as np

    from milbench.data.folds import make_folds, split
    from milbench.data.sources import load_dataset
    from milbench.experiment.fold import build_estimator
    from milbench.utils.cache import CACHE, disabled

    ways = {"off": disabled, "cached": contextlib.nullcontext}
    print(f"{'dataset':9s} {'bags':>4s} {'inst':>5s} | grid 36x5 + refit cpu s: {'off':>8s} "
          f"{'cached':>8s} {'ratio':>5s} {'kernels':>7s} | same")
    for name in names:
        bags = load_dataset(name, data)
        folds = make_folds(bags.bag_ids, bags.labels,
                           {"kind": "holdout", "train": 0.8, "repeats": 1, "seed": 0})
        tr, _, _ = split(folds, 0, 0, bags.bag_ids)
        train = bags.subset(tr)
        grid, scores = {}, {}
        for label, context in ways.items():
            CACHE.clear()
            est = build_estimator("minmax", {"name": "none"},
                                  {"name": "miordm", "kernel": "rbf", "tune": PAPER_GRID})
            with context():
                grid[label] = best_of(lambda: est.fit(train, train.labels)).cpu
            scores[label] = (est.best_params_, est.cv_results_["mean_test_score"])
        kernels = f"{CACHE.misses}/{CACHE.hits + CACHE.misses}"   # of the cached run (the last)
        same = (scores["off"][0] == scores["cached"][0]
                and np.array_equal(scores["off"][1], scores["cached"][1]))
        print(f"{name:9s} {len(train):4d} {len(train.instances):5d} | {'':24s} "
              f"{grid['off']:8.2f} {grid['cached']:8.2f} {grid['off'] / grid['cached']:5.2f} "
              f"{kernels:>7s} | {same}", flush=True)
        knn = {}
        for label, context in ways.items():
            CACHE.clear()
            est = build_estimator("minmax", {"name": "none"}, {"name": "citation-knn",
                                  "tune": {"references": [1, 2, 3, 4], "citers": [2, 4, 6, 8]}})
            with context():
                t = best_of(lambda: est.fit(train, train.labels)).cpu
            knn[label] = (t, est.best_params_, est.cv_results_["mean_test_score"])
        same = (knn["off"][1] == knn["cached"][1]
                and np.array_equal(knn["off"][2], knn["cached"][2]))
        print(f"{'':9s} Citation-kNN grid 16x5 + refit, cpu s: cache off {knn['off'][0]:.2f}, "
              f"cached {knn['cached'][0]:.2f}, ratio {knn['off'][0] / knn['cached'][0]:.2f} | "
              f"{same}", flush=True)


def main():
    from sklearn.svm import SVC

    from milbench.classifiers.miordm import MIORDM
    from milbench.data.folds import make_folds, split
    from milbench.data.sources import load_dataset
    from milbench.preprocessing import BagScaler

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--datasets", default="musk1,musk2,tiger,elephant,fox")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pure-dcd", action="store_true")
    ap.add_argument("--cache", action="store_true")
    ap.add_argument("--faculty", action="store_true")
    ap.add_argument("--bags", default=str(REPO / "results" / "bags" / "webkb-faculty@src-6455812d"))
    ap.add_argument("--candidates", type=int, default=4,
                    help="--faculty: candidates of the cell timed with the kernel cache off")
    ap.add_argument("--density", action="store_true")
    ap.add_argument("--baselines", default=None, nargs="?", const=",".join(BASELINES),
                    help="comma-separated subset of " + ",".join(BASELINES))
    args = ap.parse_args()
    if args.density:
        return density_table()
    if args.faculty:
        return faculty_table(args.bags, args.candidates)
    if args.baselines:
        return baselines_table(args.bags, args.baselines.split(","))
    if not Path(args.data).exists():
        raise SystemExit(f"{args.data} not found (pass --data)")
    if args.cache:
        return cache_table(args.datasets.split(","), args.data)

    head = (f"{'dataset':9s} {'bags':>4s} {'inst':>5s} {'rounds':>6s} {'sweeps':>6s} "
            f"{'fit s':>7s} {'cpu s':>7s} {'paper s':>7s} {'SVC cpu':>8s} {'fit/SVC':>8s} "
            f"{'round/SVC':>9s}" + (f" {'pureDCD cpu':>11s}" if args.pure_dcd else ""))
    print(head)
    for name in args.datasets.split(","):
        bags = load_dataset(name, args.data)
        folds = make_folds(bags.bag_ids, bags.labels,
                           {"kind": "holdout", "train": 0.8, "repeats": 1, "seed": 0})
        tr, _, _ = split(folds, 0, 0, bags.bag_ids)
        train = BagScaler("minmax").fit_transform(bags.subset(tr))
        X = [b.astype(float) for b in train.as_list()]
        y = train.labels.astype(int)
        kw = dict(lam=2.0 ** 8, theta=0.7, mu=0.7, random_state=0)
        wall, cpu, m = best_of(lambda: MIORDM(**kw).fit(X, y), args.repeat)
        R = m.representatives_
        gamma = 1.0 / R.shape[1]
        svc_cpu = best_of(
            lambda: SVC(C=1.0, kernel="rbf", gamma=gamma).fit(R, y), max(args.repeat, 10)).cpu
        d = m.diagnostics_
        line = (f"{name:9s} {len(X):4d} {sum(map(len, X)):5d} {d['n_iter']:6d} {d['sweeps']:6d} "
                f"{wall:7.3f} {cpu:7.3f} {PAPER_TABLE5.get(name, float('nan')):7.2f} "
                f"{svc_cpu:8.4f} {cpu / svc_cpu:8.1f} {cpu / d['n_iter'] / svc_cpu:9.1f}")
        if args.pure_dcd:
            pw = best_of(lambda: MIORDM(**kw, newton_every=0).fit(X, y), 1).cpu
            line += f" {pw:11.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    with reuse():       # fits and kernels reused as in a run's cells (milbench.utils.cache)
        main()
