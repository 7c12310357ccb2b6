"""Per-process caches of reusable results, one mechanism for all of them: the data-only matrices
of :data:`CACHE` (instance kernels, bag-distance tables) and the fits of MILR, MIDR, LC-MF and
MILSD (``milr.FIT_CACHE``, ``midr.FIT_CACHE``, ``lcmf.FACTOR_CACHE``, ``milsd.SETUP_CACHE``).

**Reuse is off unless switched on.**  The runner switches it on around each cell of a method
job (:func:`milbench.experiment.runner._run_one`) and the planner around each draw;
``with reuse():`` does it anywhere else (a notebook, a benchmark).  Outside, no cache is read or
written: a plain ``MILR().fit(...)`` computes afresh.  Inside, a hit returns exactly what the
fresh computation gives, so a fit never depends on the fits run before it (``MILSD(warm_C=True)``
is the one stated exception: its warm starts come from this store, so they too happen only
while reuse is on).  ``with cache.disabled():`` computes afresh inside a block even then.

**Keys.**  A fit cache's key is the estimator's class, its ``get_params()`` minus the
parameters its class lists in ``cache_ignores`` (each with the reason the cached result does not
depend on it), and a fingerprint of the training data (:func:`fit_key`): a parameter added
later, or by a subclass, is part of the key without anyone listing it.  A class whose one fit
serves several settings (MIDR: a fit with H ≡ 0 serves every C1 ≥ C2) states that rule once,
as ``shared_fit_slot`` (:class:`ReusesFits`), which the estimator, the inner CV's pipeline
(:mod:`milbench.experiment.fold`) and the planner (:mod:`milbench.experiment.plan`) call.
:data:`CACHE`'s keys are data fingerprints (:func:`fingerprint`: shape, dtype and a blake2b
hash of the bytes, so equal data in a new array hits and data differing in one value misses,
never ``id()``) and the kernel / metric parameters the matrix depends on.

**Bounds.**  Each cache has a byte bound of its own and all of them together hold at most
:func:`total_max_bytes` (least recently used entries, over every cache, go first).  Defaults:
768 MiB for :data:`CACHE` and for the total (``MILBENCH_KERNEL_CACHE_MB`` overrides both), sized
for the five inner-fold MIORDM kernels of WebKB faculty (packed float64, ~140 MiB each;
miordm.PACKED_KERNEL_MAX_BYTES = 150 MiB).  A method job's runner lowers both to half of each
cell worker's share of the job's memory (:func:`bound_per_worker`), which ``job_mem_mb``
(:mod:`milbench.experiment.config`) counts.  A smaller bound only makes a method compute again
what it would have reused (same model, more CPU).  Each process (run-cell or joblib worker) has
its own caches; the runner clears them between cells (:func:`clear_cell_caches`), but for a
cache whose entries serve the next cells (``spans_cells``: LC-MF's factorisation of all pages).

:func:`memory_limit` is what a process may use (the SLURM job's memory, MemAvailable or
``MILBENCH_MAX_MEMORY_GB``): the bound of blocked distance tables and kernel matrices.
"""
from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import threading
import weakref
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

DEFAULT_MAX_BYTES = int(float(os.environ.get("MILBENCH_KERNEL_CACHE_MB", 768)) * 2**20)

#: set to "1" while reuse is on, so that joblib workers a cell starts reuse as it does
REUSE_ENV = "MILBENCH_REUSE"

_LOCK = threading.RLock()          # one lock: the total bound evicts across caches
_CACHES = weakref.WeakSet()        # every cache of this process
_TICK = itertools.count()          # recency over all caches
_STATE = {"reuse": os.environ.get(REUSE_ENV) == "1", "total": DEFAULT_MAX_BYTES}


def memory_limit():
    """Bytes this process may use: MILBENCH_MAX_MEMORY_GB if set, else the smallest of the
    SLURM job's memory (SLURM_MEM_PER_NODE, MB) and MemAvailable; None when unknown."""
    if os.environ.get("MILBENCH_MAX_MEMORY_GB"):
        return int(float(os.environ["MILBENCH_MAX_MEMORY_GB"]) * 2**30)
    limits = []
    if os.environ.get("SLURM_MEM_PER_NODE", "").isdigit():
        limits.append(int(os.environ["SLURM_MEM_PER_NODE"]) * 2**20)
    with contextlib.suppress(OSError):   # no /proc/meminfo (not Linux): no machine limit
        with open("/proc/meminfo") as f:
            limits += [int(ln.split()[1]) * 1024 for ln in f if ln.startswith("MemAvailable:")]
    return min(limits) if limits else None


def fingerprint(*arrays):
    """Hashable key of array contents: (shape, dtype, blake2b-128 of the bytes) per array."""
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a)
        out.append((a.shape, a.dtype.str, hashlib.blake2b(a.data, digest_size=16).hexdigest()))
    return tuple(out)


def matrix_fingerprint(A):
    """:func:`fingerprint` of a dense array, or of a scipy sparse matrix's shape and CSR arrays
    (a fraction of the dense bytes to hash)."""
    if sp.issparse(A):
        A = A.tocsr()
        return (A.shape,) + fingerprint(A.data, A.indices, A.indptr)
    return fingerprint(A)


# -- the switch -------------------------------------------------------------------------------
def reusing():
    """Whether this process reuses cached results now."""
    return _STATE["reuse"]


@contextlib.contextmanager
def reuse(on=True):
    """Reuse cached results inside the block (``on=False``: compute afresh inside it).  Also
    sets ``MILBENCH_REUSE`` for the joblib workers started inside (a cell with
    ``threads.cell`` > 1), which read it on import and keep it for their life."""
    was, env = _STATE["reuse"], os.environ.get(REUSE_ENV)
    _STATE["reuse"] = bool(on)
    os.environ[REUSE_ENV] = "1" if on else "0"
    try:
        yield
    finally:
        _STATE["reuse"] = was
        if env is None:
            os.environ.pop(REUSE_ENV, None)
        else:
            os.environ[REUSE_ENV] = env


# -- bounds -----------------------------------------------------------------------------------
def total_max_bytes():
    """The bound on the bytes all caches of this process hold together."""
    return _STATE["total"]


def set_total_max_bytes(nbytes):
    """Bound all caches together at ``nbytes``, evicting the least recently used entries."""
    with _LOCK:
        _STATE["total"] = int(nbytes)
        _shrink_to_total()


def bound_per_worker(workers):
    """Bound :data:`CACHE` and all caches together at half of this worker's share of the
    process's memory (:func:`memory_limit` / ``workers``), at most :data:`DEFAULT_MAX_BYTES`:
    ``workers`` cells with full caches then stay inside the job's ``mem_mb``."""
    limit = memory_limit()
    share = DEFAULT_MAX_BYTES if limit is None else limit // (2 * workers)
    CACHE.max_bytes = min(DEFAULT_MAX_BYTES, share)
    set_total_max_bytes(min(DEFAULT_MAX_BYTES, share))


def cached_bytes():
    """Bytes all caches of this process hold."""
    with _LOCK:
        return sum(c.nbytes for c in _CACHES)


def _shrink_to_total():
    total = sum(c.nbytes for c in _CACHES)
    while total > _STATE["total"]:
        held = [c for c in _CACHES if len(c)]
        if not held:
            break
        oldest = min(held, key=lambda c: next(iter(c._items.values()))[1])
        total -= oldest._pop_oldest()


def clear_cell_caches():
    """Empty every cache but those whose entries serve later cells (``spans_cells``): what the
    runner does before each cell."""
    with _LOCK:
        for c in list(_CACHES):
            if not c.spans_cells:
                c.clear()


# -- keys of fits -----------------------------------------------------------------------------
class ReusesFits:
    """Mixin of an estimator whose fits a process reuses while reuse is on (:func:`reuse`).

    ``cache_ignores``: {parameter: why the cached result does not depend on it}; every other
    parameter of ``get_params()`` is part of the key (:func:`fit_key`).  ``shared_fit_slot``:
    None, or a function of a setting's parameters (a dict) giving the tag of the fit that
    serves it together with other settings (None for a fit of its own): the one statement of
    such a rule, called by the estimator, the workflow's pipeline and the planner."""

    cache_ignores: dict = {}
    shared_fit_slot = None


def reuses_fits(cls):
    """Whether the estimator class ``cls`` reuses its own fits (:class:`ReusesFits`)."""
    return isinstance(cls, type) and issubclass(cls, ReusesFits)


class _Uncacheable(Exception):
    """A parameter holds a random generator: the fit cannot be reused."""


def _frozen(value):
    """A hashable stand-in for a parameter value; a random generator (its state moves from
    fit to fit) has none."""
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        raise _Uncacheable
    if isinstance(value, np.ndarray):
        return fingerprint(value)
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if hasattr(value, "get_params"):
        return params_key(value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def params_key(est, ignore=()):
    """(class, sorted (name, value) pairs of ``est.get_params(deep=False)`` but ``ignore``)."""
    params = est.get_params(deep=False)
    unknown = sorted(set(ignore) - set(params))
    if unknown:
        raise ValueError(f"{type(est).__name__}: cache_ignores names {unknown}, which are not "
                         f"parameters of it (get_params: {sorted(params)})")
    cls = type(est)
    return (f"{cls.__module__}.{cls.__qualname__}",
            tuple((k, _frozen(params[k])) for k in sorted(params) if k not in ignore))


def fit_key(est, *data):
    """The cache key of a fit of ``est`` on ``data`` (fingerprints of the training data and
    what the fit derives from its size): :func:`params_key` without the class's
    ``cache_ignores``; None when a parameter is a random generator (not reusable)."""
    try:
        return params_key(est, getattr(type(est), "cache_ignores", {})) + data
    except _Uncacheable:
        return None


# -- the caches -------------------------------------------------------------------------------
class LRUCache:
    """Least-recently-used cache of a process's reusable results, bounded by their total size
    (``sizeof(value)`` bytes, at most ``max_bytes``; all caches together at most
    :func:`total_max_bytes`) and optionally by ``max_entries``.  Thread-safe.  Read and written
    only while reuse is on (:attr:`active`); :meth:`get` counts hits and misses;
    ``with cache.disabled():`` computes afresh inside a block.  ``spans_cells``: entries serve
    later cells of a method job, so the runner keeps them (:func:`clear_cell_caches`)."""

    def __init__(self, max_bytes, max_entries=None, sizeof=lambda value: value.nbytes,
                 spans_cells=False):
        self.max_bytes = int(max_bytes)
        self.max_entries = max_entries
        self.sizeof = sizeof
        self.spans_cells = spans_cells
        self.enabled = True
        self.hits = self.misses = 0
        self._items = OrderedDict()      # key -> (value, last use)
        self._nbytes = 0
        with _LOCK:
            _CACHES.add(self)

    @property
    def active(self):
        """Whether results are reused now: reuse is on (:func:`reuse`) and this cache is not
        :meth:`disabled`."""
        return _STATE["reuse"] and self.enabled

    @property
    def nbytes(self):
        return self._nbytes

    def __len__(self):
        return len(self._items)

    def peek(self, key):
        """The value under ``key`` (now the most recent), else None; not counted."""
        with _LOCK:
            if key not in self._items:
                return None
            value = self._items.pop(key)[0]
            self._items[key] = (value, next(_TICK))
            return value

    def count(self, hit):
        """Count a hit (or a miss) of a lookup done with :meth:`peek`."""
        with _LOCK:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    def put(self, key, value):
        """Store ``value`` unless ``key`` is held or it alone is over the bounds; evict the
        least recently used entries past them."""
        nb = self.sizeof(value)
        with _LOCK:
            if key in self._items or nb > min(self.max_bytes, _STATE["total"]):
                return
            self._items[key] = (value, next(_TICK))
            self._nbytes += nb
            while self._nbytes > self.max_bytes or (
                    self.max_entries is not None and len(self._items) > self.max_entries):
                self._pop_oldest()
            _shrink_to_total()

    def _pop_oldest(self):
        nb = self.sizeof(self._items.popitem(last=False)[1][0])
        self._nbytes -= nb
        return nb

    def prepare(self, value):
        """What is stored for a computed value (the value itself)."""
        return value

    def get(self, key, compute):
        """The value stored under ``key``, else ``compute()`` (stored when it fits the bounds);
        ``compute()`` alone while reuse is off or ``key`` is None."""
        if key is None or not self.active:
            return compute()
        value = self.peek(key)
        if value is not None:
            self.count(True)
            return value
        value = self.prepare(compute())
        self.count(False)
        self.put(key, value)
        return value

    def clear(self):
        with _LOCK:
            self._items.clear()
            self._nbytes = 0
            self.hits = self.misses = 0

    @contextlib.contextmanager
    def disabled(self):
        """Compute everything afresh inside the block (the uncached path)."""
        was, self.enabled = self.enabled, False
        try:
            yield self
        finally:
            self.enabled = was


class ArrayCache(LRUCache):
    """LRU cache of numpy arrays bounded by their total ``nbytes`` (``max_bytes``); entries are
    stored read-only."""

    def __init__(self, max_bytes=DEFAULT_MAX_BYTES):
        super().__init__(max_bytes)

    def prepare(self, value):
        value = np.asarray(value)
        value.flags.writeable = False
        return value


CACHE = ArrayCache()


def disabled(cache=CACHE):
    """Compute everything afresh inside the block (the uncached path)."""
    return cache.disabled()
