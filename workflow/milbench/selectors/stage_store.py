"""Fold stages, the selector side: the expensive, classifier-independent part of a selector fit
(ReliefF-MI's weights, the baselines' feature scores, CVFS's φ(s), a full SVD, a fitted LDA),
served to a fit from a :class:`StageStore` instead of being computed again.

A selector class that has a stage declares it: ``_stage_rule`` (a :class:`StageRule`: which
parameters act after the stage) and ``stage_state(X, offsets, y01)`` (the state, a
``dict[str, np.ndarray]``), and takes a ``stages`` parameter (None, or a store): the protocol
:class:`~milbench.base.StagedSelector`, checked by :mod:`milbench.testing`.  Its ``_fit``
asks ``self.stages.lookup(self, X, offsets, y)`` for a state computed from *its own* stage
parameters on *this exact* training data and computes the state itself when there is none
(inner-CV folds, other data), so a state can never serve other data or other stage
parameters, and a served fit runs the same code as a normal one (identical results).  The
store is a cache, like scikit-learn's ``Pipeline(memory=)``: it never changes a result, so it
is no stage parameter, ``clone`` shares it (every GridSearchCV candidate reads the same store)
and it pickles empty (joblib's fit cache hashes it as nothing; states stay in this process).

Planning stages from a config, computing and storing them is the experiment's side:
:mod:`milbench.experiment.stages`.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from dataclasses import dataclass

import numpy as np

from milbench.data.bags import labels_to_01

FORMAT = 2              # bump when the meaning of a stored state or of a key changes
STORE_PARAM = "stages"  # the selector parameter holding a StageStore: never a stage parameter


@dataclass(frozen=True)
class StageRule:
    """What a selector's stage depends on, declared on its class as ``_stage_rule``."""

    downstream: tuple = ()      # parameters applied after the stage
    keep: tuple | None = None   # the stage parameters, when fewer than "all but downstream"
    ignored: tuple = ()         # parameters with no effect on the result
    random: bool = False        # the state depends on random_state (an int is required)
    views: bool = False         # the state depends on the resolved view ranges

    def stage_params(self, params):
        """The stage parameters among a selector's parameter names, sorted."""
        if self.keep is not None:
            return tuple(sorted(self.keep))
        drop = set(self.downstream) | set(self.ignored) | {STORE_PARAM}
        return tuple(sorted(p for p in params if p not in drop))


def stage_rule(cls):
    """The :class:`StageRule` a selector class declares, or None (no stage)."""
    return getattr(cls, "_stage_rule", None)


def canonical(obj):
    """Canonical JSON (sorted keys, no spaces; numpy scalars as Python ones)."""
    def default(o):
        return o.item() if isinstance(o, np.generic) else str(o)
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=default)


def is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


# ---------------------------------------------------------------------------------------------
# keys
# ---------------------------------------------------------------------------------------------
def data_fingerprint(X, offsets, y=None):
    """blake2b of the training data exactly as a selector sees it: the stacked float64
    instances and bag offsets of :func:`~milbench.data.bags.check_bags` and the labels (±1
    labels are mapped to 0/1)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    h = hashlib.blake2b(digest_size=32, person=b"milbench-stage")
    h.update(np.asarray(X.shape, dtype=np.int64).tobytes())
    h.update(X.tobytes())
    h.update(np.asarray(offsets, dtype=np.int64).tobytes())
    h.update(b"-" if y is None else labels_to_01(y)[0].astype(np.int8).tobytes())
    return h.hexdigest()


def stamped_stage(selector, X, offsets, y01):
    """``selector.stage_state`` on stacked training data (:class:`~milbench.base.StagedSelector`;
    views resolved first where the rule says so), stamped with what it was computed from
    (``_fingerprint``, ``_key``): a state a :class:`StageStore` serves."""
    state = {k: np.asarray(v) for k, v in selector.stage_state(X, offsets, y01).items()}
    state["_fingerprint"] = np.array(data_fingerprint(X, offsets, y01))
    state["_key"] = np.array(selector_key(selector))
    return state


def selector_key(selector):
    """The stage key of a selector instance: its exact class, its stage parameters, the
    effective random state and (CVFS) the resolved view ranges; None when a stage cannot serve
    it (no rule, a random_state that is not an int, views not yet resolved)."""
    cls = type(selector)
    rule = stage_rule(cls)
    if rule is None:
        return None
    params = selector.get_params(deep=False)
    random_state = views = None
    if rule.random:
        if not is_int(params.get("random_state")):
            return None
        random_state = int(selector._stage_random_state())
    if rule.views:
        ranges = getattr(selector, "view_ranges_", None)
        if ranges is None:
            return None
        views = [[int(a), int(b)] for a, b in ranges]
    stage = {k: params[k] for k in rule.stage_params(params) if k not in ("random_state", "views")}
    return canonical({"format": FORMAT, "class": f"{cls.__module__}:{cls.__qualname__}",
                      "stage": stage, "random_state": random_state, "views": views})


def stage_entry(state):
    """(fingerprint, key) of a state: what it was computed from."""
    try:
        return str(state["_fingerprint"]), str(state["_key"])
    except KeyError:
        raise ValueError("not a stage: no _fingerprint / _key "
                         "(milbench.experiment.stages.fit_stage makes them)") from None


def _flatten(states):
    for s in states:
        if isinstance(s, dict) and "_key" in s:
            yield s
        elif isinstance(s, dict):
            yield from _flatten(s.values())
        else:
            yield from _flatten(s)


def _frozen(state):
    out = {}
    for k, v in state.items():
        a = np.array(v, copy=True)
        a.flags.writeable = False
        out[k] = a
    return out


# ---------------------------------------------------------------------------------------------
# the store
# ---------------------------------------------------------------------------------------------
class StageStore:
    """Fold stages a selector fit may be served from (a selector's ``stages`` parameter).

    ``StageStore(states)``: stages (dicts with ``_fingerprint`` / ``_key``, or containers of
    them, e.g. ``frame_to_stages(df)``); of two with the same entry the last wins.  ``hits``
    counts the fits it served; :meth:`require_use` raises when a stage served none (the data
    reaching the selector differ from the stage's: unscaled?).  ``clone`` and copies return
    the store itself; a pickle of it is empty.
    """

    def __init__(self, states=()):
        self._states = {}
        self._hits = Counter()
        self._lock = threading.Lock()
        for s in _flatten([states]):
            self.add(s)

    def add(self, state):
        """Add a stage; returns its (fingerprint, key) entry."""
        entry = stage_entry(state)
        with self._lock:
            self._states[entry] = _frozen(state)
            self._hits[entry] += 0
        return entry

    def __len__(self):
        return len(self._states)

    def lookup(self, selector, X, offsets, y):
        """A copy of the stored state matching this selector's own stage parameters and this
        exact training data (stacked instances ``X``, bag ``offsets``, labels ``y``), or None
        (then the selector computes it)."""
        if not self._states:
            return None
        key = selector_key(selector)
        if key is None:
            return None
        entry = (data_fingerprint(X, offsets, y), key)
        with self._lock:
            state = self._states.get(entry)
            if state is None:
                return None
            self._hits[entry] += 1
        return {k: np.array(v, copy=True) for k, v in state.items() if not k.startswith("_")}

    def hits_per_stage(self):
        """{(fingerprint, key): fits served}."""
        with self._lock:
            return dict(self._hits)

    @property
    def hits(self):
        return sum(self.hits_per_stage().values())

    def unused(self):
        return [e for e, n in self.hits_per_stage().items() if n == 0]

    def require_use(self):
        """Raise RuntimeError if a stage of this store served no fit."""
        unused = self.unused()
        if unused:
            raise RuntimeError(f"{len(unused)} provided stage(s) served no fit: the data "
                               "reaching the selector differ from the stage's (scaling?)")

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self                     # shared by every clone of the estimator holding it

    def __reduce__(self):
        return (type(self), ())         # a cache of this process: pickled empty

    def __repr__(self):
        return f"StageStore({len(self)} stage(s), {self.hits} hit(s))"


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
