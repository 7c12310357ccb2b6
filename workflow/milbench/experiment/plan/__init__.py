"""The cost of a config before running it: ``python -m milbench.experiment.plan <config>
[--cores N]`` (docs/budget.md).

For every experiment of a config: its cells, method jobs and fits per cell, counted exactly
from the config as the workflow expands it (:mod:`~milbench.experiment.plan.counting`); the
CPU of a cell, measured on this machine's real data by draws spread over each family's methods,
grid and cells (:mod:`~milbench.experiment.plan.draws`), each timed in CPU seconds in a forked
child (:mod:`~milbench.experiment.plan.sandbox`, :mod:`~milbench.experiment.plan.measure`); the
estimated CPU and wall at ``--cores`` cores (:mod:`~milbench.experiment.plan.estimate`); and
the SLURM resources of each method job, from the functions the workflow's rules call
(:mod:`~milbench.experiment.plan.cli` prints them).  HyDR-MI's and MIDR's rules come from the
estimators themselves (``HyDRMI.fitness_problem`` / ``genetic_runs``, a selector's
``shared_fit_slot``).
"""
from milbench.experiment.plan.cli import main, report, rows
from milbench.experiment.plan.counting import (
    count_experiment,
    families,
    fits_per_cell,
    grid_size,
    job_resources,
    shorten,
    tune_dims,
)
from milbench.experiment.plan.draws import (
    MIN_RANDOM_GROUPS,
    cell_order,
    design,
    selector_fit_slot,
    timed_enough,
    tuned_groups,
)
from milbench.experiment.plan.estimate import (
    CELL_OVERHEAD,
    MIN_UNTUNED_CPU,
    caveats,
    data_status,
    load_bags,
    plan,
)
from milbench.experiment.plan.measure import Surrogate, ga_evaluations
from milbench.experiment.plan.sandbox import fixed_job_cpu, run_forked

__all__ = ["CELL_OVERHEAD", "MIN_RANDOM_GROUPS", "MIN_UNTUNED_CPU", "Surrogate", "caveats",
           "cell_order", "count_experiment", "data_status", "design", "families",
           "fits_per_cell", "fixed_job_cpu", "ga_evaluations", "grid_size", "job_resources",
           "load_bags", "main", "plan", "report", "rows", "run_forked", "selector_fit_slot",
           "shorten", "timed_enough", "tune_dims", "tuned_groups"]
