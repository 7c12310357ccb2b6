"""A real SLURM run of the pipeline: one-node cluster on localhost, Snakemake's SLURM
executor through profiles/slurm, scores identical to a local run.

Needs root and the Debian packages slurm-wlm + munge (.ci/slurm-setup.sh installs them); skips
with the reason otherwise. tests/slurm/setup-slurm.sh starts munged, slurmctld and slurmd (no
slurmdbd: job states come from squeue), tests/slurm/teardown-slurm.sh stops them by PID.
Run beside it in a thread: the preflight (over-limit requests stop `-n`), and a
stop/resume scenario (scancel, SIGTERM, SIGKILL + orphans, resume). Its time goes mostly to the
plugin's status polling and two Snakemake starts per SLURM job (docs/performance.md)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest
import yaml

from conftest import REPO, tiny_config

SLURM_DIR = REPO / "tests" / "slurm"
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
TARGET = "results/tiny/scores.parquet"
SLURM_LIMIT_S = 420  # hard limit of the SLURM run (timeout -k 10)


def _skip_reason():
    missing = [b for b in ("sinfo", "squeue", "scancel", "slurmctld", "slurmd", "munged")
               if shutil.which(b) is None]
    if missing:
        return f"SLURM not installed ({', '.join(missing)} missing; run .ci/slurm-setup.sh as root)"
    if os.geteuid() != 0:
        return "starting slurmctld/slurmd/munged needs root"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "snakemake-executor-plugin-slurm not installed"
    return None


SKIP_REASON = _skip_reason()
pytestmark = pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))


@pytest.fixture(scope="module")
def cluster():
    env = dict(os.environ, MILBENCH_SLURM_STATE="/run/milbench-slurm")
    res = subprocess.run(["bash", str(SLURM_DIR / "setup-slurm.sh")], capture_output=True,
                         text=True, timeout=180, env=env)
    if res.returncode:
        subprocess.run(["bash", str(SLURM_DIR / "teardown-slurm.sh")], env=env, timeout=120)
        pytest.fail(f"setup-slurm.sh failed:\n{res.stdout}\n{res.stderr}")
    yield res.stdout
    subprocess.run(["bash", str(SLURM_DIR / "teardown-slurm.sh")], env=env, timeout=120)


def slurm_config():
    """tiny_config with MI-Simple replaced by a user's own method ('module:Class' from a `code:`
    directory, examples/own_method): the nodes must import it as the local run does."""
    cfg = tiny_config()
    cfg["code"] = [str(REPO / "examples" / "own_method")]
    cfg["experiments"]["tiny"]["classifiers"][1] = {"name": "pooling:MeanMaxPooling"}
    return cfg


def _start(workdir, *args, limit=None, config=None):
    (workdir / "config.yaml").write_text(yaml.safe_dump(config or slurm_config()))
    cmd = SNAKEMAKE + ["-d", str(workdir), "--configfile", str(workdir / "config.yaml"), *args,
                       TARGET]
    if limit:
        # SIGKILL 10 s after a SIGTERM that did not stop Snakemake
        cmd = ["timeout", "-k", "10", str(limit)] + cmd
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    log = open(workdir / "snakemake.out", "w")
    # own process group, so a kill reaches Snakemake itself and not only `timeout`
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, text=True,
                            start_new_session=True), log


def _squeue(run_uuid):
    """{jobid: state} of every job of this run still known to slurmctld (MinJobAge=3600)."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "--name", run_uuid, "-o", "%i|%T"],
                         capture_output=True, text=True, timeout=60).stdout
    return dict(line.split("|") for line in out.split())


LIVE = ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED")
PROFILE = ["--profile", str(REPO / "profiles" / "slurm"),
           "--slurm-init-seconds-before-status-checks", "2",  # test speed; profile keeps 10
           "--latency-wait", "5"]


def _run_id(workdir, name="snakemake.out", timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = re.search(r"SLURM run ID: (\S+)", (workdir / name).read_text())
        if m:
            return m.group(1)
        time.sleep(0.2)
    raise AssertionError((workdir / name).read_text()[-3000:])


def _running_method(proc, workdir, run_uuid, timeout=300):
    """Job id of the first run_method job of the run that SLURM reports RUNNING."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        ids = dict(re.findall(r"submitted with SLURM jobid (\d+) \(log: \S+rule_run_method/(\S+?)/",
                              (workdir / "snakemake.out").read_text()))
        states = _squeue(run_uuid)
        running = [j for j in ids if states.get(j) == "RUNNING"]
        if running:
            return running[0], ids[running[0]]
        time.sleep(0.3)
    raise AssertionError((workdir / "snakemake.out").read_text()[-4000:])


def _stop_and_resume(wd):
    """scancel of a running method job; SIGTERM of the rerun's Snakemake while the cancelled
    method runs again, then SIGKILL of the next rerun's; then the resume (threads.run 1: a
    method job of 2 cells on 1 CPU). Each step's state is recorded for the tests below."""
    cfg = dict(slurm_config(), threads={"run": 1})
    out = {"t0": time.perf_counter(), "phases": {}}
    # data and folds built locally (seconds): the scenario is about method jobs
    (wd / "config.yaml").write_text(yaml.safe_dump(cfg))
    base = SNAKEMAKE + ["-d", str(wd), "--configfile", str(wd / "config.yaml")]
    subprocess.run(base + ["--cores", "1", "results/tiny/folds/musk1.parquet"], check=True,
                   capture_output=True, timeout=SLURM_LIMIT_S)
    # A: scancel one running method job; keep-going finishes the rest, nothing resubmitted
    p, f = _start(wd, *PROFILE, limit=SLURM_LIMIT_S, config=cfg)
    try:
        uuid_a = _run_id(wd)
        out["cancelled"], out["cancelled_method"] = _running_method(p, wd, uuid_a)
        subprocess.run(["scancel", out["cancelled"]], check=True, timeout=60)
        out["rc_a"] = p.wait(timeout=SLURM_LIMIT_S + 30)
    finally:
        f.close()
    out["log_a"] = (wd / "snakemake.out").read_text()
    out["phases"]["A"] = round(time.perf_counter() - out["t0"])
    out["states_a"] = _squeue(uuid_a)
    (wd / "a.out").write_text(out["log_a"])
    # T: rerun; SIGTERM once the cancelled method runs again: stops as Ctrl-C does
    p, f = _start(wd, *PROFILE, config=cfg)     # no `timeout`: it would SIGKILL 10 s later
    try:
        uuid_t = _run_id(wd)
        out["terminated"], _ = _running_method(p, wd, uuid_t)
        # held (SIGSTOP) first: a method job of seconds could otherwise complete between the
        # SIGTERM and the cancel, and there would be nothing left to cancel
        subprocess.run(["scontrol", "suspend", out["terminated"]], check=True, timeout=60)
        t = time.perf_counter()
        os.killpg(p.pid, signal.SIGTERM)   # the process group: SIGTERM reaches Snakemake twice
        # until the job has ended (a cancelled job passes through COMPLETING)
        while _squeue(uuid_t).get(out["terminated"]) in LIVE and time.perf_counter() - t < 60:
            time.sleep(0.2)
        out["cancel_wall"] = time.perf_counter() - t
        out["rc_t"] = p.wait(timeout=240)
        out["term_wall"] = time.perf_counter() - t
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        f.close()
    out["log_t"] = (wd / "snakemake.out").read_text()
    out["phases"]["T"] = round(time.perf_counter() - out["t0"])
    out["states_t"] = _squeue(uuid_t)
    out["lock_after_t"] = sorted(p.name for p in (wd / ".snakemake/locks").glob("*"))
    # B: rerun; SIGKILL its Snakemake once the cancelled method runs again
    p, f = _start(wd, *PROFILE, config=cfg)
    try:
        uuid_b = _run_id(wd)
        out["orphan"], _ = _running_method(p, wd, uuid_b)
        os.kill(p.pid, signal.SIGKILL)        # Snakemake alone: its SLURM job stays (an orphan)
        p.wait()
        # held (SIGSTOP) until the next run has looked for it: a job of seconds could otherwise
        # end before that run starts
        subprocess.run(["scontrol", "suspend", out["orphan"]], check=True, timeout=60)
    finally:
        f.close()
    out["log_b"] = (wd / "snakemake.out").read_text()
    out["phases"]["B"] = round(time.perf_counter() - out["t0"])
    out["orphan_state_at_kill"] = _squeue(uuid_b).get(out["orphan"])
    subprocess.run(base + ["--unlock", TARGET], check=True, capture_output=True, timeout=120)
    # C: a rerun while the orphan runs stops before submitting anything
    p, f = _start(wd, *PROFILE, limit=120, config=cfg)
    out["rc_c"] = p.wait(timeout=150)
    f.close()
    out["log_c"] = (wd / "snakemake.out").read_text()
    out["phases"]["C"] = round(time.perf_counter() - out["t0"])
    out["orphan_state_after_c"] = _squeue(uuid_b).get(out["orphan"])
    subprocess.run(["scontrol", "resume", out["orphan"]], check=True, timeout=60)
    # the command the message gives: wait for the orphan, keep what it finished
    env = dict(os.environ, PYTHONPATH=str(REPO / "workflow"))
    res = subprocess.run([sys.executable, "-m", "milbench.experiment.slurm", "orphans", "--wait",
                          "--poll", "1", "-d", str(wd)], capture_output=True, text=True,
                         timeout=SLURM_LIMIT_S, env=env)
    out["wait"] = res.stdout + res.stderr
    out["orphan_state_after_wait"] = _squeue(uuid_b).get(out["orphan"])
    out["phases"]["wait"] = round(time.perf_counter() - out["t0"])
    # D: the resume
    p, f = _start(wd, *PROFILE, limit=SLURM_LIMIT_S, config=cfg)
    out["rc_d"] = p.wait(timeout=SLURM_LIMIT_S + 30)
    f.close()
    out["log_d"] = (wd / "snakemake.out").read_text()
    out["phases"]["D"] = round(time.perf_counter() - out["t0"])
    out["wall"] = time.perf_counter() - out.pop("t0")
    return out


@pytest.fixture(scope="module")
def stop_resume_started(cluster, tmp_path_factory):
    """_stop_and_resume in a thread, from the start of the module on: it mostly waits on SLURM
    polls, as the runs fixture does, so the two overlap."""
    wd = tmp_path_factory.mktemp("stop-resume")
    box = {}

    def target():
        try:
            box["out"] = _stop_and_resume(wd)
        except BaseException as e:  # noqa: BLE001 - reported by the stop_resume fixture
            box["error"] = e
    th = threading.Thread(target=target, daemon=True)
    th.start()
    yield wd, th, box
    th.join(timeout=2 * SLURM_LIMIT_S)
    logs = sorted((wd / ".snakemake" / "log").glob("*.snakemake.log"))
    for run_uuid in {m for p in logs for m in re.findall(r"SLURM run ID: (\S+)", p.read_text())}:
        left = [j for j, st in _squeue(run_uuid).items() if st in LIVE]
        if left:   # whatever a failed scenario left behind
            subprocess.run(["scancel", *left], timeout=60)


@pytest.fixture(scope="module")
def stop_resume(stop_resume_started, runs):
    wd, th, box = stop_resume_started
    th.join(timeout=2 * SLURM_LIMIT_S)
    assert not th.is_alive(), "stop/resume scenario still running"
    if "error" in box:
        raise box["error"]
    print("stop/resume phases (s from start):", box["out"]["phases"],
          f"SIGTERM to job cancelled {box['out']['cancel_wall']:.1f} s, "
          f"to exit {box['out']['term_wall']:.1f} s")
    return dict(box["out"], wd=wd)


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory, stop_resume_started):
    """The same config through SLURM and locally (--cores 2), started side by side: the SLURM
    run mostly waits on status polls, so the local run costs little extra wall time."""
    sl, lo = tmp_path_factory.mktemp("slurm"), tmp_path_factory.mktemp("local")
    t0 = time.perf_counter()
    p_slurm, f_slurm = _start(sl, *PROFILE, limit=SLURM_LIMIT_S)
    p_local, f_local = _start(lo, "--cores", "2", "--quiet=rules")
    run_uuid = None
    try:
        rc_local = p_local.wait(timeout=SLURM_LIMIT_S)
        rc_slurm = p_slurm.wait(timeout=SLURM_LIMIT_S + 30)
    finally:
        for p in (p_local, p_slurm):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        f_slurm.close()
        f_local.close()
        log = (sl / "snakemake.out").read_text()
        m = re.search(r"SLURM run ID: (\S+)", log)
        if m:  # after a kill (or any failure) nothing of this run may stay queued or running
            run_uuid = m.group(1)
            left = [j for j, st in _squeue(run_uuid).items() if st in LIVE]
            if left:
                subprocess.run(["scancel", *left], timeout=60)
    wall = time.perf_counter() - t0
    assert rc_local == 0, (lo / "snakemake.out").read_text()[-4000:]
    assert rc_slurm == 0, f"SLURM run rc={rc_slurm} after {wall:.0f} s:\n{log[-6000:]}"
    return {"slurm": sl, "local": lo, "log": log, "uuid": run_uuid, "wall": wall}


def test_jobs_went_through_slurm(runs):
    log = runs["log"]
    ids = re.findall(r"submitted with SLURM jobid (\d+) \(log: (\S+?)\)", log)
    logs = sorted(os.path.relpath(p, runs["slurm"]).split(os.sep)[2] for _, p in ids)
    # bags_builtin, folds, scores, and one SLURM job per method (MILR, the user's own)
    assert logs == ["rule_bags_builtin", "rule_folds", "rule_run_method", "rule_run_method",
                    "rule_scores"], logs
    states = _squeue(runs["uuid"])
    assert {j for j, _ in ids} <= set(states), (ids, states)
    assert all(states[j] == "COMPLETED" for j, _ in ids), states


def test_method_job_request_follows_its_cells(runs):
    """A method of 2 cells asks for 2 CPUs (one per cell), 1000 + 1000 x 2 MB and 60 min per
    cell run one after another on each CPU (ceil(2 / 2) = 1)."""
    gids = re.findall(r"submitted with SLURM jobid (\d+) \(log: \S+rule_run_method", runs["log"])
    for gid in gids:
        info = subprocess.run(["scontrol", "show", "job", gid], capture_output=True, text=True,
                              timeout=60).stdout
        assert re.search(r"\bNumCPUs=2\b", info), info
        assert re.search(r"TRES=cpu=2,mem=3000M", info), info
        assert "TimeLimit=01:00:00" in info, info


def test_scores_equal_local_run(runs):
    a = pd.read_parquet(runs["slurm"] / TARGET)
    b = pd.read_parquet(runs["local"] / TARGET)
    assert len(a) == len(b) == 4   # 2 methods x 2 folds
    assert set(a.classifier) == {"milr", "pooling:MeanMaxPooling"}
    timing = [c for c in a.columns if "seconds" in c]
    pd.testing.assert_frame_equal(a.drop(columns=timing), b.drop(columns=timing),
                                  check_exact=True)
    assert (a.fit_seconds > 0).all()
    assert a.accuracy.notna().all() and a.auroc.notna().all()


def _scores(workdir):
    df = pd.read_parquet(workdir / TARGET)
    return df.drop(columns=[c for c in df.columns if "seconds" in c])


def test_scancel_is_not_resubmitted(stop_resume):
    """A deliberate scancel of a method job stays cancelled (the profile has no retries): the
    run finishes the other jobs and exits 1, with no second submission of that method."""
    r = stop_resume
    assert r["states_a"][r["cancelled"]] == "CANCELLED", r["states_a"]
    assert r["rc_a"] == 1, r["log_a"][-3000:]
    subs = re.findall(r"submitted with SLURM jobid \d+ \(log: \S+rule_run_method/(\S+?)/",
                      r["log_a"])
    assert sorted(subs) == sorted(set(subs)) and len(subs) == 2, subs
    assert not re.search(r"submitted with SLURM jobid \d+ \(log: \S+rule_scores", r["log_a"])


def test_sigterm_cancels_the_runs_jobs(stop_resume):
    """SIGTERM stops the run as Ctrl-C does: its SLURM jobs cancelled at once, then Snakemake
    exits 1 at its next status check, its lock removed (Snakemake alone would wait for every
    running job to finish)."""
    r = stop_resume
    assert r["rc_t"] == 1, r["log_t"][-3000:]
    assert "SIGTERM: stopping as on Ctrl-C" in r["log_t"], r["log_t"][-3000:]
    assert r["states_t"][r["terminated"]] == "CANCELLED", r["states_t"]
    assert not any(st in LIVE for st in r["states_t"].values()), r["states_t"]
    assert r["lock_after_t"] == []


def test_killed_run_leaves_no_duplicate_work(stop_resume, runs):
    """SIGKILL of Snakemake leaves its running job behind; the next run names it and stops
    before submitting anything; `orphans --wait` waits for it; the resume keeps its result (no
    method job submitted again) and the scores equal the local run's."""
    r = stop_resume
    assert r["orphan_state_at_kill"] in ("RUNNING", "SUSPENDED"), r["orphan_state_at_kill"]
    assert r["rc_c"] == 1, r["log_c"][-3000:]
    assert "still queued or running" in r["log_c"] and r["orphan"] in r["log_c"], r["log_c"][-3000:]
    assert "python -m milbench.experiment.slurm orphans --wait" in r["log_c"]
    assert "submitted with SLURM jobid" not in r["log_c"]
    assert r["orphan_state_after_c"] == "SUSPENDED"          # C cancelled nothing
    assert r["orphan"] in r["wait"] and r["orphan_state_after_wait"] == "COMPLETED", r["wait"]
    assert r["rc_d"] == 0, r["log_d"][-4000:]
    assert "rule_run_method" not in r["log_d"], r["log_d"][-4000:]   # the orphan's result kept
    pd.testing.assert_frame_equal(_scores(r["wd"]), _scores(runs["local"]), check_exact=True)


def test_each_attempt_keeps_its_log(stop_resume):
    """Both attempts of the cancelled method keep their logs: each SLURM job its own SLURM log;
    the rule log is appended to, under a header naming the attempt's SLURM job (the cancel
    came before the first attempt's script started, so only the second wrote there)."""
    r = stop_resume
    slurm_logs = r["wd"] / ".snakemake/slurm_logs/rule_run_method" / r["cancelled_method"]
    assert {p.stem for p in slurm_logs.glob("*.log")} == {r["cancelled"], r["terminated"],
                                                          r["orphan"]}
    classifier = r["cancelled_method"].split("_", 3)[3]
    log = (r["wd"] / f"results/logs/tiny/runs/musk1/none/{classifier}.log").read_text()
    heads = re.findall(r"==== attempt started .*, SLURM job (\d+) ====", log)
    assert heads[-1] == r["orphan"] and set(heads) <= {r["cancelled"], r["terminated"],
                                                       r["orphan"]}, log
    assert "cells: accuracy" in log.split("==== attempt")[-1], log


@pytest.fixture()
def short_partition(cluster):
    """A second partition on the node with small limits: 1 CPU, 30 minutes, 2500 MB."""
    subprocess.run(["scontrol", "create", "PartitionName=short", "Nodes=localhost", "MaxTime=30",
                    "MaxCPUsPerNode=1", "MaxMemPerNode=2500", "State=UP"], check=True, timeout=60)
    yield "short"
    subprocess.run(["scontrol", "delete", "PartitionName=short"], timeout=60)


def test_preflight_stops_over_limit_requests(short_partition, tmp_path):
    """`snakemake -n` with the SLURM profile on a partition whose MaxTime is below a method
    job's runtime stops at once, naming the job, its request, the limit and the config key;
    threads above the partition's CPUs are cut (and said so). A static rule's request above
    the node's memory stops a real run before anything is submitted (the onstart check)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pa, fa = _start(a, "-n", *PROFILE, "--default-resources", f"slurm_partition={short_partition}",
                    "mem_mb=1000", "runtime=30", "--", limit=120)
    pb, fb = _start(b, *PROFILE, "--set-resources", "scores:mem_mb=99000000", "--", limit=120)
    rc_a, rc_b = pa.wait(timeout=150), pb.wait(timeout=150)
    fa.close()
    fb.close()
    la, lb = (a / "snakemake.out").read_text(), (b / "snakemake.out").read_text()
    assert rc_a == 1, la[-3000:]
    assert ("method jobs run on 1 threads instead of `threads.run` 8" in la), la[-3000:]
    assert re.search(r"job run_method \(experiment tiny: 2 cells a job\) asks for runtime 120 min, "
                     r"more than partition 'short' allows \(30 min, its MaxTime\); change "
                     r"`experiments.tiny.runtime` \(minutes per cell, now 60\)", la), la[-3000:]
    assert rc_b == 1, lb[-3000:]
    assert re.search(r"job scores\[experiment=tiny\] asks for mem_mb 99000000 MB, more than "
                     r"partition 'debug' allows \(\d+ MB, its RealMemory of its largest node\); "
                     r"change `set-resources: scores: mem_mb`", lb), lb[-3000:]
    assert "submitted with SLURM jobid" not in lb
