"""Figures 4-5 of midr.txt: MIDR's loss of orthonormality ‖HᵀH − I‖_F and loss of sparsity
Σ|H_ij| over the C1 x C2 grid, one fit on all (min-max scaled) bags of a dataset.

As a Snakemake script: input = a bags directory (instances.parquet ...), output = a CSV,
params.C1 / params.C2 / params.midr (dict of other MIDR parameters, e.g. dims).
From the shell:  python workflow/scripts/midr_grid.py <bags dir | built-in name> out.csv
                 [--data ../shared/data] [--dims 0.3]
"""
import argparse
from pathlib import Path

from milbench.preprocessing import BagScaler
from milbench.selectors.midr import loss_grid

GRID = [10.0 ** k for k in range(-4, 5)]


def run(bags, C1s, C2s, out, **midr):
    bags = BagScaler("minmax").fit(bags).transform(bags)
    df = loss_grid(bags, bags.labels, C1s, C2s, **midr)
    df.to_csv(out, index=False)
    return df


if "snakemake" in globals():
    from milbench.runlog import setup
    from milbench.store import read_bags

    log = setup(snakemake)  # noqa: F821
    sm = snakemake  # noqa: F821
    indir = Path(sm.input[0])
    indir = indir.parent if indir.is_file() else indir
    p = sm.params
    df = run(read_bags(indir), getattr(p, "C1", GRID), getattr(p, "C2", GRID), sm.output[0],
             **dict(getattr(p, "midr", {}) or {}))
    log.info("%d grid points", len(df))
elif __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bags", help="bags directory or built-in dataset name (with --data)")
    ap.add_argument("out")
    ap.add_argument("--data", default=None, help="raw data root laid out like ../shared/data")
    ap.add_argument("--dims", type=float, default=0.3)
    ap.add_argument("--max-iter", type=int, default=100)
    a = ap.parse_args()
    if Path(a.bags).is_dir():
        from milbench.store import read_bags
        bags = read_bags(a.bags)
    else:
        from milbench.sources import load_dataset
        bags = load_dataset(a.bags, a.data)
    print(run(bags, GRID, GRID, a.out, dims=a.dims, max_iter=a.max_iter).to_string(index=False))
