"""Hashes: sha256 provenance checksums of raw inputs (manifests, ``meta.json``), and a fast
content key of arrays for the per-process reuse of fits (:mod:`milbench.utils.cache`)."""
from __future__ import annotations

import hashlib

import numpy as np


def sha256_bytes(data):
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path):
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def array_digest(*arrays):
    """Hashable key of the arrays' contents: (shape, dtype) per array and one sha1 over their
    bytes.  sha1, not blake2b: it is the faster of the two where the CPU has SHA instructions
    (docs/performance.md), and MIDR's and MILR's fit reuse hash the training data of every
    inner-CV fit."""
    h = hashlib.sha1()
    meta = []
    for a in arrays:
        a = np.ascontiguousarray(a)
        meta.append((a.shape, a.dtype.str))
        h.update(a.data)
    return tuple(meta) + (h.hexdigest(),)
