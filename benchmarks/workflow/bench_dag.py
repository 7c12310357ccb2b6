"""Snakemake DAG: `snakemake -n` CPU s per job, paper configs and a ~10k-job one; local vs SLURM.

Many small jobs: the dry-run cost of every paper config and of a synthetic ~10,000-job config
(target < 60 s), where a big dry run spends its time, and one trivial job locally vs SLURM.

    python -m benchmarks.workflow.bench_dag                    # all four parts
    python -m benchmarks.workflow.bench_dag --part configs     # dry run of every config/paper/*.yaml
    python -m benchmarks.workflow.bench_dag --part configs --configs default midr --repeat 3
    python -m benchmarks.workflow.bench_dag --part size [--jobs 10000]     # dry run, synthetic config
    python -m benchmarks.workflow.bench_dag --part profile [--jobs 10000]  # cProfile of that dry run
    python -m benchmarks.workflow.bench_dag --part slurm       # trivial jobs, local vs SLURM

configs: CPU seconds, for each config/paper/*.yaml (and the embedded default,
config/config.yaml, when `--configs` names `default`), of `snakemake -l` (parse only: Snakefile +
common.smk's config expansion, no DAG) and `snakemake -n --quiet rules` (parse + DAG + dry-run
schedule) in an empty temp dir, so every job is planned, each a new process (a cold start); the
least of `--repeat` runs; the job count comes from the dry run's table.
size: wall seconds of `snakemake -n` on a synthetic config (offline datasets, a method grid sized
to reach --jobs run_method jobs) written into a temp dir, against the 60 s target.
profile: `python -m cProfile` of the same dry run, internal time grouped by where the code
lives: our rule files (common.smk input functions, params lambdas), our library, Snakemake,
the rest.
slurm: needs a running cluster (tests/slurm/setup-slurm.sh); else prints that it was skipped.
Timings on a shared, loaded machine are noisy: compare within one run.
"""
from benchmarks import REPO
import argparse
import os
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

SMK = [sys.executable, "-m", "snakemake"]
ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, cwd=None, timeout=1800):
    t = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=ENV, timeout=timeout)
    return time.perf_counter() - t, res


def cpu_timed(cmd, cwd=None, timeout=1800):
    """(CPU seconds of the command and its children, its result): steadier than wall time."""
    c = children_cpu()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=ENV, timeout=timeout)
    return children_cpu() - c, res


def job_table(text):
    """{rule: count} from Snakemake's job-stats table."""
    table = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", text, re.M)}
    return table


def dry_run(configfile, workdir, repeat=1):
    base = SMK + ["-s", str(REPO / "Snakefile"), "-d", str(workdir), "--configfile",
                  str(configfile)]
    t_parse = min(cpu_timed(base + ["-l"])[0] for _ in range(repeat))
    t_dry, res_n = min((cpu_timed(base + ["-n", "--quiet", "rules"]) for _ in range(repeat)),
                       key=lambda r: r[0])
    out = res_n.stdout + res_n.stderr
    if res_n.returncode:
        err = [ln for ln in out.splitlines() if ln.strip()][-3:]
        return t_parse, t_dry, None, " | ".join(err)[-300:]
    return t_parse, t_dry, job_table(out), None


def part_configs(only=None, repeat=1):
    print("== DAG size and dry-run time per paper config (empty workdir: everything planned) ==")
    configs = sorted((REPO / "config" / "paper").glob("*.yaml"))
    if only:
        configs = [c for c in configs if c.stem in only]
        if "default" in only:
            configs.insert(0, REPO / "config" / "config.yaml")
    print(f"CPU seconds (user + sys; least of {repeat}) of `snakemake -l` (parse) and "
          f"`snakemake -n` (parse + DAG); load average {os.getloadavg()[0]:.1f}")
    print(f"{'config':<14} {'jobs':>7} {'methods':>8} {'parse s':>8} {'dry-run s':>9} "
          f"{'DAG+sched s':>11} {'ms/job':>7}  rules")
    for cfg in configs:
        name = "default" if cfg.parent.name == "config" else cfg.stem
        with tempfile.TemporaryDirectory() as tmp:
            t_parse, t_dry, table, err = dry_run(cfg, tmp, repeat)
        if table is None:
            print(f"{name:<14} {'-':>7} {'-':>8} {t_parse:8.2f} {t_dry:9.2f} {'-':>11} "
                  f"{'-':>7}  FAILED: {err}")
            continue
        total = table.pop("total", sum(table.values()))
        print(f"{name:<14} {total:7d} {table.get('run_method', 0):8d} {t_parse:8.2f} "
              f"{t_dry:9.2f} {t_dry - t_parse:11.2f} {1e3 * t_dry / max(total, 1):7.2f}  "
              + ", ".join(f"{k}={v}" for k, v in sorted(table.items()) if k != "run_method"))


def classify(filename):
    f = filename.replace("\\", "/")
    if f.endswith((".smk", "Snakefile")) and str(REPO) in f:
        return "ours: " + Path(f).name
    if "/workflow/milbench/" in f:
        return "ours: milbench/" + f.split("/workflow/milbench/")[1]
    if "/site-packages/snakemake" in f:
        return "snakemake"
    if "/site-packages/" in f:
        return "other: " + f.split("/site-packages/")[1].split("/")[0]
    if f.startswith("<") or f == "~":
        return "builtins/C"
    return "other: stdlib"


def config_for(n_jobs):
    """A config of ~n_jobs run_method jobs: one per dataset × method (each runs its 10 × 5 cells),
    so n_jobs / 2 PCA settings × MILR on 2 datasets."""
    n_methods = max(1, n_jobs // 2)
    dims = [round(0.05 + 0.9 * i / n_methods, 6) for i in range(n_methods)]
    return {"offline": True, "experiments": {"big": {
        "datasets": ["musk1", "elephant"],
        "protocol": {"kind": "kfold", "folds": 5, "repeats": 10, "seed": 0},
        "selectors": [{"name": "pca", "dims": dims}],
        "classifiers": [{"name": "milr"}]}}}


def part_size(n_jobs):
    print(f"\n== `snakemake -n` on a synthetic {n_jobs}-job config ==")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp, "config.yaml")
        cfg.write_text(yaml.safe_dump(config_for(n_jobs)))
        dt, res = timed(SMK + ["-s", str(REPO / "Snakefile"), "-d", tmp, "--configfile", str(cfg),
                               "-n", "--quiet", "rules"])
    if res.returncode:
        sys.exit(res.stderr[-3000:])
    total = job_table(res.stdout + res.stderr).get("total", "?")
    print(f"snakemake -n: {total} jobs planned in {dt:.1f} s wall "
          f"(target < 60 s; ratio to target {dt / 60:.2f})")


def part_profile(n_jobs, save=None):
    print(f"\n== cProfile of `snakemake -n` on a synthetic {n_jobs}-job config ==")
    with tempfile.TemporaryDirectory() as tmp:
        cfg, prof = Path(tmp, "config.yaml"), Path(tmp, "dry.prof")
        cfg.write_text(yaml.safe_dump(config_for(n_jobs)))
        dt, res = timed([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "snakemake",
                         "-s", str(REPO / "Snakefile"), "-d", tmp, "--configfile", str(cfg),
                         "-n", "--quiet", "rules"])
        if res.returncode:
            sys.exit(res.stderr[-3000:])
        table = job_table(res.stdout + res.stderr)
        stats = pstats.Stats(str(prof))
        if save:
            shutil.copy(prof, save)
    total_tt = sum(v[2] for v in stats.stats.values())
    print(f"{table.get('total', '?')} jobs planned in {dt:.1f} s wall under the profiler "
          f"(profiled internal time {total_tt:.1f} s)")
    groups, funcs = {}, []
    for (fname, line, func), (cc, nc, tt, ct, _callers) in stats.stats.items():
        g = classify(fname)
        groups[g] = groups.get(g, 0.0) + tt
        funcs.append((tt, ct, nc, g, f"{Path(fname).name}:{line}:{func}"))
    print("internal time by origin:")
    for g, tt in sorted(groups.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {g:<40} {tt:7.2f} s  {100 * tt / total_tt:5.1f} %")
    print("our functions (cumulative time incl. what they call):")
    ours = sorted((f for f in funcs if f[3].startswith("ours")), key=lambda f: -f[1])
    for tt, ct, nc, g, name in ours[:12]:
        print(f"  {name:<60} calls {nc:8d}  cum {ct:6.2f} s  own {tt:6.2f} s")
    print("top functions overall by internal time:")
    for tt, ct, nc, g, name in sorted(funcs, key=lambda f: -f[0])[:15]:
        print(f"  {name:<60} calls {nc:8d}  own {tt:6.2f} s  [{g}]")
    print("Snakemake phases (cumulative):")
    phases = ("workflow.py", "dag.py", "jobs.py", "rules.py", "persistence", "api.py")
    snk = sorted((f for f in funcs if f[3] == "snakemake" and f[4].startswith(phases)),
                 key=lambda f: -f[1])
    for tt, ct, nc, g, name in snk[:15]:
        print(f"  {name:<60} calls {nc:8d}  cum {ct:6.2f} s")


TRIVIAL = """
rule all:
    input: expand("out/{i}.txt", i=range(config["n_jobs"]))
rule trivial:
    output: "out/{i}.txt"
    resources: mem_mb=200, runtime=5
    shell: "echo {wildcards.i} > {output}"
"""


def cluster_up():
    if shutil.which("sinfo") is None:
        return False
    try:
        res = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True,
                             timeout=20)
    except subprocess.TimeoutExpired:
        return False
    return res.returncode == 0 and any(s.rstrip("*") in ("idle", "mix", "alloc")
                                       for s in res.stdout.split())


def trivial_run(n, *args, timeout=600):
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "Snakefile").write_text(TRIVIAL)
        cmd = ["timeout", "-k", "10", str(timeout)] + SMK + [
            "-s", str(Path(tmp, "Snakefile")), "-d", tmp, "--config", f"n_jobs={n}", *args]
        dt, res = timed(cmd, timeout=timeout + 30)
        log = res.stdout + res.stderr
        m = re.search(r"SLURM run ID: (\S+)", log)
        if m and res.returncode:
            subprocess.run(["scancel", "--name", m.group(1)], timeout=60)
        if res.returncode:
            return None, log[-1500:]
        return dt, len(re.findall(r"submitted with SLURM jobid", log))


def part_slurm():
    print("\n== trivial jobs: wall time locally vs through SLURM ==")
    if not cluster_up():
        print("skipped: no SLURM cluster up (run tests/slurm/setup-slurm.sh as root first)")
        return
    slurm = ["--executor", "slurm", "--jobs", "8", "--default-resources", "slurm_partition=debug",
             "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2",
             "--latency-wait", "5"]
    rows = [("local --cores 2, 1 job", 1, ["--cores", "2"]),
            ("local --cores 2, 8 jobs", 8, ["--cores", "2"]),
            ("SLURM, 1 job", 1, slurm),
            ("SLURM, 8 jobs (8 submissions)", 8, slurm),
            ("SLURM, 8 jobs in 1 group job", 8, slurm + ["--groups", "trivial=g",
                                                         "--group-components", "g=8",
                                                         "--cores", "1"])]
    base = None
    print(f"{'setup':<34} {'wall s':>7} {'s/job':>7} {'sbatch':>6} {'vs local 8':>10}")
    for label, n, args in rows:
        dt, info = trivial_run(n, *args)
        if dt is None:
            print(f"{label:<34} FAILED: {info}")
            continue
        if label.startswith("local") and n == 8:
            base = dt
        ratio = f"{dt / base:10.1f}" if base else f"{'-':>10}"
        print(f"{label:<34} {dt:7.1f} {dt / n:7.2f} {info:6d} {ratio}")
    print("(SLURM per-job overhead = two `python -m snakemake` starts in the job -- batch script "
          "and srun step -- plus submission and the plugin's status-poll interval, which grows "
          "by 10 s after every poll that finds nothing finished)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["all", "configs", "size", "profile", "slurm"], default="all")
    ap.add_argument("--jobs", type=int, default=10_000, help="size of the synthetic dry run")
    ap.add_argument("--configs", nargs="*", help="config stems (default: all config/paper/*.yaml;"
                    " `default`: the embedded config/config.yaml)")
    ap.add_argument("--repeat", type=int, default=1, help="configs: the least CPU of this many runs")
    ap.add_argument("--save-prof", help="keep the profile (pstats file) here")
    a = ap.parse_args()
    if a.part in ("all", "configs"):
        part_configs(a.configs, a.repeat)
    if a.part in ("all", "size"):
        part_size(a.jobs)
    if a.part in ("all", "profile"):
        part_profile(a.jobs, a.save_prof)
    if a.part in ("all", "slurm"):
        part_slurm()


if __name__ == "__main__":
    main()
