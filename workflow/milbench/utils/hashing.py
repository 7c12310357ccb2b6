"""The one sha256 helper: provenance checksums of raw inputs (manifests, ``meta.json``)."""
from __future__ import annotations

import hashlib


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
