"""Deep MIL networks: CPU of one fit on musk2 against MILR and MI-SVM in the same process, and
how much a "best test epoch" figure inflates the honest last-epoch one.

    python -m benchmarks.methods.bench_deep [--epochs 50] [--repeats 1]
    python -m benchmarks.methods.bench_deep --inflation musk1 [--folds 10] [--methods mi-Net MI-Net]

Fit CPU: every method on all of musk2 (min-max scaled as the workflow does; the deep networks
z-score on top, their ``standardize``), Wang et al.'s settings for the MI-Net family (musk2:
lr 5e-4, weight decay .03), Ilse et al.'s optimiser for attention and DSMIL; MILR (C = 1,
softmax) and MI-SVM (RBF, C = 10).  Ratios are to MILR's and MI-SVM's CPU.

Inflation: one stratified ``--folds``-fold split (seed 0); each network is fitted on the
training folds and, through its ``epoch_callback``, scored on the test fold after every epoch.
The honest figure is the last epoch's accuracy; "best test epoch" takes, per fold, the epoch
with the highest test accuracy (the practice of DSMIL's official script).
"""
from benchmarks import DATA
import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from milbench.data.sources import load_dataset  # noqa: E402
from milbench.preprocessing import BagScaler  # noqa: E402
from milbench.registry import make  # noqa: E402

from benchmarks._timing import best_of  # noqa: E402

# Wang et al.'s official learning rate / weight decay per data set
WANG = {"musk1": (5e-4, 0.005), "musk2": (5e-4, 0.03), "fox": (1e-4, 0.01),
        "tiger": (5e-4, 0.005), "elephant": (1e-4, 0.005)}


def deep_specs(dataset, epochs):
    lr, wd = WANG[dataset]
    wang = {"learning_rate": lr, "weight_decay": wd, "epochs": epochs}
    ilse = {"optimizer": "adam", "learning_rate": 5e-4, "weight_decay": 5e-5, "epochs": epochs}
    return {"mi-Net": {"name": "mi-net", **wang},
            "MI-Net": {"name": "MI-net", **wang},
            "MI-Net-DS": {"name": "MI-net", "variant": "ds", **wang},
            "MI-Net-RC": {"name": "MI-net", "variant": "rc",
                          "hidden_layer_sizes": [128, 128, 128], **wang},
            "Attention": {"name": "attention-mil", **ilse},
            "Gated-Attention": {"name": "gated-attention-mil", **ilse},
            "DSMIL": {"name": "dsmil", **ilse}}


def load(dataset):
    bags = BagScaler("minmax").fit_transform(load_dataset(dataset, DATA))
    X = bags.instances.astype(float)
    return list(np.split(X, np.cumsum(bags.sizes)[:-1])), np.asarray(bags.labels)


def fit_cpu(a):
    bags, y = load("musk2")
    print(f"musk2: {len(bags)} bags, {sum(map(len, bags))} instances, {bags[0].shape[1]} "
          f"features; one fit on all bags, best of {a.repeats}; CPU seconds")
    base = {"MILR": {"name": "milr", "C": 1.0},
            "MI-SVM": {"name": "MI-svm", "kernel": "rbf", "C": 10.0}}
    cpu = {}
    for label, spec in {**base, **deep_specs("musk2", a.epochs)}.items():
        seed = {} if label in base else {"random_state": 0}
        cpu[label] = best_of(lambda: make("classifier", {**spec, **seed}).fit(bags, y),
                             a.repeats).cpu
    for label, t in cpu.items():
        print(f"{label:16s} {t:8.2f} s   x MILR {t / cpu['MILR']:7.1f}   "
              f"x MI-SVM {t / cpu['MI-SVM']:6.2f}")


def inflation(a):
    bags, y = load(a.inflation)
    folds = StratifiedKFold(a.folds, shuffle=True, random_state=0).split(y, y)
    specs = deep_specs(a.inflation, a.epochs)
    rows = {label: [] for label in a.methods}
    for tr, te in folds:
        test, yt = [bags[i] for i in te], y[te]
        for label in a.methods:
            acc = []

            def score(est, epoch):
                acc.append(np.mean((est.decision_function(test) > 0) == yt))

            make("classifier", {**specs[label], "random_state": 0, "epoch_callback": score}) \
                .fit([bags[i] for i in tr], y[tr])
            rows[label].append((acc[-1], max(acc), int(np.argmax(acc))))
    print(f"{a.inflation}: {a.folds}-fold CV (seed 0), {a.epochs} epochs; mean test accuracy")
    print(f"{'method':16s} {'last epoch':>10s} {'best test epoch':>16s} {'inflation':>10s}")
    for label, r in rows.items():
        last, best = np.mean([x[0] for x in r]), np.mean([x[1] for x in r])
        print(f"{label:16s} {last:10.3f} {best:16.3f} {best - last:+10.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--inflation", choices=sorted(WANG), help="data set of the inflation check")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--methods", nargs="+", default=["MI-Net", "Attention"],
                    choices=list(deep_specs("musk1", 1)))
    a = ap.parse_args()
    inflation(a) if a.inflation else fit_cpu(a)


if __name__ == "__main__":
    main()
