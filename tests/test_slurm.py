"""A real SLURM run of the pipeline (issue #10): one-node cluster on localhost, Snakemake's SLURM
executor through profiles/slurm, scores identical to a local run.

Needs root and the Debian packages slurm-wlm + munge (.ci/slurm-setup.sh installs them); skips
with the reason otherwise. tests/slurm/setup-slurm.sh starts munged, slurmctld and slurmd (no
slurmdbd: job states come from squeue), tests/slurm/teardown-slurm.sh stops them by PID.
~80 s on an idle 2-core machine (~3.5 min on a loaded one): mostly the plugin's status polling
and two Snakemake starts per SLURM job.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
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


def _start(workdir, *args, limit=None):
    (workdir / "config.yaml").write_text(yaml.safe_dump(slurm_config()))
    cmd = SNAKEMAKE + ["-d", str(workdir), "--configfile", str(workdir / "config.yaml"), *args,
                       TARGET]
    if limit:
        cmd = ["timeout", "-k", "10", str(limit)] + cmd  # Snakemake ignores SIGTERM here
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


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory):
    """The same config through SLURM and locally (--cores 2), started side by side: the SLURM
    run mostly waits on status polls, so the local run costs little extra wall time."""
    sl, lo = tmp_path_factory.mktemp("slurm"), tmp_path_factory.mktemp("local")
    t0 = time.perf_counter()
    p_slurm, f_slurm = _start(
        sl, "--profile", str(REPO / "profiles" / "slurm"),
        "--slurm-init-seconds-before-status-checks", "2",  # test speed; profile keeps 10
        "--latency-wait", "5", limit=SLURM_LIMIT_S)
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
            left = [j for j, st in _squeue(run_uuid).items()
                    if st in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED")]
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
