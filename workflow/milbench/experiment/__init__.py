"""The experiment machinery behind the Snakemake workflow (layer 5: may import every layer
below: ``utils``, ``data``, estimators, ``registry``; never ``milbench.report``).

:mod:`.config` (config loading, defaults, the settings a job runs with), :mod:`.pipeline`
(method grid, ids, parse-time checks, the estimator of a method, one fold's fit and scores),
:mod:`.runner` (a method job's cells over a process pool), :mod:`.stages` (fold stages:
selector state computed once per fold and shared), :mod:`.codehash` (rerun triggers from source),
:mod:`.plan` (cost model and cluster requests).
"""
