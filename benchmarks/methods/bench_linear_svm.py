"""mi-SVM's linear SVM fits by libsvm (SMO) against the interior point method
(``solver="ipm"``, :mod:`milbench.classifiers._linear_svm`), in the same run, on protein: the
SVM problems a mi-SVM fit with libsvm poses, one after the other, each solved by both.

Data: config/paper/milsd.yaml's ``milsd-protein`` (17k instances x 8 features in a training
part; its bag store results/bags/protein-graph is built by that experiment's run), the training
bags of its outer fold ``--fold``, then inner fold ``--inner`` of a seeded
stratified 5-fold split of them (an inner-CV training set like the tuned cell's), min-max
scaled.  For each C, mi-SVM runs with libsvm for ``--fits`` SVM fits; each problem it posed
(its imputed labels) is then solved by both solvers: CPU seconds, libsvm's pair updates and
the interior point's iterations, and the objective ½‖w‖² + C Σ hinge of each (the interior
point's is never above libsvm's).  scikit-learn's libsvm has no cap on its pair updates; here
it stops at ``--updates`` (a row marked "capped": not converged).  At C = 32, fold 0, inner
fold 1, the 6th problem (``--fits 6``) ran over 10 CPU-minutes uncapped without converging.
Then the whole mi-SVM fit with ``solver="ipm"``.

    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_linear_svm \\
        [--bags results/bags/protein-graph] [--fold 0] [--inner 1] [--C 2 32] [--fits 5] \\
        [--updates 5000000]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from benchmarks import REPO
from milbench.classifiers._linear_svm import LinearSVMIPM, primal_objective
from milbench.classifiers.misvm import MiSVM
from milbench.data.folds import make_folds, split
from milbench.data.store import read_bags
from milbench.experiment.config import load_config

EXP = load_config(REPO / "config" / "paper" / "milsd.yaml")["experiments"]["milsd-protein"]


def training_bags(path, fold, inner):
    """(instance bags, bag labels 0/1) of the inner-CV training set, min-max scaled."""
    bags = read_bags(path)
    folds = make_folds(bags.bag_ids, bags.labels, EXP["protocol"])
    train = bags.subset(split(folds, 0, fold, bags.bag_ids)[0])
    X, y = train.as_list(), (np.asarray(train.labels) > 0).astype(int)
    idx = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[inner][0]
    X, y = [X[i] for i in idx], y[idx]
    scaler = MinMaxScaler().fit(np.vstack(X))
    return [scaler.transform(b) for b in X], y


def problems(bags, y, C, n_fits):
    """The imputed instance labels of mi-SVM's first ``n_fits`` SVM fits with libsvm."""
    out = []
    for k in range(1, n_fits + 1):
        if k == 1:
            out.append(np.repeat(y, [len(b) for b in bags]))
            continue
        m = MiSVM(kernel="linear", C=C, max_iter=k - 1).fit(bags, y)
        if m.diagnostics_["converged"]:
            break
        out.append(m.instance_labels_)
    return out


def timed(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bags", default=str(REPO / "results" / "bags" / "protein-graph"))
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--inner", type=int, default=1)
    ap.add_argument("--C", type=float, nargs="+", default=[2.0, 32.0])
    ap.add_argument("--fits", type=int, default=5)
    ap.add_argument("--updates", type=int, default=5_000_000,
                    help="libsvm's most pair updates a problem (its max_iter)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    bags, y = training_bags(args.bags, args.fold, args.inner)
    X = np.vstack(bags)
    print(f"{len(bags)} bags, {X.shape[0]} instances x {X.shape[1]}")
    for C in args.C:
        print(f"C = {C:g}\n  {'fit':>3} {'positive':>8} {'libsvm s':>9} {'updates':>10} "
              f"{'ipm s':>7} {'iter':>5} {'ratio':>7} {'objective libsvm - ipm':>23}")
        for k, labels in enumerate(problems(bags, y, C, args.fits), 1):
            s, ts = timed(lambda: SVC(kernel="linear", C=C, max_iter=args.updates)
                          .fit(X, labels))
            m, tm = timed(lambda: LinearSVMIPM(C=C).fit(X, labels))
            gap = primal_objective(X, labels, C, s.coef_[0], s.intercept_[0]) \
                - primal_objective(X, labels, C, m.coef_, m.intercept_[0])
            print(f"  {k:3d} {int(labels.sum()):8d} {ts:9.2f} {s.n_iter_[0]:10d} {tm:7.3f} "
                  f"{m.n_iter_[0]:5d} {ts / tm:6.0f}x {gap:23.6g}"
                  f"{'  capped' if s.n_iter_[0] >= args.updates else ''}", flush=True)
        m, tm = timed(lambda: MiSVM(kernel="linear", C=C, solver="ipm").fit(bags, y))
        print(f"  mi-SVM with solver='ipm': {tm:.2f} s, {m.diagnostics_['n_iter']} SVM fits, "
              f"converged {m.diagnostics_['converged']}")


if __name__ == "__main__":
    main()
