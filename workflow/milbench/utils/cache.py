"""Per-process cache of data-only matrices (instance kernels, bag-distance tables).

An inner-CV grid refits a classifier once per candidate on the *same* training bags: MIORDM's
instance kernel K(X, X) (Luan et al. (2020), Eq. 27, needs only its rows at the representatives) and
Citation-kNN's Hausdorff tables depend on the data, the kernel / metric and γ, never on λ, θ, μ
or R, C.  :data:`CACHE` keeps such matrices, least recently used first out, within a byte
bound, keyed by :func:`fingerprint` — shape, dtype and a blake2b hash of the bytes, so equal
data in a new array hits and data differing in one value misses (never ``id()``).

Entries are returned read-only; callers copy before writing.  ``with disabled():`` turns the
cache off (benchmarks, tests).  Each process (run-cell or joblib worker) has its own cache;
entries of a finished cell stay until evicted (the runner clears it per cell), so the bound is
what a worker may keep: 768 MiB (``MILBENCH_KERNEL_CACHE_MB`` overrides it), sized for the
five inner-fold MIORDM kernels of WebKB faculty (packed float64, ~140 MiB each;
miordm.PACKED_KERNEL_MAX_BYTES = 150 MiB) inside a one-thread run cell's 2,000 MB
(workflow/rules/runs.smk: 1000 + 1000 × threads MB; such a cell peaks at ~1.7 GB); a method
job's runner lowers it to half of each cell worker's share of the job's memory.  With a
smaller bound MIORDM computes its kernel blocks every round instead (same model, more CPU).

:func:`memory_limit` is what a process may use (the SLURM job's memory, MemAvailable or
``MILBENCH_MAX_MEMORY_GB``): the bound of blocked distance tables and kernel matrices.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

DEFAULT_MAX_BYTES = int(float(os.environ.get("MILBENCH_KERNEL_CACHE_MB", 768)) * 2**20)


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


class LRUCache:
    """Least-recently-used cache of a process's reusable results, bounded by their total size
    (``sizeof(value)`` bytes, at most ``max_bytes``) and optionally by ``max_entries``.
    Thread-safe.  :meth:`get` counts hits and misses; ``with cache.disabled():`` computes
    afresh inside a block.  Serves the kernel cache below, MIDR's fits
    (:class:`milbench.selectors.midr.FitCache`) and MILSD's per-fold setup."""

    def __init__(self, max_bytes, max_entries=None, sizeof=lambda value: value.nbytes):
        self.max_bytes = int(max_bytes)
        self.max_entries = max_entries
        self.sizeof = sizeof
        self.enabled = True
        self.hits = self.misses = 0
        self._items = OrderedDict()
        self._nbytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self):
        return self._nbytes

    def __len__(self):
        return len(self._items)

    def peek(self, key):
        """The value under ``key`` (now the most recent), else None; not counted."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key, value):
        """Store ``value`` unless ``key`` is held or it alone is over the bound; evict the
        least recently used entries past the bounds."""
        nb = self.sizeof(value)
        with self._lock:
            if key in self._items or nb > self.max_bytes:
                return
            self._items[key] = value
            self._nbytes += nb
            while self._nbytes > self.max_bytes or (
                    self.max_entries is not None and len(self._items) > self.max_entries):
                self._nbytes -= self.sizeof(self._items.popitem(last=False)[1])

    def prepare(self, value):
        """What is stored for a computed value (the value itself)."""
        return value

    def get(self, key, compute):
        """The value stored under ``key``, else ``compute()`` (stored when it fits the bound)."""
        if not self.enabled:
            return compute()
        value = self.peek(key)
        if value is not None:
            self.hits += 1
            return value
        value = self.prepare(compute())
        self.misses += 1
        self.put(key, value)
        return value

    def clear(self):
        with self._lock:
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
