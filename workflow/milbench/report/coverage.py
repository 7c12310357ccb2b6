"""Bag coverage of selected features (CVFS-MIL, Wu et al. 2014, §4.3, Fig. 8).

A bag *covers* a feature when any of its instances has a non-zero value in it (a title word
occurs in one of the item's titles; a factor such as "posted in November" holds for one of its
submissions; a codeword occurs in one of the image's regions).  For every feature the paper
counts the covered bags per class; the class with more covered bags is the feature's
*majority class* and the **coverage ratio** is majority count / minority count (≥ 1; 1 = the
feature covers both classes alike and cannot discriminate).  Fig. 8 shows this ratio for
CVFS-MIL's top-10 and top-20 features, coloured by majority class, with the view each
feature comes from.

Departures (stated): counts are divided by the class sizes before the ratio is taken, so
the ratio is one of coverage *rates* — identical to the paper's counts on its balanced sets
(300 + 300 bags), and not skewed by class size on unbalanced ones.  A feature that covers no
bag of its minority class would have an infinite ratio; we floor the minority count at one
bag, so such a ratio reads "at least this large" (column ``minority_zero`` flags it).  The
figure is descriptive: the selector is fitted once on every bag of the data set (after the
experiment's scaling), not inside the CV folds.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from milbench.data.bags import Bags
from milbench.data.store import read_bags
from milbench.preprocessing import BagScaler
from milbench.registry import make
from milbench.report.plots import plot_feature_coverage, save_figure


def feature_names(bags: Bags) -> list[str]:
    """A name per column: from ``meta["feature_names"]`` (the Reddit chain stores its terms
    and factors there), else the column's index inside its view."""
    stored = (bags.meta or {}).get("feature_names", {})
    names = []
    for view, (a, b) in bags.views.items():
        own = list(stored.get(view, []))
        if len(own) != b - a:
            own = [str(j) for j in range(b - a)]
        names += own
    return names


def bag_coverage(bags: Bags) -> pd.DataFrame:
    """One row per feature: view, name, covered positive / negative bags, their rates, the
    majority class ("none" when both classes are covered at the same rate) and the coverage
    ratio (module docstring)."""
    X, offsets, y = bags.instances, bags.offsets, np.asarray(bags.labels)
    covered = np.logical_or.reduceat(X != 0, offsets[:-1], axis=0)      # (n_bags, d)
    n_pos_bags, n_neg_bags = int((y == 1).sum()), int((y == 0).sum())
    if not n_pos_bags or not n_neg_bags:
        raise ValueError("bag coverage needs positive and negative bags; got "
                         f"{n_pos_bags} positive and {n_neg_bags} negative")
    pos = covered[y == 1].sum(0)
    neg = covered[y == 0].sum(0)
    pos_rate, neg_rate = pos / n_pos_bags, neg / n_neg_bags
    majority_pos = pos_rate >= neg_rate
    maj = np.where(majority_pos, pos_rate, neg_rate)
    mino_count = np.where(majority_pos, neg, pos)
    mino_size = np.where(majority_pos, n_neg_bags, n_pos_bags)
    mino = np.maximum(mino_count, 1) / mino_size
    view = np.empty(X.shape[1], dtype=object)
    for name, (a, b) in bags.views.items():
        view[a:b] = name
    return pd.DataFrame({
        "feature": np.arange(X.shape[1]),
        "view": view,
        "name": feature_names(bags),
        "positive_bags": pos,
        "negative_bags": neg,
        "positive_rate": pos_rate,
        "negative_rate": neg_rate,
        "majority": np.where(pos_rate == neg_rate, "none",
                             np.where(majority_pos, "positive", "negative")),
        "coverage_ratio": np.where(maj > 0, maj / mino, np.nan),
        "minority_zero": (mino_count == 0) & (maj > 0),
    })


def top_feature_coverage(bags: Bags, selector, top: int, scaler=None) -> pd.DataFrame:
    """Fit ``selector`` (an estimator with a ranked ``support_``) on every bag, after
    ``scaler`` when given, and return the bag coverage of its ``top`` highest-ranked
    features, with their rank (1 = best).  Coverage is counted on the unscaled bags, where
    zero means absent."""
    Z = scaler.fit_transform(bags, bags.labels) if scaler is not None else bags
    selector.fit(Z, bags.labels)
    support = getattr(selector, "support_", None)
    if support is None:
        raise ValueError(f"{type(selector).__name__} ranks no input features (no support_): "
                         "bag coverage needs a feature selector (cvfs, big, iig, fs, relieff-mi, "
                         "hydr-mi), not a projection")
    support = np.asarray(support)[:int(top)]
    table = bag_coverage(bags).iloc[support].reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(support) + 1))
    return table


def write_coverage(dataset_dirs, entries, scale, outdir, experiment="", seed=0):
    """The ``coverage:`` entries of an experiment: for every entry and data set write
    ``<name>_<dataset>.csv`` (the table) and ``.png`` / ``.svg`` (the bar chart) into
    ``outdir``; returns the written paths.  An entry is ``{name, selector: {name: ...,
    params}, top}`` with ``top`` defaulting to the selector's ``m``; a selector with an unset
    ``random_state`` gets ``seed`` (the experiment's protocol seed), as in the runs."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for dataset, path in dataset_dirs.items():
        bags = read_bags(path)
        for entry in entries:
            spec = dict(entry["selector"])
            grid = sorted(k for k, v in spec.items() if isinstance(v, list))
            if grid:
                raise ValueError(f"coverage entry {entry['name']!r}: selector parameter(s) "
                                 f"{grid} must be single values, not a grid")
            top = entry.get("top", spec.get("m", 20))
            selector = make("selector", spec)
            if selector.get_params().get("random_state", 0) is None:
                selector.set_params(random_state=seed)
            table = top_feature_coverage(bags, selector, top, BagScaler(scale))
            stem = outdir / f"{entry['name']}_{dataset}"
            table.to_csv(stem.with_suffix(".csv"), index=False)
            synthetic = " [synthetic data]" if bags.meta.get("synthetic") else ""
            title = (f"{experiment}: {dataset}, bag coverage of {spec['name']}'s top-{len(table)} "
                     f"features{synthetic}")
            paths += [stem.with_suffix(".csv")] + save_figure(plot_feature_coverage(table, title),
                                                              stem)
    return paths
