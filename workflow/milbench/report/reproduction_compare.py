"""A rerun against its archived run: which of the paper's numbers came out different.

``results/<experiment>/reproduction.csv`` of a new run and the archived
``resources/reproductions/<paper>/<experiment>.csv`` (:mod:`~milbench.report.reproduction_archive`)
are matched target by target (table, data set, paper method, metric); a target differs when
it is in one table only, when ours is measured in one and not the other, when ours moved by
more than the tolerance (default 0: both are written to 4 decimals), or when its status
changed (e.g. "within tolerance" to "outside tolerance")::

    python -m milbench.report.reproduction compare results/<experiment> [--tolerance 0.005]

The command lists the targets that differ and exits 1, or says that all are equal.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from milbench.report.reproduction_archive import (
    ARCHIVE_DIR,
    LEGACY_PREFIX,
    ArchiveError,
    load_archive,
)
from milbench.report.targets import TARGET_KEY, paper_key

__all__ = ["compare"]

_SIDES = ("archived", "now")


def _table(path):
    df = pd.read_csv(path)
    missing = [c for c in (*TARGET_KEY, "ours", "status") if c not in df.columns]
    if missing:
        raise ArchiveError(f"{path}: no column {missing[0]!r}; expected the `reproduction` "
                           f"rule's table")
    return df[[*TARGET_KEY, "ours", "status"]]


def _archived(archive_dir):
    """The experiments with an archived run (legacy entries are no runs of a config)."""
    return sorted(p.stem for p in Path(archive_dir).glob("*/*.csv")
                  if not p.stem.startswith(LEGACY_PREFIX))


def compare(results_dir, archive_dir=ARCHIVE_DIR, tolerance=0.0):
    """(the targets that differ: key, archived, now, difference, archived_status, now_status;
    the archived run's name and meta; how many targets were compared) for the rerun
    ``results_dir`` (``results/<experiment>``) against the archived run of its experiment."""
    results_dir = Path(results_dir)
    experiment = results_dir.resolve().name
    if not results_dir.is_dir():
        raise ArchiveError(f"experiment {experiment}: no results folder {results_dir} (compare "
                           f"takes results/<experiment> of a finished run)")
    try:
        paper = paper_key(experiment)
    except KeyError:
        raise ArchiveError(f"experiment {experiment}: no paper targets, so no archived run to "
                           f"compare with; archived experiments: "
                           f"{', '.join(_archived(archive_dir)) or 'none'}") from None
    runs = {r.name: r for r in load_archive(paper, archive_dir) if not r.legacy}
    if experiment not in runs:
        raise ArchiveError(f"experiment {experiment}: no archived run in "
                           f"{Path(archive_dir) / paper} (archived experiments of paper "
                           f"{paper}: {', '.join(sorted(runs)) or 'none'})")
    new = results_dir / "reproduction.csv"
    if not new.is_file():
        raise ArchiveError(f"experiment {experiment}: {new} missing; the run ends with the "
                           f"`reproduction` rule")
    run = runs[experiment]
    both = _table(run.csv_path).merge(_table(new), on=list(TARGET_KEY), how="outer",
                                  suffixes=("_archived", "_now"), indicator=True)
    a, b = both["ours_archived"].astype(float), both["ours_now"].astype(float)
    moved = (a - b).abs() > tolerance + 1e-9
    differs = ((both["_merge"] != "both") | (a.isna() != b.isna()) | moved
               | (both["status_archived"].fillna("") != both["status_now"].fillna("")))
    out = both[differs].rename(columns={"ours_archived": "archived", "ours_now": "now",
                                        "status_archived": "archived_status",
                                        "status_now": "now_status"})
    out = out.assign(difference=(out["now"] - out["archived"]).where(out[["archived", "now"]]
                                                                     .notna().all(axis=1),
                                                                     np.nan))
    columns = [*TARGET_KEY, "archived", "now", "difference", "archived_status", "now_status"]
    return out[columns].reset_index(drop=True), run, len(both)
