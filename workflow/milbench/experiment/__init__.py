"""The experiment machinery behind the Snakemake workflow (layer 4: may import every layer
below: ``utils``, ``data``, estimators, ``registry``; never ``milbench.report``).

:mod:`.config` (config loading, defaults, the settings and SLURM resources a job runs with),
:mod:`.grid` (method grid, ids, labels, parse-time checks), :mod:`.fold` (the estimator of a
method, one fold's fit), :mod:`.scoring` (a fold's scores row, aggregation, summaries),
:mod:`.runner` (a method job's cells over a process pool), :mod:`.stages` (fold stages: which
selector states a config shares, computing and storing them), :mod:`.codehash` (rerun
triggers from source), :mod:`.plan` (cost model of a config).
"""
