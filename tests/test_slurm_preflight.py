"""SLURM preflight and orphan finding without a cluster: sample `scontrol` /
`sinfo` / `squeue` output, the over-limit messages, the attempt headers of rule logs."""
import math
import re
import subprocess
import types

import pytest

from milbench.experiment.config import job_mem_mb, job_runtime, job_threads
from milbench.experiment.slurm import (
    Request,
    cap_note,
    check_requests,
    live_jobs,
    method_requests,
    parse_minutes,
    parse_nodes,
    parse_partitions,
    partition_limits,
    query_partition,
    run_ids,
)
from milbench.utils import runlog

SCONTROL = (
    "PartitionName=debug AllowGroups=ALL Default=YES DefaultTime=NONE MaxNodes=UNLIMITED "
    "MaxTime=UNLIMITED MinNodes=0 MaxCPUsPerNode=UNLIMITED Nodes=localhost State=UP "
    "TotalCPUs=2 TotalNodes=1 DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED "
    "TRES=cpu=2,mem=22057M,node=1,billing=2\n"
    "PartitionName=short AllowGroups=ALL Default=NO DefaultTime=NONE MaxTime=00:30:00 "
    "MaxCPUsPerNode=1 Nodes=localhost State=UP TotalCPUs=2 MaxMemPerNode=2500\n"
    "PartitionName=big Default=NO MaxTime=2-12:00:00 MaxCPUsPerNode=UNLIMITED Nodes=n[1-2] "
    "State=UP MaxMemPerCPU=4000\n")
SINFO = "debug*|localhost|2|22057\nshort|localhost|2|22057\nbig|n1|64|512000\nbig|n2|128|1024000\n"


@pytest.mark.parametrize("text, minutes", [
    ("UNLIMITED", math.inf), ("INFINITE", math.inf), ("30", 30), ("30:00", 30), ("30:01", 31),
    ("00:30:00", 30), ("7:00:00", 420), ("1-00:00:00", 1440), ("2-12", 3600), ("1-01:30", 1530)])
def test_slurm_time_format(text, minutes):
    assert parse_minutes(text) == minutes


def test_partition_limits_from_scontrol_and_sinfo():
    parts, nodes = parse_partitions(SCONTROL), parse_nodes(SINFO)
    debug = partition_limits("debug", parts, nodes)
    assert (debug.cpus, debug.mem_mb, debug.minutes) == (2, 22057, math.inf)
    assert debug.cpus_from == "CPUs of its largest node"
    short = partition_limits("short", parts, nodes)
    assert (short.cpus, short.mem_mb, short.minutes) == (1, 2500, 30)
    assert (short.cpus_from, short.mem_from) == ("MaxCPUsPerNode", "MaxMemPerNode")
    big = partition_limits("big", parts, nodes)       # the largest node holds a job
    assert (big.cpus, big.mem_mb, big.minutes) == (128, 128 * 4000, 3600)
    assert big.mem_from.startswith("MaxMemPerCPU 4000 MB x 128 CPUs")
    assert partition_limits("", parts, nodes) == debug       # no partition named: the default
    with pytest.raises(ValueError, match=r"no partition 'gpu'.*\['big', 'debug', 'short'\].*"
                                         r"slurm_partition"):
        partition_limits("gpu", parts, nodes)


def test_method_request_over_limits_names_job_request_limit_and_key():
    """The default config's request (threads.run 8, 50 cells, 60 min a cell) on a partition of
    1 CPU, 2500 MB and 30 min: each excess named with its limit and the key to change."""
    short = partition_limits("short", parse_partitions(SCONTROL), parse_nodes(SINFO))
    exps = {"paper": {"runtime": 60}}
    reqs = method_requests(exps, 8, lambda n: job_threads(n, 8), job_mem_mb,
                           lambda e, t: job_runtime(60, 50, t), {"paper": 50})
    assert (reqs[0].threads, reqs[0].mem_mb, reqs[0].runtime) == (8, 9000, 420)
    msgs = check_requests(reqs, short)
    assert len(msgs) == 3
    assert msgs[0].startswith("SLURM preflight: job run_method (experiment paper: 50 cells a job) "
                              "asks for threads 8 CPUs, more than partition 'short' allows "
                              "(1 CPUs, its MaxCPUsPerNode); change `threads.run` (now 8)")
    assert "mem_mb 9000 MB, more than partition 'short' allows (2500 MB, its MaxMemPerNode)" \
        in msgs[1] and "mem_mb = 1000 + 1000 x threads" in msgs[1]
    assert "runtime 420 min, more than partition 'short' allows (30 min, its MaxTime); change " \
           "`experiments.paper.runtime` (minutes per cell, now 60)" in msgs[2]
    # the threads cut to the partition's CPUs: only memory and time are left to report
    capped = method_requests(exps, 8, lambda n: job_threads(n, 1), job_mem_mb,
                             lambda e, t: job_runtime(60, 50, t), {"paper": 50})
    msgs = check_requests(capped, short)
    assert [m.split(" asks for ")[1].split(",")[0] for m in msgs] == ["runtime 3000 min"]
    assert "1 threads instead of `threads.run` 8" in cap_note(short, 8, 1)
    debug = partition_limits("debug", parse_partitions(SCONTROL), parse_nodes(SINFO))
    assert check_requests([Request("x", 2, 3000, 60, {})], debug) == []
    assert check_requests([Request("x", 1, "<TBD>", None, {})], short) == []
    down = partition_limits("down", parse_partitions(SCONTROL.replace(
        "PartitionName=short", "PartitionName=down").replace("State=UP TotalCPUs=2 Max",
                                                             "State=DOWN TotalCPUs=2 Max")),
        {"down": [(2, 22057)]})
    assert check_requests([], down) == ["SLURM preflight: partition 'down' is DOWN, no job "
                                        "starts there; name another (`slurm_partition` under "
                                        "default-resources in the profile)"]


def _fake_run(outputs):
    calls = []

    def run(cmd, **kw):
        calls.append(cmd)
        rc, out, err = outputs[cmd[0]]
        return subprocess.CompletedProcess(cmd, rc, out, err)
    return run, calls


def test_query_partition_skips_when_slurm_cannot_be_asked(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda b: None)
    part, why = query_partition("debug")
    assert part is None and why == "SLURM preflight skipped: sinfo / scontrol not found on PATH"
    monkeypatch.setattr("shutil.which", lambda b: "/usr/bin/" + b)
    run, _ = _fake_run({"scontrol": (1, "", "scontrol: error: Unable to contact slurm "
                                             "controller (connect failure)\n"),
                        "sinfo": (0, SINFO, "")})
    part, why = query_partition("debug", run=run)
    assert part is None and "skipped: `scontrol show partition -o` exited 1 (scontrol: error: " \
                            "Unable to contact slurm controller" in why
    run, _ = _fake_run({"scontrol": (0, SCONTROL, ""), "sinfo": (0, SINFO, "")})
    part, why = query_partition("short", run=run)
    assert why is None and (part.cpus, part.minutes) == (1, 30)


def test_orphans_found_by_run_id_of_earlier_logs(tmp_path):
    logs = tmp_path / ".snakemake/log"
    logs.mkdir(parents=True)
    (logs / "2026-01-01T000000.1.snakemake.log").write_text("SLURM run ID: aaa\n")
    (logs / "2026-01-02T000000.2.snakemake.log").write_text("x\nSLURM run ID: bbb\n")
    (logs / "2026-01-03T000000.3.snakemake.log").write_text("SLURM run ID: ccc\n")
    now = logs / "2026-01-03T000000.3.snakemake.log"
    assert sorted(run_ids(tmp_path)) == \
        ["aaa", "bbb", "ccc"]
    assert sorted(run_ids(tmp_path, skip=[now])) == ["aaa", "bbb"]
    run, calls = _fake_run({"squeue": (0, "41|bbb|RUNNING|0:12|rule_run_method_wildcards_x\n",
                                       "")})
    jobs = live_jobs(["aaa", "bbb"], run=run)
    assert jobs == [{"jobid": "41", "run": "bbb", "state": "RUNNING", "elapsed": "0:12",
                     "what": "rule_run_method_wildcards_x"}]
    assert calls[0][:4] == ["squeue", "-h", "--name", "aaa,bbb"]
    assert live_jobs([], run=run) == []


def test_rule_log_keeps_every_attempt(tmp_path, monkeypatch):
    """runlog.setup appends: a retried or rerun job's log holds each attempt under a header."""
    import sys
    log = tmp_path / "m.log"
    sm = types.SimpleNamespace(log=[str(log)], rule="run_method")
    out, err = sys.stdout, sys.stderr
    try:
        for attempt, job in ((1, "17"), (2, "18")):
            monkeypatch.setenv("SLURM_JOB_ID", job)
            runlog.setup(sm)
            print(f"work of attempt {attempt}")
            sys.stdout.flush()
    finally:
        sys.stdout, sys.stderr = out, err
    text = log.read_text()
    heads = [ln for ln in text.splitlines() if ln.startswith("==== attempt started ")]
    assert [h.rsplit(", ", 1)[1] for h in heads] == ["SLURM job 17 ====", "SLURM job 18 ===="]
    assert text.index("work of attempt 1") < text.index(heads[1]) < \
        text.index("work of attempt 2")


def test_preflight_cuts_threads_then_checks_memory_and_time():
    """The default config's paper-sized experiment (5 x 10 folds, threads.run 8) on 'short' (1
    CPU, 2500 MB, 30 min): threads cut to 1, said so; memory 2000 MB fits; 50 x 60 min does not."""
    from milbench.experiment.slurm import preflight
    short = partition_limits("short", parse_partitions(SCONTROL), parse_nodes(SINFO))
    exps = {"paper": {"protocol": {"kind": "kfold", "folds": 10, "repeats": 5, "seed": 0},
                      "runtime": 60}}
    threads, notes, problems = preflight(exps, 8, short)
    assert threads == 1 and len(notes) == 1 and "instead of `threads.run` 8" in notes[0]
    assert len(problems) == 1 and "asks for runtime 3000 min" in problems[0]
    big = partition_limits("big", parse_partitions(SCONTROL), parse_nodes(SINFO))
    assert preflight(exps, 8, big) == (8, [], [])


def test_plan_command_runs_the_preflight(monkeypatch, capsys):
    """`python -m milbench.experiment.plan <config> --partition short` stops (exit 2) on the
    embedded default config, naming the experiment, the MaxTime and the key."""
    from milbench.experiment.plan import cli as plan
    from conftest import REPO
    short = partition_limits("short", parse_partitions(SCONTROL), parse_nodes(SINFO))
    monkeypatch.setattr(plan, "query_partition", lambda name: (short, None))
    with pytest.raises(SystemExit) as e:
        plan.main([str(REPO / "config" / "config.yaml"), "--count-only", "--partition", "short"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "instead of `threads.run` 8" in err
    assert re.search(r"job run_method \(experiment \S+: \d+ cells a job\) asks for runtime \d+ "
                     r"min, more than partition 'short' allows \(30 min, its MaxTime\); change "
                     r"`experiments\.\S+\.runtime`", err), err
    monkeypatch.setattr(plan, "query_partition", lambda name: (None, "SLURM preflight skipped: x"))
    plan.main([str(REPO / "config" / "config.yaml"), "--count-only", "--partition", "short"])
    assert "SLURM preflight skipped: x" in capsys.readouterr().err


def test_rule_log_says_a_repeated_warning_once(tmp_path):
    """An inner CV repeats its fits' ConvergenceWarning; the rule log holds it once."""
    import io
    import logging
    import sys
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    sm = types.SimpleNamespace(log=[str(tmp_path / "m.log")], rule="run_method")
    out, err = sys.stdout, sys.stderr
    seen = io.StringIO()
    handler = logging.StreamHandler(seen)
    logging.getLogger("py.warnings").addHandler(handler)
    try:
        logging.captureWarnings(False)   # an earlier test's capture, undone by pytest's filters
        runlog.setup(sm)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            for _ in range(5):
                warnings.warn("MILR stopped at max_iter=1", ConvergenceWarning)
            warnings.warn("another text", ConvergenceWarning)
    finally:
        sys.stdout, sys.stderr = out, err
        logging.getLogger("py.warnings").removeHandler(handler)
        logging.captureWarnings(False)
    assert seen.getvalue().count("ConvergenceWarning: MILR stopped at max_iter=1") == 1
    assert seen.getvalue().count("ConvergenceWarning: another text") == 1
