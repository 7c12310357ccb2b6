"""Where a data set's Parquet bag stores are: ``<bags root>/<data set>`` for a built-in or
user data set, ``<bags root>/<data set>@<tag>`` for a chain-built one (its tag names the
source, workflow/rules/common.smk ``store_dir``).  Apart from :mod:`.store`, which every method
job imports, so that the planner and ``reproduction restore`` finding stores is no rerun
trigger (:mod:`milbench.experiment.codehash`)."""
from __future__ import annotations

import glob
from pathlib import Path

__all__ = ["store_folders"]


def store_folders(bags_root, dataset):
    """The folders under ``bags_root`` holding a store of ``dataset`` (a ``meta.json``): the
    chain-built ones first, sorted, then the plain one."""
    root = Path(bags_root)
    found = [*sorted(root.glob(f"{glob.escape(dataset)}@*")), root / dataset]
    return [p for p in found if (p / "meta.json").is_file()]
