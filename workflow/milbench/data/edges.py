"""Graphs between bags or instances, on the ground floor beside the bag model (``Bags.edges``).

Edges are a DataFrame (src, dst, weight, level).  ``level == "bag"`` rows hold bag ids;
``level == "instance"`` rows hold global instance row numbers (as strings, so one Parquet column
type holds both) of the container they belong to.  :func:`check_edges` validates them and
:func:`subset_edges` restricts a graph to a subset of bags (used by ``Bags.subset``); the graph
chains that build them live in :mod:`milbench.chains`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

EDGE_COLUMNS = ("src", "dst", "weight", "level")


def check_edges(edges):
    """Raise ValueError unless ``edges`` has the (src, dst, weight, level) columns."""
    missing = [c for c in EDGE_COLUMNS if c not in edges.columns]
    if missing:
        raise ValueError(f"edges lack column(s) {missing}; need {list(EDGE_COLUMNS)}")
    bad = set(edges["level"].unique()) - {"bag", "instance"}
    if bad:
        raise ValueError(f"edge level must be 'bag' or 'instance', got {sorted(bad)}")
    w = edges["weight"].to_numpy(float)
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError("edge weights must be finite and non-negative")
    return edges


def subset_edges(edges, kept_ids, rows):
    """Edges of the sub-container that keeps bags ``kept_ids`` and instance rows ``rows``.

    ``rows`` are the old global row numbers of the kept instances in their new order.
    Bag-level edges are kept when both ends are kept; instance-level edges likewise,
    renumbered to the new rows.
    """
    if edges is None:
        return None
    kept = set(np.asarray(kept_ids).astype(str).tolist())
    bag = edges[edges["level"] == "bag"]
    bag = bag[bag["src"].astype(str).isin(kept) & bag["dst"].astype(str).isin(kept)]
    inst = edges[edges["level"] == "instance"]
    if len(inst):
        rows = np.asarray(rows, dtype=np.int64)
        new = -np.ones(int(max(rows.max(initial=-1), inst["src"].astype(np.int64).max(),
                               inst["dst"].astype(np.int64).max())) + 1, dtype=np.int64)
        new[rows] = np.arange(len(rows))
        s = new[inst["src"].astype(np.int64).to_numpy()]
        d = new[inst["dst"].astype(np.int64).to_numpy()]
        ok = (s >= 0) & (d >= 0)
        inst = pd.DataFrame({"src": s[ok].astype(str), "dst": d[ok].astype(str),
                             "weight": inst["weight"].to_numpy(float)[ok], "level": "instance"})
    return pd.concat([bag, inst], ignore_index=True)
