"""Helpers with no knowledge of bags or experiments (layer 0: imports nothing of milbench).

:mod:`.cache` (per-process LRU caches for kernels, distances and fits; data fingerprints),
:mod:`.learners` (the scikit-learn single-instance learners a MIL method may wrap, by name),
:mod:`.hashing` (the one sha256 helper for files and bytes), :mod:`.runlog` (the log every
workflow script writes).
"""
