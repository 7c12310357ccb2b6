"""SLURM runs a user can steer: job requests checked against the partition before
anything is submitted, and the jobs of a killed run found again.

* :func:`query_partition` reads a partition's limits (``scontrol show partition -o``: MaxTime,
  MaxCPUsPerNode, MaxMemPerNode / MaxMemPerCPU; ``sinfo -N``: the CPUs and memory of its nodes):
  a job fits when one node can hold it.  Without ``sinfo`` (or a controller that answers) the
  check is skipped, and says so.
* :func:`check_requests` compares job requests with those limits and returns one message per
  excess, naming the job, its request, the limit and the config key that sets the request.
  Threads are the one request cut instead (:func:`cap_note`): a method job's cells are seeded
  independently of its threads (:mod:`milbench.experiment.runner`), so fewer threads change its
  wall time, never its scores.
* :func:`live_jobs` lists the jobs of earlier runs still queued or running: Snakemake's SLURM
  executor names every job of a run after the run's id ("SLURM run ID: <uuid>" in
  ``.snakemake/log/*.snakemake.log``), and a SIGKILLed Snakemake leaves them behind.
  ``python -m milbench.experiment.slurm orphans [--cancel | --wait]`` lists, cancels or waits
  for them.

The SLURM time format (``[days-]hours:minutes:seconds`` and its shorter forms) follows the
sbatch manual (``--time``).
"""
from __future__ import annotations

import argparse
import math
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from milbench.data.folds import fold_keys
from milbench.experiment.config import job_mem_mb, job_runtime, job_threads

UNLIMITED = math.inf
LIVE_STATES = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
               "RESIZING", "STOPPED")
RUN_ID = re.compile(r"SLURM run ID: (\S+)")


# ------------------------------------------------------------------------------------------
# partition limits
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Partition:
    """What one job may get from a partition: CPUs and memory on one node, minutes of time."""
    name: str
    cpus: float
    mem_mb: float
    minutes: float
    cpus_from: str      # which setting bounds each limit (for the messages)
    mem_from: str
    state: str = "UP"


def parse_minutes(text):
    """SLURM time (``UNLIMITED``, ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``,
    ``days-hours[:minutes[:seconds]]``) in minutes; seconds round up."""
    t = str(text).strip()
    if t.upper() in ("UNLIMITED", "INFINITE", "NONE", ""):
        return UNLIMITED
    days, _, rest = t.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if days:
        h, m, s = (parts + [0, 0])[:3]
    elif len(parts) == 3:
        h, m, s = parts
    else:
        h, (m, s) = 0, (parts + [0])[:2]
    return (int(days or 0) * 24 + h) * 60 + m + (1 if s else 0)


def _number(text):
    t = str(text).strip().upper()
    if t in ("UNLIMITED", "INFINITE", "NONE", "", "N/A"):
        return UNLIMITED
    return float(re.match(r"[\d.]+", t).group())


def parse_partitions(text):
    """``scontrol show partition -o`` (one line per partition) -> {name: {key: value}}."""
    out = {}
    for line in text.splitlines():
        fields = dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
        if "PartitionName" in fields:
            out[fields["PartitionName"]] = fields
    return out


def parse_nodes(text):
    """``sinfo -h -N -o '%P|%N|%c|%m'`` -> {partition: [(cpus, memory MB) per node]} (the
    default partition's trailing ``*`` dropped)."""
    out = {}
    for line in text.splitlines():
        if line.count("|") != 3:
            continue
        part, _, cpus, mem = line.strip().split("|")
        out.setdefault(part.rstrip("*"), []).append((_number(cpus), _number(mem)))
    return out


def partition_limits(name, partitions, nodes):
    """The :class:`Partition` ``name`` from parsed ``scontrol`` and ``sinfo`` output; ValueError
    naming the known partitions when there is no such partition."""
    if not name:   # no slurm_partition given: SLURM's default partition
        name = next((n for n, p in partitions.items() if p.get("Default") == "YES"), name)
    if name not in partitions:
        raise ValueError(f"SLURM preflight: no partition {name!r} on this cluster (scontrol "
                         f"show partition lists {sorted(partitions)}); set `slurm_partition` "
                         f"under default-resources of the profile (profiles/slurm/config.yaml)")
    p = partitions[name]
    node_cpus = max((c for c, _ in nodes.get(name, [])), default=UNLIMITED)
    node_mem = max((m for _, m in nodes.get(name, [])), default=UNLIMITED)
    max_cpus = _number(p.get("MaxCPUsPerNode", "UNLIMITED"))
    cpus, cpus_from = ((max_cpus, "MaxCPUsPerNode") if max_cpus < node_cpus
                       else (node_cpus, "CPUs of its largest node"))
    max_mem = _number(p.get("MaxMemPerNode", "UNLIMITED"))
    per_cpu = _number(p.get("MaxMemPerCPU", "UNLIMITED"))
    if per_cpu * cpus < max_mem:
        max_mem, mem_src = per_cpu * cpus, f"MaxMemPerCPU {per_cpu:.0f} MB x {cpus:.0f} CPUs"
    else:
        mem_src = "MaxMemPerNode"
    mem, mem_from = ((max_mem, mem_src) if max_mem < node_mem
                     else (node_mem, "RealMemory of its largest node"))
    return Partition(name, cpus, mem, parse_minutes(p.get("MaxTime", "UNLIMITED")),
                     cpus_from, mem_from, p.get("State", "UP"))


def query_partition(name, run=subprocess.run):
    """(Partition, None), or (None, why the check was skipped) when SLURM cannot be asked."""
    if shutil.which("sinfo") is None or shutil.which("scontrol") is None:
        return None, "SLURM preflight skipped: sinfo / scontrol not found on PATH"
    outs = []
    for cmd in (["scontrol", "show", "partition", "-o"],
                ["sinfo", "-h", "-N", "-o", "%P|%N|%c|%m"]):
        try:
            res = run(cmd, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"SLURM preflight skipped: `{' '.join(cmd)}` failed ({e})"
        if res.returncode:
            why = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
            return None, (f"SLURM preflight skipped: `{' '.join(cmd)}` exited {res.returncode} "
                          f"({why[0]})")
        outs.append(res.stdout)
    return partition_limits(name, parse_partitions(outs[0]), parse_nodes(outs[1])), None


# ------------------------------------------------------------------------------------------
# requests
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """One job's request; ``keys`` says, per resource, which setting changes it."""
    job: str
    threads: int
    mem_mb: float
    runtime: float
    keys: dict


def check_requests(requests, part):
    """One message per request above the partition's limits (threads included: a caller that
    caps threads checks the capped request), and one when the partition is not UP."""
    out = [] if part.state == "UP" else [
        f"SLURM preflight: partition {part.name!r} is {part.state}, no job starts there; name "
        f"another (`slurm_partition` under default-resources in the profile)"]
    for r in requests:
        for res, asked, limit, what, unit in (
                ("threads", r.threads, part.cpus, part.cpus_from, " CPUs"),
                ("mem_mb", r.mem_mb, part.mem_mb, part.mem_from, " MB"),
                ("runtime", r.runtime, part.minutes, "MaxTime", " min")):
            if isinstance(asked, (int, float)) and asked > limit:
                out.append(f"SLURM preflight: job {r.job} asks for {res} {asked:.0f}{unit}, more "
                           f"than partition {part.name!r} allows ({limit:.0f}{unit}, its {what}); "
                           f"change {r.keys[res]}, or name a larger partition "
                           f"(`slurm_partition` under default-resources in the profile)")
    return out


def cap_note(part, run_threads, capped):
    """The line that says method jobs were cut to the partition's CPUs (threads.run above it)."""
    return (f"SLURM preflight: partition {part.name!r} gives one job at most {part.cpus:.0f} "
            f"CPUs ({part.cpus_from}); method jobs run on {capped} threads instead of "
            f"`threads.run` {run_threads} (scores do not depend on threads: every cell is "
            f"seeded on its own)")


def method_keys(exp, runtime, run_threads):
    """{resource: the config key that sets it} of a method (or fold-stage) job of ``exp``."""
    return {"threads": f"`threads.run` (now {run_threads})",
            "mem_mb": f"`threads.run` (now {run_threads}; mem_mb = 1000 + 1000 x threads)",
            "runtime": f"`experiments.{exp}.runtime` (minutes per cell, now {runtime}), or "
                       f"raise `threads.run` (now {run_threads}) where the partition has the CPUs"}


def method_requests(experiments, run_threads, threads, mem_mb, runtime, n_cells):
    """The request of each experiment's method jobs (all method jobs of an experiment ask the
    same): ``threads(cells)``, ``mem_mb(threads)``, ``runtime(experiment, threads)``, the
    functions the rules call; ``n_cells[experiment]`` its cells per job."""
    out = []
    for exp, cfg in experiments.items():
        n = n_cells[exp]
        t = threads(n)
        out.append(Request(f"run_method (experiment {exp}: {n} cells a job)", t, mem_mb(t),
                           runtime(exp, t), method_keys(exp, cfg["runtime"], run_threads)))
    return out


def job_requests(jobs, method_rules, method_keys):
    """Requests of Snakemake DAG jobs (``job.rule.name``, ``job.wildcards``, ``job.threads``,
    ``job.resources``) grouped by partition: {partition: [Request]}.  Method rules point at the
    config keys (``method_keys(job)``), every other rule at ``--set-resources``."""
    out = {}
    for job in jobs:
        res = job.resources
        name = job.rule.name
        label = name + ("[" + ", ".join(f"{k}={v}" for k, v in job.wildcards.items()) + "]"
                        if len(job.wildcards) else "")
        keys = (method_keys(job) if name in method_rules else
                {r: f"`set-resources: {name}: {r}` in the profile (or --set-resources "
                    f"{name}:{r}=N)" for r in ("mem_mb", "runtime")}
                | {"threads": f"--set-threads {name}=N"})
        out.setdefault(str(res.get("slurm_partition", "")).strip("'\""), []).append(
            Request(label, int(job.threads), res.get("mem_mb"), res.get("runtime"), keys))
    return out


def preflight(experiments, run_threads, part):
    """(threads, notes, problems) of the method jobs of ``experiments`` (defaults filled) on
    partition ``part``: ``threads`` is ``threads.run``, cut to the partition's CPUs per node where
    a job would ask for more (a note says so); ``problems`` are :func:`check_requests`' messages
    for the requests that follow (memory and time computed from the cut threads)."""
    cells = {e: len(fold_keys(c["protocol"])) for e, c in experiments.items()}
    threads, notes = int(run_threads), []
    if any(job_threads(n, threads) > part.cpus for n in cells.values()):
        threads = int(part.cpus)
        notes.append(cap_note(part, run_threads, threads))
    reqs = method_requests(experiments, run_threads, lambda n: job_threads(n, threads), job_mem_mb,
                           lambda e, t: job_runtime(experiments[e]["runtime"], cells[e], t), cells)
    return threads, notes, check_requests(reqs, part)


def check_before_submit(jobs, logs, default_partition, method_rules, method_keys):
    """Problems that stop a SLURM run before it submits anything, as one message ("" when
    none): live jobs of a killed earlier run of this working directory (:func:`live_jobs`; a new
    run would compute them again), and requests of the DAG ``jobs`` (:func:`job_requests`)
    above their partition's limits (:func:`check_requests`).  ``logs``: this run's own
    Snakemake log(s), whose run id is not an orphan's."""
    try:
        orphans = live_jobs(run_ids(".", skip=logs))
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"SLURM orphan check skipped: {e}", file=sys.stderr)
        orphans = []
    if orphans:
        return orphans_message(orphans, ".")
    problems = []
    for part, reqs in job_requests(jobs, method_rules, method_keys).items():
        limits, skipped = query_partition(part or default_partition or "")
        if skipped:
            print(skipped, file=sys.stderr)
            continue
        problems += check_requests(reqs, limits)
    return "\n".join(problems)


def stop_on_sigterm():
    """From now on SIGTERM stops this process as Ctrl-C does (the SLURM plugin then cancels the
    run's jobs); Snakemake alone would wait for every running job, and a pending one forever."""
    def stop(signum, frame):
        # once: a second SIGTERM (`timeout`, or SLURM signalling a whole process group, sends
        # it twice) would break off the cancelling and leave the jobs running
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("SIGTERM: stopping as on Ctrl-C, this run's SLURM jobs are cancelled; run the "
              "same command again to resume", file=sys.stderr, flush=True)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


# ------------------------------------------------------------------------------------------
# orphans: jobs of earlier runs of this working directory
# ------------------------------------------------------------------------------------------
def run_ids(workdir=".", skip=()):
    """SLURM run ids named in ``<workdir>/.snakemake/log/*.snakemake.log``, oldest log first,
    leaving out those of the logs in ``skip``."""
    logs = sorted(Path(workdir, ".snakemake", "log").glob("*.snakemake.log"),
                  key=lambda p: p.stat().st_mtime)
    skip = {Path(s).resolve() for s in skip if s}
    out = []
    for p in logs:
        if p.resolve() in skip:
            continue
        out += [m for m in RUN_ID.findall(p.read_text(errors="replace")) if m not in out]
    return out


def live_jobs(ids, run=subprocess.run):
    """[{jobid, run, state, elapsed, what}] of the jobs of the runs ``ids`` still in SLURM
    (queued, running or ending); ``what`` is the plugin's comment (rule and wildcards)."""
    if not ids:
        return []
    res = run(["squeue", "-h", "--name", ",".join(ids), "-t", ",".join(LIVE_STATES),
               "-o", "%i|%j|%T|%M|%k"], capture_output=True, text=True, timeout=60)
    if res.returncode:
        raise RuntimeError(f"squeue exited {res.returncode}: {res.stderr.strip()}")
    jobs = []
    for line in res.stdout.splitlines():
        if line.count("|") >= 4:
            jobid, name, state, elapsed, what = line.split("|", 4)
            jobs.append({"jobid": jobid, "run": name, "state": state, "elapsed": elapsed,
                         "what": what})
    return jobs


def orphans_message(jobs, workdir="."):
    lines = [f"{j['jobid']} {j['state']} {j['elapsed']} {j['what']} (run {j['run']})"
             for j in jobs]
    where = "" if str(workdir) in ("", ".") else f" -d {workdir}"
    return (f"{len(jobs)} SLURM job(s) of an earlier run of this working directory are still "
            f"queued or running (its Snakemake was killed):\n  " + "\n  ".join(lines) +
            "\nA new run would compute them again. Either let them finish and adopt their "
            "results:\n  python -m milbench.experiment.slurm orphans --wait" + where +
            "\nor cancel them:\n  python -m milbench.experiment.slurm orphans --cancel" + where +
            "\nthen run Snakemake again.")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m milbench.experiment.slurm",
        description="Jobs of earlier (killed) Snakemake runs of a working directory still in "
                    "SLURM: list them, cancel them, or wait for them.")
    sub = ap.add_subparsers(dest="command", required=True)
    o = sub.add_parser("orphans", help="jobs of earlier runs still queued or running")
    o.add_argument("-d", "--directory", default=".", help="Snakemake's working directory")
    act = o.add_mutually_exclusive_group()
    act.add_argument("--cancel", action="store_true", help="scancel them")
    act.add_argument("--wait", action="store_true", help="wait until none is left")
    o.add_argument("--poll", type=float, default=10.0, help="seconds between checks (--wait)")
    a = ap.parse_args(argv)
    ids = run_ids(a.directory)
    jobs = live_jobs(ids)
    if not jobs:
        print(f"no SLURM job of the {len(ids)} run(s) logged in {a.directory}/.snakemake/log is "
              f"queued or running")
        return 0
    print(orphans_message(jobs, a.directory).split("\nA new run")[0])
    if a.cancel:
        subprocess.run(["scancel", *[j["jobid"] for j in jobs]], check=True, timeout=60)
        while live_jobs(ids):   # scancel returns before the jobs end
            time.sleep(1)
        print(f"cancelled {len(jobs)} job(s); their methods run again in the next run")
    elif a.wait:
        while jobs:
            time.sleep(a.poll)
            jobs = live_jobs(ids)
        print("all ended; the next run keeps what they finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
