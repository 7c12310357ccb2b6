"""Where the planner's draws run: each in a forked child with one BLAS thread and the run's
in-process reuse on (:func:`milbench.utils.cache.reuse`), timed with ``time.process_time``; a
child still running past its limit is stopped and its CPU so far, read from ``/proc``, is a
lower bound.  Also the fixed CPU of a job: a fresh interpreter importing what a method job
imports.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import resource
import subprocess
import sys
import traceback
from pathlib import Path

from threadpoolctl import threadpool_limits

from milbench.experiment.plan.measure import draw_hydr, draw_tuned, draw_untuned, warm_up
from milbench.utils.cache import reuse


def _child(conn, ctx, task):
    threadpool_limits(1)
    try:
        with reuse():       # what the run's cells reuse (milbench.utils.cache), the draw does
            warm_up(ctx, task)
            fn = {"hydr": draw_hydr, "tuned": draw_tuned, "untuned": draw_untuned}[task["kind"]]
            out = fn(ctx, task)
    except Exception as e:  # noqa: BLE001 - reported, the family is then unmeasured
        out = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-800:]}
    conn.send(out)
    conn.close()


def proc_cpu(pid):
    """CPU seconds a live process has used (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def run_forked(ctx, task, limit):
    """Run one draw in a forked child; returns its result, or {"stopped": cpu} when it ran past
    ``limit`` seconds (its CPU so far, a lower bound)."""
    ctx_mp = mp.get_context("fork")
    recv, send = ctx_mp.Pipe(duplex=False)
    p = ctx_mp.Process(target=_child, args=(send, ctx, task))
    p.start()
    send.close()
    if recv.poll(max(limit, 0.5)):
        try:
            out = recv.recv()
        except EOFError:
            out = {"error": f"child died (exit {p.exitcode})"}
        p.join()
        return out
    cpu = proc_cpu(p.pid)
    p.kill()
    p.join()
    return {"stopped": cpu if cpu is not None else float("nan")}


def fixed_job_cpu():
    """CPU of a fresh interpreter importing what a method job imports (child rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import milbench.experiment.runner, milbench.experiment.fold, "
                    "milbench.registry, milbench.data.store, sklearn.model_selection, pyarrow.parquet"],
                   check=True, env=_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _env():
    lib = str(Path(__file__).resolve().parents[3])      # workflow/ (milbench's parent)
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
                PYTHONPATH=lib + (os.pathsep + path if path else ""))


