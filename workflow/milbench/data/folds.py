"""Fold assignments as data: one table per dataset × protocol, every bag assigned to
(repeat, fold, role).  Every method of an experiment reads the same fold file.

Protocols (config ``protocol.kind``):
* ``kfold``   stratified k-fold, ``folds`` × ``repeats`` (repeat r shuffles with seed + r)
* ``holdout`` stratified train/test split of size ``train``, ``repeats`` times (fold = 0)
* ``ratio``   stratified split per training ratio in ``train_ratios`` (fold = ratio index),
              ``repeats`` times; at least one bag of each class is kept for training
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from milbench.data.bags import BagError

COLUMNS = ["bag_id", "repeat", "fold", "role", "train_ratio"]


def fold_keys(protocol):
    """All (repeat, fold) pairs a protocol produces, without the data."""
    kind = protocol["kind"]
    n_fold = {"kfold": lambda: protocol["folds"], "holdout": lambda: 1,
              "ratio": lambda: len(protocol["train_ratios"])}[kind]()
    return [(r, f) for r in range(protocol.get("repeats", 1)) for f in range(n_fold)]


def _stratified_train(y, n_train, rng):
    """Indices of a stratified random training set of size n_train with both classes present."""
    idx = []
    for c in (0, 1):
        members = rng.permutation(np.flatnonzero(y == c))
        k = int(round(n_train * len(members) / len(y)))
        idx.append(members[:min(max(k, 1), len(members) - 1)])
    return np.sort(np.concatenate(idx))


def check_protocol(protocol, class_counts):
    """BagError when a data set with ``class_counts`` [negative, positive] bags cannot be split
    by ``protocol`` (also called at parse time with a built-in data set's known counts)."""
    counts = [int(c) for c in class_counts]
    if min(counts) < 2:
        raise BagError(f"need at least 2 bags of each class to make folds; class counts {counts}")
    if protocol["kind"] == "kfold" and min(counts) < protocol["folds"]:
        raise BagError(f"{protocol['folds']}-fold CV needs at least {protocol['folds']} bags per "
                       f"class; class counts {counts}")


def make_folds(bag_ids, labels, protocol):
    # not at import: every workflow parse imports this module for fold_keys
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(labels).astype(int)
    bag_ids = np.asarray(bag_ids).astype(str)
    check_protocol(protocol, np.bincount(y, minlength=2))
    kind, seed, repeats = protocol["kind"], protocol.get("seed", 0), protocol.get("repeats", 1)
    frames = []

    def add(r, f, train_idx, ratio=np.nan):
        role = np.full(len(y), "test", dtype=object)
        role[train_idx] = "train"
        frames.append(pd.DataFrame({"bag_id": bag_ids, "repeat": r, "fold": f, "role": role,
                                    "train_ratio": ratio}))

    for r in range(repeats):
        if kind == "kfold":
            k = protocol["folds"]
            skf = StratifiedKFold(k, shuffle=True, random_state=seed + r)
            for f, (tr, _) in enumerate(skf.split(np.zeros(len(y)), y)):
                add(r, f, tr)
        elif kind == "holdout":
            rng = np.random.default_rng([seed, r])
            add(r, 0, _stratified_train(y, protocol["train"] * len(y), rng))
        elif kind == "ratio":
            for f, ratio in enumerate(protocol["train_ratios"]):
                rng = np.random.default_rng([seed, r, f])
                add(r, f, _stratified_train(y, ratio * len(y), rng), ratio)
        else:
            raise ValueError(f"unknown protocol kind {kind!r}")
    out = pd.concat(frames, ignore_index=True)
    out["role"] = out["role"].astype(str)
    return out[COLUMNS]


def split(folds, repeat, fold, bag_ids):
    """(train positions, test positions, train_ratio) of one fold, in dataset bag order."""
    sel = folds[(folds["repeat"] == repeat) & (folds["fold"] == fold)]
    if sel.empty:
        raise KeyError(f"fold file has no repeat {repeat} fold {fold}")
    role = sel.set_index("bag_id")["role"].reindex(np.asarray(bag_ids).astype(str))
    if role.isna().any():
        raise BagError(f"fold file does not cover bag {role.index[role.isna()][0]!r}")
    role = role.to_numpy()
    return np.flatnonzero(role == "train"), np.flatnonzero(role == "test"), \
        float(sel["train_ratio"].iloc[0])
