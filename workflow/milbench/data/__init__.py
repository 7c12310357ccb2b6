"""The bag data model and its I/O (layer 1: may import ``milbench.utils`` only).

:mod:`.bags` (``Bags``: stacked instances + offsets + labels), :mod:`.edges` (graph edges
between instances), :mod:`.store` (Parquet bag store), :mod:`.store_folders` (where a data
set's stores are), :mod:`.sources` (built-in and user data sets, manifests, downloads),
:mod:`.arff` (WEKA multi-instance ARFF), :mod:`.folds` (the fixed, seeded cross-validation
splits every method shares).
"""
