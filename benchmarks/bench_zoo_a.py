"""Median fit time of mi-SVM, MI-SVM, set-kernel SVM and Citation-kNN on the five benchmarks.

One stratified 80/20 split per repeat (miordm's protocol), scaling fitted on the training bags
(configurations of tests/test_zoo_realdata.py); the median fit time over ``--repeats`` splits
is printed (scaling excluded).  Citation-kNN is lazy, so its
fit + predict time is also shown next to miordm.txt Table 5 (C-KNN, MATLAB, CPU seconds):
the ratio column is Table 5 / ours (target ≥ 10× on musk2).

    OMP_NUM_THREADS=1 python benchmarks/bench_zoo_a.py [--data ../shared/data] [--repeats 3]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit

from milbench.classifiers.citation_knn import CitationKNN
from milbench.classifiers.misvm import MISVM, MiSVM
from milbench.classifiers.set_kernel import SetKernelSVM
from milbench.data.sources import load_dataset
from milbench.preprocessing import BagScaler

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DATASETS = ("musk1", "musk2", "elephant", "fox", "tiger")
# miordm.txt Table 5, C-KNN training time (CPU s)
TABLE5_CKNN = {"musk1": 1.41, "musk2": 300.58, "tiger": 26.62, "elephant": 29.84, "fox": 30.81}


def models(dataset):
    """(scaling, estimator) per classifier: the configurations of tests/test_zoo_realdata.py."""
    musk = dataset.startswith("musk")
    svm = ("zscore", dict(kernel="rbf", C=10.0)) if musk else ("none", dict(kernel="linear", C=1.0))
    return {
        "mi-svm": (svm[0], MiSVM(**svm[1])),
        "MI-svm": (svm[0], MISVM(**svm[1])),
        "mi-kernel-svm": ("zscore", SetKernelSVM(instance_kernel="rbf", C=10.0)),
        "citation-knn": ("zscore", CitationKNN(references=2, citers=4)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    args = ap.parse_args()
    print(f"{'dataset':<9} {'classifier':<14} {'fit s (median)':>15} {'fit+predict s':>14} "
          f"{'Table 5 s':>10} {'ratio':>7}")
    for ds in args.datasets:
        bags = load_dataset(ds, args.data)
        y = bags.labels.astype(int)
        splits = StratifiedShuffleSplit(args.repeats, test_size=0.2, random_state=0)
        split = list(splits.split(np.zeros(len(y)), y))
        for name, (scale, est) in models(ds).items():
            fit_t, all_t = [], []
            for tr, te in split:
                sc = BagScaler(scale).fit(bags.subset(tr))
                Xtr, ytr, Xte = sc.transform(bags.subset(tr)), y[tr], sc.transform(bags.subset(te))
                t0 = time.perf_counter()
                m = est.__class__(**est.get_params()).fit(Xtr, ytr)
                t1 = time.perf_counter()
                m.predict(Xte)
                t2 = time.perf_counter()
                fit_t.append(t1 - t0)
                all_t.append(t2 - t0)
            line = (f"{ds:<9} {name:<14} {np.median(fit_t):>15.3f} {np.median(all_t):>14.3f}")
            if name == "citation-knn":
                ref = TABLE5_CKNN[ds]
                line += f" {ref:>10.2f} {ref / np.median(all_t):>6.0f}x"
            print(line, flush=True)


if __name__ == "__main__":
    main()
