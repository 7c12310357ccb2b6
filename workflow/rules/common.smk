# Input functions and config expansion shared by every rule (Snakemake catalog layout).
# Every config default comes from workflow/schemas/config.schema.yaml (filled by the
# Snakefile's validate), so config keys are read here without fallbacks.
import hashlib
import re
import sys
from pathlib import Path

# The library is importable without installation (scripts do the same via _paths.py).
sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from milbench.data.folds import check_protocol, fold_keys
from milbench.data.sources import load_manifest
from milbench.experiment.codehash import method_code, selector_code
from milbench.experiment.config import (
    chain_settings,
    experiment_settings,
    job_mem_mb,
    job_runtime,
    job_threads,
    method_settings,
    missing_dataset_files,
)
from milbench.experiment.grid import check_experiment, check_method, expand_methods, method_labels
from milbench.experiment.slurm import (
    check_before_submit,
    method_keys,
    preflight,
    query_partition,
    stop_on_sigterm,
)
from milbench.experiment.stages import shared_stages
from milbench.registry import add_code_dirs

add_code_dirs(config["code"])   # users' own methods, named 'module:Class'
MANIFEST = load_manifest()
BUILTIN = sorted(k for k, v in MANIFEST.items() if v["format"] != "archive")
USER = sorted(config["datasets"])
RAW_FILES = {f["path"]: f for v in MANIFEST.values() for f in v["files"]}
EXPERIMENTS = config["experiments"]
# configuration mistakes of every method fail here, at parse time (`snakemake -n`)
METHODS = {}
for exp, cfg in EXPERIMENTS.items():
    try:
        METHODS[exp] = {(m["selector_id"], m["classifier_id"]): m for m in expand_methods(cfg)}
        check_experiment(cfg)
        for m in METHODS[exp].values():
            check_method(m["selector"], m["classifier"])
    except ValueError as e:
        raise ValueError(f"experiment {exp}: {e}") from None

METHOD_STAGE, STAGE_SPECS = {}, {}
for _exp in EXPERIMENTS:
    METHOD_STAGE[_exp], STAGE_SPECS[_exp] = shared_stages(METHODS[_exp])

missing = missing_dataset_files(config)
if missing:
    raise ValueError("\n".join(missing))

clash = set(BUILTIN) & set(USER)
if clash:
    raise ValueError(f"config datasets: {sorted(clash)} clash with built-in dataset names")


def builtin_raw(wildcards):
    """Raw files of a built-in dataset (none when the offline copy is used)."""
    if config["offline"]:
        return []
    return [f"results/raw/{f['path']}" for f in MANIFEST[wildcards.dataset]["files"]]


def store_dir(dataset):
    """A data set's Parquet store. A chain-built data set's path names its source
    (`results/bags/corel-cats@synthetic`, `...@src-<hash of the source path>`), so the embedded
    default's synthetic bags never replace bags built from real data, nor the reverse."""
    tag = CHAIN_TAGS.get(dataset)
    return f"results/bags/{dataset}@{tag}" if tag else f"results/bags/{dataset}"


def bags_of(dataset):
    return [f"{store_dir(dataset)}/{f}" for f in ("instances.parquet", "bags.parquet", "meta.json")]


def bag_store(wildcards):
    """A data set's Parquet store as one input file: its meta.json stands for the folder (the
    store is written whole and swapped in at once), a third of the DAG lookups of bags_of."""
    return f"{store_dir(wildcards.dataset)}/meta.json"


def run_files(exp):
    """One file per method (dataset × selector × classifier), holding all its cells' rows."""
    cfg = EXPERIMENTS[exp]
    return [f"results/{exp}/runs/{ds}/{s}/{c}.parquet"
            for ds in cfg["datasets"] for (s, c) in METHODS[exp]]


def experiment_runs(wildcards):
    return run_files(wildcards.experiment)


def coverage_bags(wildcards):
    """Bag files of every data set of an experiment (the coverage rule reads them all)."""
    return [f for ds in EXPERIMENTS[wildcards.experiment]["datasets"] for f in bags_of(ds)]


def run_method(wildcards):
    return METHODS[wildcards.experiment][(wildcards.selector, wildcards.classifier)]


def method_stage(wildcards):
    """The stored fold stage a method reads (its selector's shared state), if any."""
    sid = METHOD_STAGE[wildcards.experiment].get((wildcards.selector, wildcards.classifier))
    return [] if sid is None else [f"results/{wildcards.experiment}/stages/{wildcards.dataset}/{sid}.parquet"]


def stage_selector(wildcards):
    return STAGE_SPECS[wildcards.experiment][wildcards.stage]


def run_settings(wildcards):
    return method_settings(EXPERIMENTS[wildcards.experiment], run_method(wildcards))


def stage_settings(wildcards):
    return experiment_settings(EXPERIMENTS[wildcards.experiment], tuned=False)


THREADS = config["threads"]


def n_cells(wildcards):
    return len(fold_keys(EXPERIMENTS[wildcards.experiment]["protocol"]))


def method_threads(wildcards):
    """A method job's threads: one per cell, at most ``threads.run`` (cut to the SLURM
    partition's CPUs per node, see below); Snakemake lowers it further to --cores
    (milbench.experiment.config.job_threads; `python -m milbench.experiment.plan` prints the
    same)."""
    return job_threads(n_cells(wildcards), RUN_THREADS)


def method_runtime(wildcards, threads):
    """SLURM time limit in minutes: the experiment's ``runtime`` (minutes per cell) times the
    cells each thread runs one after another (milbench.experiment.config.job_runtime)."""
    return job_runtime(EXPERIMENTS[wildcards.experiment]["runtime"], n_cells(wildcards), threads)


# ---- SLURM preflight (milbench.experiment.slurm) ------------------------------------------
# A run that names a partition (default-resources `slurm_partition`, as profiles/slurm does) has
# its method jobs' requests checked against that partition here, at parse time, so
# `snakemake -n --profile profiles/slurm` fails before anything is queued; threads above the
# partition's CPUs per node are cut to them (scores do not depend on threads).  Local runs and the
# jobs' own Snakemake on the nodes skip this.  The onstart handler below checks every job of the
# DAG (static rules, --set-resources) once the SLURM executor runs.
RUN_THREADS = THREADS["run"]
_default_res = workflow.resource_settings.default_resources
SLURM_PARTITION = (str(_default_res["slurm_partition"].raw).strip("'\"")
                   if workflow.is_main_process and _default_res is not None
                   and "slurm_partition" in _default_res else None)
if SLURM_PARTITION:
    SLURM_LIMITS, _skipped = query_partition(SLURM_PARTITION)
    if _skipped:
        print(_skipped, file=sys.stderr)
    else:
        RUN_THREADS, _notes, _problems = preflight(EXPERIMENTS, THREADS["run"], SLURM_LIMITS)
        for _note in _notes:
            print(_note, file=sys.stderr)
        if _problems:
            raise ValueError("\n".join(_problems))


def job_keys(job):
    """Config keys behind a method / fold-stage job's request (preflight messages)."""
    exp = job.wildcards.experiment
    return method_keys(exp, EXPERIMENTS[exp]["runtime"], THREADS["run"])


def slurm_onstart(logfile):
    """Before the SLURM executor submits anything: orphans of a killed earlier run and every
    DAG job's request against its partition (milbench.experiment.slurm.check_before_submit);
    SIGTERM then stops the run as Ctrl-C does (its jobs cancelled)."""
    from snakemake.exceptions import WorkflowError

    problem = check_before_submit(
        workflow.dag.needrun_jobs(), logfile if isinstance(logfile, (list, tuple)) else [logfile],
        SLURM_PARTITION, {"run_method", "fold_stage"}, job_keys)
    if problem:
        raise WorkflowError(problem)
    stop_on_sigterm()


onstart:
    if workflow.executor_plugin is not None and workflow.executor_plugin.name == "slurm":
        slurm_onstart(log)


def code_version(wildcards):
    """Rerun trigger: hash of every project module the method job imports (the import closure
    of the core modules and of the registry entries its method names), so editing a method's
    module, or a helper it imports, reruns that method's jobs and nothing else."""
    return method_code(run_method(wildcards))


def stage_code(wildcards):
    """Rerun trigger of a fold stage: the import closure of the core and its selector."""
    return selector_code(stage_selector(wildcards))


def all_targets():
    """The default target: every experiment's outputs, and its method files by name, so a
    deleted method file is remade by a plain `snakemake` (Snakemake remakes a missing file
    only when it is a target or the job reading it runs anyway), with the scores over it."""
    out = []
    for exp in EXPERIMENTS:
        out += run_files(exp)
        out += [f"results/{exp}/scores.parquet", f"results/{exp}/summary.csv",
                f"results/{exp}/stats", f"results/{exp}/figures",
                f"results/{exp}/reproduction.csv"]
        if EXPERIMENTS[exp]["coverage"]:
            out.append(f"results/{exp}/coverage")
    return out


# ---- Corel image chain (rules in images.smk) -------------------------------

COREL = chain_settings(config, "corel")
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip", ".tar.bz2", ".tar.xz")


def chain_tag(source):
    """`synthetic`, or `src-` and a hash of the source path: part of a chain's output paths."""
    src = str(source)
    return "synthetic" if src == "synthetic" else "src-" + hashlib.sha1(src.encode()).hexdigest()[:8]


COREL_TAG = chain_tag(COREL["source"])
COREL_CHAIN = f"results/chains/corel-cats@{COREL_TAG}"


def corel_source_dir():
    """Folder the image table is read from (generated, extracted or the user's own)."""
    src = str(COREL["source"])
    if src == "synthetic":
        return "results/raw/synthetic-scenes"
    if src.lower().endswith(_ARCHIVE_SUFFIXES):
        return "results/raw/corel-images"
    return src


def corel_source_file():
    src = str(COREL["source"])
    return src if src.lower().endswith(_ARCHIVE_SUFFIXES) else ""


# ---- Reddit chain (rules in reddit.smk) ------------------------------------

REDDIT = chain_settings(config, "reddit")
REDDIT_TAG = chain_tag(REDDIT["source"])
REDDIT_CHAIN = f"results/chains/reddit@{REDDIT_TAG}"
REDDIT_SYNTHETIC_CSV = "results/raw/synthetic-reddit/synthetic-redditSubmissions.csv"


def reddit_csv():
    return REDDIT_SYNTHETIC_CSV if REDDIT["source"] == "synthetic" else str(REDDIT["source"])


# ---- graph chains: WebKB and protein (rules in graphs.smk) --------------------
WEBKB = chain_settings(config, "webkb")
WEBKB_TAG = chain_tag(WEBKB["source"])
WEBKB_CHAIN = f"results/chains/webkb@{WEBKB_TAG}"
WEBKB_TASKS = ("course", "faculty", "student", "project", "department", "staff", "other")
CHAIN_TAGS = {"corel-cats": COREL_TAG, "reddit": REDDIT_TAG,
              **{f"webkb-{t}": WEBKB_TAG for t in WEBKB_TASKS}}

PROTEIN_GRAPH = chain_settings(config, "protein_graph")

# Every data set a rule can build: an experiment naming another fails at parse time (`-n`).
KNOWN_DATASETS = BUILTIN + USER + list(CHAIN_TAGS) + ["protein-graph"]
for exp, cfg in EXPERIMENTS.items():
    unknown = [d for d in cfg["datasets"] if d not in KNOWN_DATASETS]
    if unknown:
        raise ValueError(f"experiment {exp}: unknown data set(s) {unknown}; known: "
                         f"{sorted(KNOWN_DATASETS)} (or declare it under `datasets:`)")
    for ds in cfg["datasets"]:                     # built-ins: class counts known in advance
        expect = MANIFEST.get(ds, {}).get("expect", {})
        if "n_positive" in expect:
            try:
                check_protocol(cfg["protocol"], [expect["n_bags"] - expect["n_positive"],
                                                 expect["n_positive"]])
            except ValueError as e:
                raise ValueError(f"experiment {exp}: protocol on {ds}: {e}") from None


def webkb_site_dir():
    src = str(WEBKB["source"])
    if src == "synthetic":
        return "results/raw/synthetic-webkb"
    if src.lower().endswith(_ARCHIVE_SUFFIXES):
        return "results/raw/webkb-site"
    return src


def webkb_raw_files():
    src = str(WEBKB["source"])
    return [src] if src.lower().endswith(_ARCHIVE_SUFFIXES) else []
