"""Fold stages, the experiment side: which selector stages a config shares (planned from the
config when the workflow is parsed), computing one on a cell's scaled training bags, and
storing states in Parquet.  The selector side (the rule each selector class declares, keys,
the :class:`~milbench.selectors.stage_store.StageStore` a fit is served from) is
:mod:`milbench.selectors.stage_store`.

A stage is a ``dict[str, np.ndarray]`` whose reserved entries ``_fingerprint`` (blake2b of the
exact training data: float64 instances, offsets, 0/1 labels) and ``_key`` (the selector's class,
its stage parameters, the effective random state and, for CVFS, the resolved view ranges) say
what it was computed from; it is computed once per (dataset, scale, stage spec, repeat, fold),
stored, and served to every method sharing it.

Selectors with a stage and their downstream (not stored) parameters:

* ``relieff-mi``: feature weights W of ReliefF-MI (Zafra et al. 2013, §3.1, Listing 1);
  ``percent``.
* ``hydr-mi``: its ReliefF-MI weighting (Zafra et al. 2013, §3.1); everything but metric, k,
  m, instance_metric (the GA depends on the classifier).
* ``big`` / ``iig`` / ``fs``: per-feature scores (Wu et al. 2014, §4.1), computed on all
  columns whatever the views; ``m``, ``strategy``, ``view``, ``views``.
* ``cvfs``: φ(s) per view (Wu et al. 2014, §3, Eqs. 2-6; needs the view partition, part of the
  key); ``m``, ``r``, ``max_iter``, ``view`` (the T-/λ-step alternation is downstream).
* ``pca``: full SVD (``svd_solver="full"``; the first k components equal a k-component fit,
  sign included); ``dims``; ``random_state`` is unused by the full solver.
* ``lda``: the fitted discriminant; no downstream parameter.
"""
from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
import pandas as pd

from milbench.data.bags import check_bags
from milbench.preprocessing import BagScaler
from milbench.registry import make, resolve
from milbench.selectors.stage_store import canonical, is_int, stage_rule, stamped_stage

RESERVED = ("name", "tune")
SHAPE = "__shape"   # Parquet column suffix: shape of a non-1-D array
ORDER = "__order"   # Parquet column suffix: "F" for a Fortran-ordered array (layout is kept:
                    # BLAS results may differ in the last bit between layouts)


def _rule(name):
    """The stage rule of a selector name (registry or 'module:Class'; unknown: KeyError)."""
    return stage_rule(resolve("selector", name))


def _defaults(name):
    return resolve("selector", name)().get_params(deep=False)


def stage_params(name):
    """The stage parameters of a selector with a stage (sorted), or None."""
    rule = _rule(name)
    return None if rule is None else rule.stage_params(_defaults(name))


def downstream_params(name):
    """Parameters of a selector with a stage that the stage does not depend on, or None."""
    keep = stage_params(name)
    return None if keep is None else tuple(sorted(set(_defaults(name)) - set(keep)))


def stage_spec(selector_spec):
    """The config entry reduced to what determines the stored state, defaults filled in; None
    for unsupported selectors ('none', 'midr') and when ``tune`` varies a stage parameter."""
    name = selector_spec["name"]
    rule = _rule(name)                     # unknown names raise KeyError
    if rule is None:
        return None
    defaults = _defaults(name)
    given = {k: v for k, v in selector_spec.items() if k not in RESERVED}
    unknown = set(given) - set(defaults)
    if unknown:
        raise ValueError(f"selector {name}: unknown parameter(s) {sorted(unknown)}")
    keep = rule.stage_params(defaults)
    if set(selector_spec.get("tune") or {}) & set(keep):
        return None
    params = {**defaults, **given}
    return {"name": name, **{k: params[k] for k in keep}}


def stage_id(spec):
    """File-name safe id of a stage spec: name (a 'module:Class' path with ':' as '-') plus a
    short hash of its parameters."""
    params = {k: v for k, v in spec.items() if k != "name"}
    name = spec["name"].replace(":", "-")
    return f"{name}.{hashlib.sha1(canonical(params).encode()).hexdigest()[:8]}"


def shared_stages(methods):
    """``{method key: stage id}`` for the methods (``{key: {"selector": spec, ...}}``) whose
    selector has a stage that at least two of them share, and ``{stage id: stage spec}``: a
    stage is worth a job of its own only where it saves a fit."""
    specs = {key: stage_spec(m["selector"]) for key, m in methods.items()}
    ids = {key: stage_id(s) for key, s in specs.items() if s is not None}
    shared = {i for i, n in Counter(ids.values()).items() if n > 1}
    return ({key: i for key, i in ids.items() if i in shared},
            {ids[key]: specs[key] for key in ids if ids[key] in shared})


# ---------------------------------------------------------------------------------------------
# computing a stage
# ---------------------------------------------------------------------------------------------
def fit_stage(train_bags, y, selector_spec, random_state=None, views=None):
    """The stage of ``selector_spec`` on ALREADY SCALED training bags (see :func:`scale_bags`).

    ``random_state`` / ``views`` are used where the spec leaves them None, as the pipeline does
    (seed + repeat; the dataset's view sizes).  Returns ``dict[str, np.ndarray]`` including
    ``_fingerprint`` and ``_key``."""
    spec = stage_spec(selector_spec)
    if spec is None:
        raise ValueError(f"selector {selector_spec['name']!r} has no stage (unsupported, or "
                         "tune varies a stage parameter)")
    name, rule = spec["name"], _rule(spec["name"])
    params = {k: v for k, v in spec.items() if k != "name"}
    if rule.random:
        if params.get("random_state") is None:
            params["random_state"] = random_state
        if not is_int(params["random_state"]):
            raise ValueError(f"{name}: a stage needs an int random_state, got "
                             f"{params['random_state']!r}")
    if "views" in params and params["views"] is None:
        params["views"] = views
    sel = make("selector", {"name": name, **params})
    X, offsets, y01, _ = check_bags(train_bags, y)
    if rule.views:
        sel.resolve_views(train_bags, X.shape[1])
    return stamped_stage(sel, X, offsets, y01)


def scale_bags(bags, scale):
    """Training bags scaled exactly as the pipeline's first step does (BagScaler.fit_transform
    on the fold's training bags), so that a stage fitted on them is found by the selector."""
    return BagScaler(scale).fit_transform(bags, getattr(bags, "labels", None))


# ---------------------------------------------------------------------------------------------
# Parquet storage
# ---------------------------------------------------------------------------------------------
def stage_to_frame(states):
    """``{(repeat, fold): state}`` -> DataFrame, one row per (repeat, fold): arrays flattened
    into list columns (native dtype) with ``<key>__shape`` / ``<key>__order`` columns when not
    1-D, string entries (``_fingerprint``, ``_key``) as string columns."""
    rows = []
    for (repeat, fold), state in sorted(states.items()):
        row = {"repeat": int(repeat), "fold": int(fold)}
        for k, v in state.items():
            if k in ("repeat", "fold") or k.endswith((SHAPE, ORDER)):
                raise ValueError(f"reserved state key {k!r}")
            a = np.asarray(v)
            if a.dtype.kind in "US":
                if a.ndim:
                    raise ValueError(f"state entry {k!r}: only scalar strings are stored")
                row[k] = str(a)
                continue
            fortran = a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous
            row[k] = a.ravel(order="F" if fortran else "C")
            if a.ndim != 1:
                row[k + SHAPE] = np.asarray(a.shape, dtype=np.int64)
                row[k + ORDER] = "F" if fortran else "C"
        rows.append(row)
    return pd.DataFrame(rows)


def frame_to_stages(df):
    """Inverse of :func:`stage_to_frame`: ``{(repeat, fold): state}``."""
    out = {}
    for rec in df.to_dict("records"):
        state = {}
        for k, v in rec.items():
            if k in ("repeat", "fold") or k.endswith((SHAPE, ORDER)):
                continue
            if isinstance(v, str):
                state[k] = np.array(v)
                continue
            a = np.array(v, copy=True)
            shape = rec.get(k + SHAPE)
            if shape is not None and not (np.isscalar(shape) and shape != shape):
                order = rec.get(k + ORDER)
                a = a.reshape(tuple(int(s) for s in shape), order="F" if order == "F" else "C")
                a = np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a)
            state[k] = a
        out[(int(rec["repeat"]), int(rec["fold"]))] = state
    return out
