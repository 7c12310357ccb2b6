"""CVFS-MIL selector fit vs BIG / IIG / FS strategy I (cvfs-mil Fig. 9), wall s, ratio to BIG.

The runtime comparison of the paper's Fig. 9 (cvfs-mil.txt), and optionally a short
cross-validated accuracy comparison with MILR after selection.

    python -m benchmarks.methods.bench_cvfs [--bags results/bags/corel-cats@<source tag>] [--m 200] [--cv 3 --ms 50,200]

Without ``--bags`` (or when the folder is missing) a random 3-view set with Corel's shape
(600 bags × 5 regions × 3 × 256 histogram features) is used and the output says so.  Times are
the best of ``--repeat`` fits (wall), measured in the same run; ratios are vs BIG strategy I.
With ``--cv K`` it also runs a stratified K-fold CV (min-max scaling on the training fold,
selection, MILR) for CVFS and every baseline × strategy and prints accuracy / AUROC.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np


def load(path):
    from milbench.data.bags import Bags
    from milbench.data.store import read_bags

    if path and Path(path).exists():
        b = read_bags(path)
        print(f"data: {path} ({len(b)} bags, {len(b.instances)} instances, views "
              f"{ {k: v[1] - v[0] for k, v in b.views.items()} }, synthetic={b.meta.get('synthetic')})")
        return b
    rng = np.random.default_rng(0)
    n, k, d = 600, 5, 256
    X = rng.dirichlet(np.full(d, 0.3), size=(n * k, 3)).reshape(n * k, 3 * d)
    y = np.r_[np.ones(n // 2), np.zeros(n // 2)].astype(int)
    X[np.repeat(y, k).astype(bool) & (np.arange(n * k) % k == 0), 10] += 0.2
    print("data: RANDOM 3-view stand-in of Corel's shape (no bags folder given/found)")
    return Bags(X, np.arange(0, n * k + 1, k), y, np.arange(n).astype(str),
                views={"hsv": (0, d), "hog": (d, 2 * d), "lbp": (2 * d, 3 * d)})


def selectors(m):
    from milbench.selectors.cvfs import CVFS
    from milbench.selectors.view_baselines import (
        BagInfoGain,
        InstanceInfoGain,
        PairwiseBagReliability,
    )
    return {"cvfs": CVFS(m=m), "big-I": BagInfoGain(m=m, strategy="I"),
            "iig-I": InstanceInfoGain(m=m, strategy="I"),
            "fs-I": PairwiseBagReliability(m=m, strategy="I")}


def runtime(bags, m, repeat):
    from milbench.preprocessing import BagScaler

    X = replace(bags, instances=BagScaler().fit(bags, bags.labels).transform(bags).instances)
    times = {}
    for name, sel in selectors(m).items():
        best = np.inf
        for _ in range(repeat):
            t = time.perf_counter()
            sel.fit(X, X.labels)
            best = min(best, time.perf_counter() - t)
        times[name] = best
        extra = f" (iterations {sel.diagnostics_['n_iter']}, cycle {sel.diagnostics_['cycle_length']})" \
            if name == "cvfs" else ""
        print(f"  {name:<8} fit {best:8.3f}s{extra}")
    base = times["big-I"]
    print("  ratio vs BIG strategy I: " + ", ".join(f"{k} {v / base:.2f}x" for k, v in times.items()))
    return times


def cross_validate(bags, ms, folds, seed=0):
    from sklearn.metrics import accuracy_score, roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    from milbench.classifiers.milr import MILR
    from milbench.classifiers.view_ensemble import ViewEnsemble
    from milbench.preprocessing import BagScaler
    from milbench.selectors.cvfs import CVFS
    from milbench.selectors.view_baselines import (
        BagInfoGain,
        InstanceInfoGain,
        PairwiseBagReliability,
    )
    y = bags.labels
    splits = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))

    def methods(m):
        out = {"cvfs": (CVFS(m=m), MILR())}
        for nm, S in (("big", BagInfoGain), ("iig", InstanceInfoGain), ("fs", PairwiseBagReliability)):
            for st in ("I", "II"):
                out[f"{nm}-{st}"] = (S(m=m, strategy=st), MILR())
            out[f"{nm}-III"] = (S(m=m, strategy="III"), ViewEnsemble(base="milr"))
        return out

    def run(sel, clf):
        acc, auc = [], []
        for tr, te in splits:
            a, b = bags.subset(tr), bags.subset(te)
            sc = BagScaler().fit(a, a.labels)
            a = replace(a, instances=sc.transform(a).instances)
            b = replace(b, instances=sc.transform(b).instances)
            if sel is not None:
                sel.fit(a, a.labels)
                a, b = sel.transform(a), sel.transform(b)
            clf.fit(a, a.labels)
            acc.append(accuracy_score(b.labels, clf.predict(b)))
            auc.append(roc_auc_score(b.labels, clf.decision_function(b)))
        return np.mean(acc), np.std(acc), np.mean(auc)

    a, s, u = run(None, MILR())
    print(f"\n{folds}-fold CV, MILR after selection (accuracy mean ± std, AUROC)")
    print(f"  all {bags.n_features} features: acc {a:.3f} ± {s:.3f}  auroc {u:.3f}")
    for m in ms:
        print(f"  m = {m}")
        for name, (sel, clf) in methods(m).items():
            t = time.perf_counter()
            a, s, u = run(sel, clf)
            print(f"    {name:<8} acc {a:.3f} ± {s:.3f}  auroc {u:.3f}  ({time.perf_counter() - t:.1f}s)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bags", default="results/bags/corel-cats@synthetic",
                    help="a corel-cats store; a real source's is results/bags/corel-cats@src-<hash>")
    ap.add_argument("--m", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cv", type=int, default=0)
    ap.add_argument("--ms", default="50,200")
    a = ap.parse_args()
    bags = load(a.bags)
    print(f"\nselector fit time, m = {a.m} (best of {a.repeat})")
    runtime(bags, a.m, a.repeat)
    if a.cv:
        cross_validate(bags, [int(v) for v in a.ms.split(",")], a.cv)


if __name__ == "__main__":
    main()
