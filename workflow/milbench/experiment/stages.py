"""Fold stages: the expensive, classifier-independent state of a selector fit, computed once per
(dataset, scale, stage spec, repeat, fold), stored, and reused by every method sharing it.

A stage is a ``dict[str, np.ndarray]`` whose reserved entries ``_fingerprint`` (blake2b of the
exact training data: float64 instances, offsets, 0/1 labels) and ``_key`` (canonical JSON of
the stage spec, the effective random state and, for CVFS, the resolved view ranges) say what it
was computed from.  A selector's ``_fit`` asks :func:`lookup` for a state matching *its own*
data and parameters and computes one when there is none (inner-CV folds, other data), so a
state can never be applied to other data or other stage parameters, and a fit served from a
stage goes through the same code as a normal fit (identical results).  States are made
available with :func:`provided` (or :func:`provide`); stored with :func:`stage_to_frame`.

Supported selectors and their downstream (not stored) parameters:

* ``relieff-mi``: feature weights W of ReliefF-MI (hydr-mi.txt §3.1, Listing 1); ``percent``.
* ``hydr-mi``: its ReliefF-MI weighting (hydr-mi.txt §3.1); everything but metric, k, m,
  instance_metric (the GA depends on the classifier).
* ``big`` / ``iig`` / ``fs``: per-feature scores (cvfs-mil.txt §4.1), computed on all columns
  whatever the views; ``m``, ``strategy``, ``view``, ``views``.
* ``cvfs``: φ(s) per view (cvfs-mil.txt §3, Eqs. 2-6; needs the view partition, part of the
  key); ``m``, ``r``, ``max_iter``, ``view`` (the T-/λ-step alternation is downstream).
* ``pca``: full SVD (``svd_solver="full"``; the first k components equal a k-component fit,
  sign included); ``dims``; ``random_state`` is unused by the full solver.
* ``lda``: the fitted discriminant; no downstream parameter.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections import Counter
from dataclasses import dataclass

import numpy as np

from milbench.data.bags import check_bags, labels_to_01, stack

FORMAT = 1          # bump when the meaning of a stored state changes
RESERVED = ("name", "tune")
SHAPE = "__shape"   # Parquet column suffix: shape of a non-1-D array
ORDER = "__order"   # Parquet column suffix: "F" for a Fortran-ordered array (layout is kept:
                    # BLAS results may differ in the last bit between layouts)


@dataclass(frozen=True)
class _Rule:
    downstream: tuple = ()      # parameters applied after the stage
    keep: tuple | None = None   # the stage parameters, when fewer than "all but downstream"
    ignored: tuple = ()         # parameters with no effect on the result
    random: bool = False        # the state depends on random_state (an int is required)
    views: bool = False         # the state depends on the resolved view ranges


_VIEW_DOWNSTREAM = ("m", "strategy", "view", "views")
RULES = {
    "relieff-mi": _Rule(downstream=("percent",), random=True),
    "hydr-mi": _Rule(keep=("metric", "k", "m", "instance_metric", "random_state"), random=True),
    "big": _Rule(downstream=_VIEW_DOWNSTREAM),
    "iig": _Rule(downstream=_VIEW_DOWNSTREAM),
    "fs": _Rule(downstream=_VIEW_DOWNSTREAM),
    "cvfs": _Rule(downstream=("m", "r", "max_iter", "view"), views=True),
    "pca": _Rule(downstream=("dims",), ignored=("random_state",)),
    "lda": _Rule(),
}


def _canon(obj):
    def default(o):
        return o.item() if isinstance(o, np.generic) else str(o)
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=default)


def _defaults(name):
    from milbench.registry import resolve
    return resolve("selector", name)().get_params(deep=False)


def stage_params(name):
    """The stage parameters of a supported selector (sorted), or None."""
    if name not in RULES:
        return None
    rule, defaults = RULES[name], _defaults(name)
    if rule.keep is not None:
        return tuple(sorted(rule.keep))
    return tuple(sorted(p for p in defaults if p not in rule.downstream + rule.ignored))


def downstream_params(name):
    """Parameters of a supported selector that the stage does not depend on, or None."""
    keep = stage_params(name)
    return None if keep is None else tuple(sorted(set(_defaults(name)) - set(keep)))


def stage_spec(selector_spec):
    """The config entry reduced to what determines the stored state, defaults filled in; None
    for unsupported selectors ('none', 'midr') and when ``tune`` varies a stage parameter."""
    name = selector_spec["name"]
    if name not in RULES:
        from milbench.registry import resolve
        resolve("selector", name)          # unknown names raise KeyError
        return None
    defaults = _defaults(name)
    given = {k: v for k, v in selector_spec.items() if k not in RESERVED}
    unknown = set(given) - set(defaults)
    if unknown:
        raise ValueError(f"selector {name}: unknown parameter(s) {sorted(unknown)}")
    keep = stage_params(name)
    if set(selector_spec.get("tune") or {}) & set(keep):
        return None
    params = {**defaults, **given}
    return {"name": name, **{k: params[k] for k in keep}}


def stage_id(spec):
    """File-name safe id of a stage spec: name plus a short hash of its parameters."""
    params = {k: v for k, v in spec.items() if k != "name"}
    return f"{spec['name']}.{hashlib.sha1(_canon(params).encode()).hexdigest()[:8]}"


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
# keys
# ---------------------------------------------------------------------------------------------
def data_fingerprint(bags, y=None):
    """blake2b of the training data exactly as a selector sees it: float64 instances, bag
    offsets and 0/1 labels (Bags or a list of arrays; ±1 labels are mapped to 0/1)."""
    blist, _, _ = check_bags(bags)
    X, offsets = stack(blist)
    X = np.ascontiguousarray(X, dtype=np.float64)
    h = hashlib.blake2b(digest_size=32, person=b"milbench-stage")
    h.update(np.asarray(X.shape, dtype=np.int64).tobytes())
    h.update(X.tobytes())
    h.update(np.asarray(offsets, dtype=np.int64).tobytes())
    h.update(b"-" if y is None else labels_to_01(y)[0].astype(np.int8).tobytes())
    return h.hexdigest()


def _registry_name(est):
    from milbench.registry import SELECTORS, resolve
    for name in RULES:
        if name in SELECTORS and type(est) is resolve("selector", name):
            return name
    return None


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def selector_key(selector):
    """The stage key of a selector instance (views resolved, for CVFS), or None when a stage
    cannot serve it (unsupported class, non-int random_state, views not yet resolved)."""
    name = _registry_name(selector)
    if name is None:
        return None
    rule = RULES[name]
    params = selector.get_params(deep=False)
    spec = stage_spec({"name": name, **params})
    random_state = views = None
    if rule.random:
        if not _is_int(params.get("random_state")):
            return None
        random_state = int(selector._stage_random_state())
    if rule.views:
        ranges = getattr(selector, "view_ranges_", None)
        if ranges is None:
            return None
        views = [[int(a), int(b)] for a, b in ranges]
    stage = {k: v for k, v in spec.items() if k not in ("random_state", "views")}
    return _canon({"format": FORMAT, "stage": stage, "random_state": random_state,
                   "views": views})


# ---------------------------------------------------------------------------------------------
# computing a stage
# ---------------------------------------------------------------------------------------------
def fit_stage(train_bags, y, selector_spec, random_state=None, views=None):
    """The stage of ``selector_spec`` on ALREADY SCALED training bags (see :func:`scale_bags`).

    ``random_state`` / ``views`` are used where the spec leaves them None, as the pipeline does
    (seed + repeat; the dataset's view sizes).  Returns ``dict[str, np.ndarray]`` including
    ``_fingerprint`` and ``_key``."""
    from milbench.data.bags import resolve_views
    from milbench.registry import make
    from milbench.selectors.view_baselines import ViewSelector

    spec = stage_spec(selector_spec)
    if spec is None:
        raise ValueError(f"selector {selector_spec['name']!r} has no stage (unsupported, or "
                         "tune varies a stage parameter)")
    name, rule = spec["name"], RULES[spec["name"]]
    params = {k: v for k, v in spec.items() if k != "name"}
    if rule.random:
        if params.get("random_state") is None:
            params["random_state"] = random_state
        if not _is_int(params["random_state"]):
            raise ValueError(f"{name}: a stage needs an int random_state, got "
                             f"{params['random_state']!r}")
    if "views" in params and params["views"] is None:
        params["views"] = views
    sel = make("selector", {"name": name, **params})
    bags, y01, _ = check_bags(train_bags, y)
    if isinstance(sel, ViewSelector):
        sel.n_features_in_ = bags[0].shape[1]
        sel.view_names_, sel.view_ranges_ = resolve_views(train_bags, getattr(sel, "views", None),
                                                          sel.n_features_in_)
    state = {k: np.asarray(v) for k, v in sel._stage_state(bags, y01).items()}
    state["_fingerprint"] = np.array(data_fingerprint(bags, y01))
    state["_key"] = np.array(selector_key(sel))
    return state


def scale_bags(bags, scale):
    """Training bags scaled exactly as the pipeline's first step does (BagScaler.fit_transform
    on the fold's training bags), so that a stage fitted on them is found by the selector."""
    from milbench.preprocessing import BagScaler
    return BagScaler(scale).fit_transform(bags, getattr(bags, "labels", None))


# ---------------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------------
_LOCK = threading.RLock()
_REGISTRY: dict = {}        # (fingerprint, key) -> [state, ...] (last provided wins)
_HITS: Counter = Counter()


def _entry(state):
    try:
        return str(state["_fingerprint"]), str(state["_key"])
    except KeyError:
        raise ValueError("not a stage: no _fingerprint / _key (use fit_stage)") from None


def _frozen(state):
    out = {}
    for k, v in state.items():
        a = np.array(v, copy=True)
        a.flags.writeable = False
        out[k] = a
    return out


def provide(state):
    """Make a stage available to selector fits in this process (until :func:`withdraw`)."""
    entry = _entry(state)
    with _LOCK:
        _REGISTRY.setdefault(entry, []).append(_frozen(state))
    return entry


def withdraw(entry):
    with _LOCK:
        stack_ = _REGISTRY.get(entry)
        if stack_:
            stack_.pop()
            if not stack_:
                del _REGISTRY[entry]


def clear():
    with _LOCK:
        _REGISTRY.clear()


def _flatten(states):
    for s in states:
        if isinstance(s, dict) and "_key" in s:
            yield s
        elif isinstance(s, dict):
            yield from _flatten(s.values())
        else:
            yield from _flatten(s)


class Provided:
    """Handle of :func:`provided`: ``hits`` counts the fits served by its stages."""

    def __init__(self, entries):
        self.entries = entries
        self._start = {e: _HITS[e] for e in entries}

    def hits_per_stage(self):
        return {e: _HITS[e] - self._start[e] for e in self.entries}

    @property
    def hits(self):
        return sum(self.hits_per_stage().values())

    def unused(self):
        return [e for e, n in self.hits_per_stage().items() if n == 0]


@contextlib.contextmanager
def provided(*states, require_use=False):
    """``with provided(state, ...) as p: est.fit(...)``: stages (dicts, or containers of them,
    e.g. ``frame_to_stages(df)``) served to matching selector fits inside the block.
    ``require_use``: raise on exit if a provided stage served no fit (e.g. unscaled data)."""
    entries = [provide(s) for s in _flatten(states)]
    handle = Provided(list(dict.fromkeys(entries)))
    ok = False
    try:
        yield handle
        ok = True
    finally:
        for e in reversed(entries):
            withdraw(e)
    if ok and require_use and handle.unused():
        raise RuntimeError(f"{len(handle.unused())} provided stage(s) served no fit: the data "
                           "reaching the selector differ from the stage's (scaling?)")


def lookup(selector, bags, y):
    """A copy of the provided stage matching this selector's own parameters and this exact
    training data, or None (then the selector computes it)."""
    if not _REGISTRY:
        return None
    key = selector_key(selector)
    if key is None:
        return None
    entry = (data_fingerprint(bags, y), key)
    with _LOCK:
        found = _REGISTRY.get(entry)
        if not found:
            return None
        state = found[-1]
        _HITS[entry] += 1
    return {k: np.array(v, copy=True) for k, v in state.items() if not k.startswith("_")}


# ---------------------------------------------------------------------------------------------
# fitted sklearn attributes <-> arrays (LDA)
# ---------------------------------------------------------------------------------------------
def pack_attributes(est, prefix):
    """The fitted attributes of an sklearn estimator (not its parameters) as arrays; Python
    scalars are tagged (``name#int``, ``#float``, ``#bool``, ``#none``, ``#np``) for an exact
    :func:`unpack_attributes`."""
    params = est.get_params(deep=False)
    out = {}
    for k, v in vars(est).items():
        if k in params:
            continue
        if isinstance(v, np.ndarray):
            out[f"{prefix}{k}"] = np.array(v, copy=True)     # memory layout kept
        elif isinstance(v, bool):
            out[f"{prefix}{k}#bool"] = np.array([v])
        elif isinstance(v, int):
            out[f"{prefix}{k}#int"] = np.array([v], dtype=np.int64)
        elif isinstance(v, float):
            out[f"{prefix}{k}#float"] = np.array([v], dtype=np.float64)
        elif v is None:
            out[f"{prefix}{k}#none"] = np.zeros(0)
        elif isinstance(v, np.generic):
            out[f"{prefix}{k}#np"] = np.array([v])
        else:
            raise TypeError(f"cannot store attribute {k!r} of type {type(v).__name__}")
    return out


def unpack_attributes(est, state, prefix):
    """Set the attributes stored by :func:`pack_attributes` on an unfitted ``est``."""
    cast = {"int": lambda a: int(a[0]), "float": lambda a: float(a[0]),
            "bool": lambda a: bool(a[0]), "none": lambda a: None, "np": lambda a: a[0]}
    for key, v in state.items():
        if not key.startswith(prefix):
            continue
        name, _, tag = key[len(prefix):].partition("#")
        setattr(est, name, cast[tag](v) if tag else np.array(v, copy=True))
    return est


# ---------------------------------------------------------------------------------------------
# Parquet storage
# ---------------------------------------------------------------------------------------------
def stage_to_frame(states):
    """``{(repeat, fold): state}`` -> DataFrame, one row per (repeat, fold): arrays flattened
    into list columns (native dtype) with ``<key>__shape`` / ``<key>__order`` columns when not
    1-D, string entries (``_fingerprint``, ``_key``) as string columns."""
    import pandas as pd

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
