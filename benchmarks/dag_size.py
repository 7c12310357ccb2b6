"""`snakemake -n` time for a config expanding to ~10,000 jobs (target: under 60 s).

    python benchmarks/dag_size.py [--jobs 10000]

Writes a synthetic config (offline datasets, a method grid sized to reach the job count) into a
temp dir and times the dry run there.
"""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def config_for(n_jobs):
    # 2 datasets × 10 repeats × 5 folds = 100 fold jobs per method
    n_methods = max(1, n_jobs // 100)
    dims = [round(0.05 + 0.9 * i / n_methods, 6) for i in range(n_methods)]
    return {"offline": True, "experiments": {"big": {
        "datasets": ["musk1", "elephant"],
        "protocol": {"kind": "kfold", "folds": 5, "repeats": 10, "seed": 0},
        "selectors": [{"name": "pca", "dims": dims}],
        "classifiers": [{"name": "milr"}]}}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10_000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp, "config.yaml")
        cfg.write_text(yaml.safe_dump(config_for(a.jobs)))
        t = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"),
                              "-d", tmp, "--configfile", str(cfg), "-n", "--quiet", "rules"],
                             capture_output=True, text=True)
        dt = time.perf_counter() - t
    if res.returncode:
        sys.exit(res.stderr[-3000:])
    total = re.search(r"^total\s+(\d+)", res.stdout + res.stderr, re.M)
    print(f"snakemake -n: {total.group(1) if total else '?'} jobs planned in {dt:.1f} s "
          f"(target < 60 s; ratio to target {dt / 60:.2f})")


if __name__ == "__main__":
    main()
