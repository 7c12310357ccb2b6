"""WEKA parity: our MI classifiers vs WEKA's own on the same folds: accuracy, agreement, CPU.

Both sides see the same folds (``milbench.data.folds``, stratified 10-fold CV, seed 0) and the same
data: each fold's bags min-max scaled on its training instances (the hydr configs'
``scale: minmax``), exported with :func:`milbench.data.arff.write_mi_arff` for WEKA, so any internal
normalisation WEKA applies (MIDD / MDD / MIEMDD standardise, MIOptimalBall / MISMO normalise,
MILR standardises) is applied on top of identical numbers, as ours does where it has the same
option.  Per classifier and data set the table shows WEKA's and our accuracy over all test bags,
the share of test bags given the same label, and CPU seconds: ours = process CPU of fit +
predict, WEKA = CPU of the ``java`` child (``getrusage(RUSAGE_CHILDREN)``), which includes JVM
start-up (the ZeroR row measures it alone; cpu_ratio_net subtracts it).

Needs java and WEKA 3.6 (``sudo apt-get install -y weka``: /usr/share/java/weka.jar; or set
WEKA_JAR); without them the script says so and exits 0.

    OMP_NUM_THREADS=1 nice python -m benchmarks.parity.bench_weka [--datasets musk1 elephant fox]
        [--classifiers citation-knn midd ...] [--folds 10] [--out results/bench/weka_parity.csv]
"""
from __future__ import annotations

from benchmarks import DATA
import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from milbench import registry
from milbench.data.arff import write_mi_arff
from milbench.data.folds import make_folds, split
from milbench.data.sources import load_builtin, load_dataset
from milbench.preprocessing import BagScaler

DATASETS = ("musk1", "elephant", "fox")
JAR_PATHS = ("/usr/share/java/weka.jar",)
MI = "weka.classifiers.mi."

# label -> (our registry config, WEKA classifier and options), settings matched option by option
# (the estimators' docstrings name the WEKA option each parameter follows).
CASES = {
    "citation-knn": ({"name": "citation-knn", "references": 2, "citers": 4},
                     [MI + "CitationKNN", "-R", "2", "-C", "4", "-H", "1"]),
    "milr": ({"name": "milr", "combine": "noisy-or", "C": 5e5},        # ridge 1e-6 = 1/(2C)
             [MI + "MILR", "-A", "0", "-R", "1e-6"]),
    "midd": ({"name": "midd", "start_bags": "largest", "max_starts": None, "n_refine": None,
              "bag_rule": "noisy-or", "threshold": 0.5},
             [MI + "MIDD", "-N", "1"]),
    "mdd": ({"name": "mdd", "start_bags": "largest", "max_starts": None, "n_refine": None,
             "threshold": 0.5},
            [MI + "MDD", "-N", "1"]),
    "emdd": ({"name": "emdd", "start_bags": 3, "random_state": 1},
             [MI + "MIEMDD", "-N", "1", "-S", "1"]),
    "mi-optimal-ball": ({"name": "mi-optimal-ball", "preprocess": "normalize"},
                        [MI + "MIOptimalBall", "-N", "0"]),
    "mismo-rbf": ({"name": "mi-kernel-svm", "instance_kernel": "rbf", "gamma": 0.01,
                   "normalize": "none", "C": 1.0},
                  [MI + "MISMO", "-C", "1", "-N", "0", "-K",
                   "weka.classifiers.mi.supportVector.MIRBFKernel -G 0.01"]),
    "mismo-poly": ({"name": "mi-kernel-svm", "instance_kernel": "poly", "degree": 1, "gamma": 1.0,
                    "coef0": 0.0, "normalize": "none", "C": 1.0},
                   [MI + "MISMO", "-C", "1", "-N", "0", "-K",
                    "weka.classifiers.mi.supportVector.MIPolyKernel -E 1.0"]),
    "miwrapper-nb": ({"name": "mi-wrapper", "estimator": "naive-bayes"},
                     [MI + "MIWrapper", "-P", "1", "-A", "3", "-W",
                      "weka.classifiers.bayes.NaiveBayes"]),
    "miwrapper-tree": ({"name": "mi-wrapper", "estimator": "tree"},
                       [MI + "MIWrapper", "-P", "1", "-A", "3", "-W",
                        "weka.classifiers.trees.J48"]),
    "miwrapper-svm": ({"name": "mi-wrapper", "estimator": "linear-svm"},
                      [MI + "MIWrapper", "-P", "1", "-A", "3", "-W",
                       "weka.classifiers.functions.SMO"]),
    # SimpleMI -M 3 (minimax, our default statistic) fails in WEKA 3.6.14 ("Attribute names
    # are not unique" in Instances.mergeInstances), so the mean summary (-M 1, WEKA's default)
    "simplemi-tree": ({"name": "mi-simple", "estimator": "tree", "statistic": "mean"},
                      [MI + "SimpleMI", "-M", "1", "-W", "weka.classifiers.trees.J48"]),
    "miboost-stump": ({"name": "mi-boost", "estimator": "stump", "n_estimators": 10},
                      [MI + "MIBoost", "-R", "10", "-W", "weka.classifiers.trees.DecisionStump"]),
}
SLOW = ("midd", "mdd", "emdd")   # WEKA needs ~20-50 CPU s per elephant / fox fold: --slow-folds
ZERO_R = ["weka.classifiers.rules.ZeroR"]     # JVM start-up + reading the two files, no model
_PRED = re.compile(r"^\s*\d+\s+\d+:(\S+)\s+\d+:(\S+)")


def find_weka():
    """(java, weka.jar) or (None, reason)."""
    java = shutil.which("java")
    jar = os.environ.get("WEKA_JAR") or next((p for p in JAR_PATHS if Path(p).exists()), None)
    if java is None or jar is None or not Path(jar).exists():
        missing = " and ".join(n for n, v in (("java", java), ("weka.jar", jar)) if v is None)
        return None, (f"{missing} not found: install WEKA 3.6 with `sudo apt-get install -y weka` "
                      f"(or set WEKA_JAR)")
    return (java, jar), None


def run_weka(java, jar, argv, train, test):
    """(predicted class values of the test bags, CPU seconds of the java process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # evaluation options before the classifier's own, which may end in "-- <base options>"
    out = subprocess.run([java, "-cp", jar, argv[0], "-t", str(train), "-T", str(test), "-p", "0",
                          *argv[1:]], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    preds = [m[2] for m in map(_PRED.match, out.stdout.splitlines()) if m]
    if out.returncode or not preds:
        raise RuntimeError(f"WEKA {' '.join(argv)} failed:\n"
                           f"{out.stderr[-2000:] or out.stdout[-2000:]}")
    return np.array([int(p) for p in preds]), cpu


def run_ours(spec, train, test, seed=0):
    """(predicted labels, process CPU seconds of fit + predict); an unset random_state gets
    ``seed``, as the pipeline does."""
    est = registry.make("classifier", spec)
    if est.get_params().get("random_state", 0) is None:
        est.set_params(random_state=seed)
    c = time.process_time()
    pred = est.fit(train, train.labels).predict(test)
    return np.asarray(pred).astype(int), time.process_time() - c


def load(name, data):
    return load_dataset(name, data) if Path(data).exists() else load_builtin(name, offline=True)


def net_ratio(ours, weka, jvm):
    """ours / (WEKA CPU less JVM start-up); NaN where start-up is ≥ 90 % of WEKA's CPU (the
    difference is then within the start-up's own run-to-run spread)."""
    net = weka - jvm
    return ours / net if net > 0.1 * weka else float("nan")


def parity(bags, cases, n_folds, java, jar, workdir, slow_folds=None, drop_constant=False,
           log=print):
    """Rows (one per case) pooled over the first ``n_folds`` folds of 10-fold CV, seed 0 (the
    first ``slow_folds`` for the :data:`SLOW` cases).  ``drop_constant`` removes, per fold, the
    features constant on the training bags from both sides (WEKA's CitationKNN divides by
    their zero range)."""
    folds_of = {k: min(n_folds, slow_folds or n_folds) if k in SLOW else n_folds for k in cases}
    folds = make_folds(bags.bag_ids, bags.labels, {"kind": "kfold", "folds": 10, "seed": 0})
    acc = {k: dict(n=0, weka=0, ours=0, same=0, cpu_weka=0.0, cpu_ours=0.0) for k in cases}
    zero_r = []
    for f in range(n_folds):
        tr, te, _ = split(folds, 0, f, bags.bag_ids)
        scaler = BagScaler("minmax").fit(bags.subset(tr))
        train, test = scaler.transform(bags.subset(tr)), scaler.transform(bags.subset(te))
        if drop_constant:
            keep = np.ptp(train.instances, axis=0) > 0
            train, test = (b.with_instances(b.instances[:, keep]) for b in (train, test))
        paths = [write_mi_arff(b, Path(workdir, f"{r}.arff"), bag_id_values=bags.bag_ids)
                 for r, b in (("train", train), ("test", test))]
        zero_r.append(run_weka(java, jar, ZERO_R, *paths)[1])
        for k in [k for k in cases if f < folds_of[k]]:
            spec, argv = CASES[k]
            pw, cw = run_weka(java, jar, argv, *paths)
            po, co = run_ours(spec, train, test)
            if len(pw) != len(te):
                raise RuntimeError(f"{k}: WEKA gave {len(pw)} predictions for {len(te)} test bags")
            a = acc[k]
            a["n"] += len(te)
            a["weka"] += int((pw == test.labels).sum())
            a["ours"] += int((po == test.labels).sum())
            a["same"] += int((pw == po).sum())
            a["cpu_weka"] += cw
            a["cpu_ours"] += co
        log(f"  fold {f}: done")
    jvm = float(np.mean(zero_r))           # CPU s of one java run that learns nothing
    rows = [dict(classifier=k, dataset=bags.meta.get("dataset", "?"), folds=folds_of[k],
                 test_bags=a["n"], weka_acc=a["weka"] / a["n"], ours_acc=a["ours"] / a["n"],
                 agreement=a["same"] / a["n"], cpu_ours_s=a["cpu_ours"], cpu_weka_s=a["cpu_weka"],
                 cpu_ratio=a["cpu_ours"] / a["cpu_weka"],
                 cpu_ratio_net=net_ratio(a["cpu_ours"], a["cpu_weka"], folds_of[k] * jvm))
            for k, a in acc.items()]
    rows.append(dict(classifier="(ZeroR: JVM start-up)", dataset=bags.meta.get("dataset", "?"),
                     folds=n_folds, cpu_weka_s=float(np.sum(zero_r))))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--classifiers", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--folds", type=int, default=10, help="run the first N of the 10 folds")
    ap.add_argument("--slow-folds", type=int, default=2,
                    help=f"folds for {', '.join(SLOW)} (WEKA's optimisers are slow; 0 = --folds)")
    ap.add_argument("--drop-constant", action="store_true",
                    help="drop the features constant on each fold's training bags (both sides)")
    ap.add_argument("--out", default="results/bench/weka_parity.csv")
    args = ap.parse_args(argv)
    found, reason = find_weka()
    if found is None:
        print(f"bench_weka skipped: {reason}")
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ds in args.datasets:
            print(f"{ds}:", flush=True)
            rows += parity(load(ds, args.data), args.classifiers, args.folds, *found, tmp,
                           slow_folds=args.slow_folds,
                           drop_constant=args.drop_constant, log=lambda m: print(m, flush=True))
    table = pd.DataFrame(rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False, float_format="%.4g")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep=""))
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
