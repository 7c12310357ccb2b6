"""Data scale: time and peak RSS of the store, MILR, MIORDM, Citation-kNN at 1e4 vs 1e5 vs 1e6.

The Parquet bag store and the three methods on synthetic bag data (d = 20, bags of ~10).

    python -m benchmarks.workflow.bench_scale [--sizes 1e4 1e5 1e6] [--budget-s 120] [--budget-gib 4]

Every (method, size) runs in its own subprocess, so the peak resident memory (ru_maxrss) is
that run's alone; the table shows it next to the RSS right before the method started (imports +
data), the time, and the growth exponent k of time ~ N^k between consecutive sizes.
A run whose estimated time exceeds --budget-s or whose estimated memory exceeds --budget-gib
(this is a shared machine) is not run: it prints `skipped (estimated ...)`. The estimate
extrapolates the previous size's measurement with the method's complexity (store, MILR: N;
Citation-kNN: N^2 time and N x n_bags memory; MIORDM: n_bags^2 kernel, N x n_bags scores).
Runs skipped for memory are then *probed*: started under an address-space cap
(RLIMIT_AS = current + budget) for at most 60 s, to show what the code does today when the
memory is not there (a clean error or not, and how soon).
Training uses 80 % of the bags, prediction the other 20 %.
"""
from benchmarks import REPO
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

D, BAG = 20, 10
ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
METHODS = {
    # name: (import path or None, time exponent in N, memory model)
    "store": (None, 1.0),
    "check_bags": (None, 1.0),
    "milr": ("milbench.classifiers.milr:MILR", 1.0),
    "miordm": ("milbench.classifiers.miordm:MIORDM", 2.0),
    "citation-knn": ("milbench.classifiers.citation_knn:CitationKNN", 2.0),
}


def n_bags(n):
    return max(2, n // BAG)


def est_bytes(method, n):
    """Rough peak bytes beyond the data for one run (float64 everywhere the code uses it)."""
    b = n_bags(n)
    tr = int(0.8 * b)
    Ntr = int(0.8 * n)
    if method == "citation-knn":
        # fit: instance-to-bag table (N_tr x n_tr) + one 4096 x N_tr block + D (n_tr^2) and
        # np.partition's copy of it (milbench.classifiers.distances.bag_distances, CitationKNN._fit)
        return 8 * (Ntr * tr + min(4096, Ntr) * Ntr + 2 * tr * tr)
    if method == "miordm":
        # H and yy (n_tr^2 each) + instance scores K(X, R_sv) (N_tr x n_tr) + dual solver state
        return 8 * (3 * tr * tr + Ntr * tr)
    return 8 * n * D * 6  # store / check_bags / MILR: a handful of float64 copies of X


# --------------------------------------------------------------------------------- child side
def make_bags(n, seed=0):
    import numpy as np

    from milbench.data.bags import Bags

    rng = np.random.default_rng(seed)
    b = n_bags(n)
    sizes = rng.integers(BAG // 2, BAG + BAG // 2 + 1, size=b)
    sizes = np.maximum(1, np.round(sizes * n / sizes.sum())).astype(np.int64)
    sizes[-1] = max(1, sizes[-1] + n - sizes.sum())
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    X = rng.standard_normal((int(offsets[-1]), D), dtype=np.float32)
    y = (np.arange(b) % 2).astype(np.int8)
    X[offsets[:-1][y == 1], :3] += 2.0  # one witness instance per positive bag
    return Bags(X, offsets, y, np.arange(b).astype(str),
                views={"a": (0, D // 2), "b": (D // 2, D)}, meta={"synthetic": True})


def rss_mb(field="VmRSS"):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(method, n, cap_gib=None):
    import numpy as np

    bags = make_bags(n)
    times = {}
    if METHODS[method][0]:
        mod, cls = METHODS[method][0].split(":")
        Est = getattr(__import__(mod, fromlist=[cls]), cls)
    import sklearn  # noqa: F401 - imported before the baseline so it is not counted
    base = rss_mb()
    if cap_gib:
        limit = int(rss_mb("VmSize") * 2**20 + cap_gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    out = {"n": int(len(bags.instances)), "bags": len(bags), "base_mb": base}
    try:
        if method == "store":
            from milbench.data.store import read_bags, write_bags

            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                write_bags(bags, Path(tmp, "ds"))
                times["write"] = time.perf_counter() - t
                out["file_mb"] = sum(f.stat().st_size for f in Path(tmp, "ds").iterdir()) / 2**20
                t = time.perf_counter()
                full = read_bags(Path(tmp, "ds"))
                times["read"] = time.perf_counter() - t
                t = time.perf_counter()
                part = read_bags(Path(tmp, "ds"), views=["a"])
                times["read 1 view"] = time.perf_counter() - t
                assert part.instances.shape == (len(full.instances), D // 2)
                t = time.perf_counter()
                v = full.view("b")
                np.asarray(v.instances).sum()
                times["view slice"] = time.perf_counter() - t
        elif method == "check_bags":
            from milbench.data.bags import check_bags

            t = time.perf_counter()
            check_bags(bags, bags.labels)
            times["check_bags"] = time.perf_counter() - t
        else:
            idx = np.random.default_rng(1).permutation(len(bags))
            cut = int(0.8 * len(bags))
            tr, te = bags.subset(np.sort(idx[:cut])), bags.subset(np.sort(idx[cut:]))
            est = Est()
            t = time.perf_counter()
            est.fit(tr, tr.labels)
            times["fit"] = time.perf_counter() - t
            t = time.perf_counter()
            s = est.decision_function(te)
            times["predict"] = time.perf_counter() - t
            from sklearn.metrics import roc_auc_score

            out["auroc"] = float(roc_auc_score(te.labels, s))
    except BaseException as e:  # noqa: BLE001 - reported, including MemoryError
        out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    out["times"] = times
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(out))


# -------------------------------------------------------------------------------- parent side
def run_child(method, n, cap_gib=None, timeout=None):
    cmd = [sys.executable, "-m", __spec__.name, "--child", method, "--n", str(n)]
    if cap_gib:
        cmd += ["--cap-gib", str(cap_gib)]
    t = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout,
                             cwd=REPO)
    except subprocess.TimeoutExpired:
        return {"error": f"still running after {timeout} s (killed)", "wall": timeout}
    wall = time.perf_counter() - t
    for line in res.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["wall"] = wall
            return r
    tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or [""]
    return {"error": f"exit {res.returncode} ({'killed by signal' if res.returncode < 0 else ''}"
                     f"{tail[0][:200]})", "wall": wall}


def available_gib():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--budget-s", type=float, default=120.0)
    ap.add_argument("--budget-gib", type=float, default=4.0)
    ap.add_argument("--child")
    ap.add_argument("--n", type=int)
    ap.add_argument("--cap-gib", type=float)
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.n, a.cap_gib)

    print(f"d = {D}, bags of ~{BAG}; budget {a.budget_s:.0f} s and {a.budget_gib:.1f} GiB per "
          f"run; MemAvailable now {available_gib():.1f} GiB")
    print(f"{'method':<13} {'N':>8} {'bags':>7}  {'times (s)':<52} {'base MB':>8} {'peak MB':>8} "
          f"{'k':>5}  note")
    for method in a.methods:
        imp = METHODS[method][0]
        if imp:
            mod = imp.split(":")[0]
            path = REPO / "workflow" / (mod.replace(".", "/") + ".py")
            if not path.exists():
                print(f"{method:<13} skipped: {mod} not in the repo yet")
                continue
        prev = None  # (n, total seconds)
        for size in a.sizes:
            n = int(size)
            k = METHODS[method][1]
            est_s = prev[1] * (n / prev[0]) ** k if prev else None
            est_gib = est_bytes(method, n) / 2**30
            if est_s is not None and est_s > a.budget_s:
                note = f"skipped (estimated {est_s:,.0f} s; {est_gib:,.1f} GiB)"
                if est_gib > a.budget_gib:
                    note += "; " + probe(method, n, a.budget_gib)
                print(f"{method:<13} {n:8d} {n_bags(n):7d}  {note}")
                continue
            if est_gib > a.budget_gib:
                note = f"skipped (estimated {est_gib:,.1f} GiB" + (
                    f", {est_s:,.0f} s)" if est_s else ")")
                print(f"{method:<13} {n:8d} {n_bags(n):7d}  {note}; {probe(method, n, a.budget_gib)}")
                continue
            r = run_child(method, n, timeout=max(3 * a.budget_s, 60))
            if "times" not in r:
                print(f"{method:<13} {n:8d} {n_bags(n):7d}  FAILED: {r['error']}")
                break
            total = sum(r["times"].values())
            kk = f"{math.log(total / prev[1]) / math.log(n / prev[0]):5.2f}" if prev and \
                prev[1] > 0 and total > 0 else f"{'-':>5}"
            ts = ", ".join(f"{k_} {v:.3g}" for k_, v in r["times"].items())
            extra = []
            if "file_mb" in r:
                extra.append(f"file {r['file_mb']:.1f} MB")
            if "auroc" in r:
                extra.append(f"auroc {r['auroc']:.3f}")
            if "error" in r:
                extra.append(r["error"])
            print(f"{method:<13} {n:8d} {r['bags']:7d}  {ts:<52} {r['base_mb']:8.0f} "
                  f"{r['peak_mb']:8.0f} {kk}  {'; '.join(extra)}")
            if "error" in r:
                break
            prev = (n, total)


def probe(method, n, cap_gib):
    """Run anyway under an address-space cap: what does the code do without the memory?"""
    r = run_child(method, n, cap_gib=cap_gib, timeout=60)
    if "error" in r:
        return f"probe under a {cap_gib:g} GiB cap: {r['error']} after {r['wall']:.1f} s"
    return f"probe under a {cap_gib:g} GiB cap: finished in {r['wall']:.1f} s"


if __name__ == "__main__":
    main()
