# Input functions and config expansion shared by every rule (Snakemake catalog layout).
import functools
import re
import hashlib
import sys
from importlib.util import find_spec
from pathlib import Path

# The library is importable without installation (scripts do the same via _paths.py).
sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from milbench.folds import fold_keys
from milbench.pipeline import expand_methods
from milbench.registry import CLASSIFIERS, SELECTORS
from milbench.sources import load_manifest

MANIFEST = load_manifest()
BUILTIN = sorted(k for k, v in MANIFEST.items() if v["format"] != "archive")
USER = sorted(config.get("datasets", {}))
RAW_FILES = {f["path"]: f for v in MANIFEST.values() for f in v["files"]}
LIB = Path(workflow.basedir) / "workflow" / "milbench"
EXPERIMENTS = config["experiments"]
METHODS = {
    exp: {(m["selector_id"], m["classifier_id"]): m for m in expand_methods(cfg)}
    for exp, cfg in EXPERIMENTS.items()
}

clash = set(BUILTIN) & set(USER)
if clash:
    raise ValueError(f"config datasets: {sorted(clash)} clash with built-in dataset names")
for exp, cfg in EXPERIMENTS.items():
    for m in METHODS[exp].values():
        for kind, table in (("selector", SELECTORS), ("classifier", CLASSIFIERS)):
            if m[kind]["name"] not in table:
                raise ValueError(f"experiment {exp}: unknown {kind} {m[kind]['name']!r}; "
                                 f"known: {sorted(table)}")


def builtin_raw(wildcards):
    """Raw files of a built-in dataset (none when the offline copy is used)."""
    if config.get("offline", False):
        return []
    return [f"results/raw/{f['path']}" for f in MANIFEST[wildcards.dataset]["files"]]


def bags_of(dataset):
    return [f"results/bags/{dataset}/{f}" for f in ("instances.parquet", "bags.parquet", "meta.json")]


def run_files(exp):
    cfg = EXPERIMENTS[exp]
    keys = fold_keys(cfg["protocol"])
    return [
        f"results/{exp}/runs/{ds}/{s}/{c}/r{r}_f{f}.parquet"
        for ds in cfg["datasets"]
        for (s, c) in METHODS[exp]
        for (r, f) in keys
    ]


def experiment_runs(wildcards):
    return run_files(wildcards.experiment)


def run_method(wildcards):
    return METHODS[wildcards.experiment][(wildcards.selector, wildcards.classifier)]


CORE_MODULES = ("bags.py", "base.py", "pipeline.py", "preprocessing.py", "folds.py", "store.py")


@functools.cache
def _module_hash(*modules):
    """Short hash over the source of library modules (given as file paths or module names)."""
    h = hashlib.sha1()
    for m in modules:
        path = Path(m) if m.endswith(".py") else Path(find_spec(m).origin)
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def code_version(wildcards):
    """Rerun trigger: hash of the library modules this run executes (core + its two methods),
    so editing one method's module reruns that method's jobs and nothing else."""
    m = run_method(wildcards)
    return _module_hash(*(str(LIB / c) for c in CORE_MODULES),
                        SELECTORS[m["selector"]["name"]].split(":")[0],
                        CLASSIFIERS[m["classifier"]["name"]].split(":")[0])


def all_targets():
    out = []
    for exp in EXPERIMENTS:
        out += [f"results/{exp}/scores.parquet", f"results/{exp}/summary.csv",
                f"results/{exp}/stats", f"results/{exp}/figures",
                f"results/{exp}/reproduction.csv"]
    return out
