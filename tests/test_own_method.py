"""A researcher's own method, named 'module:Class' from a `code:` directory (the worked example
in examples/own_method): it passes the MIL contract, runs through snakemake beside registry
methods into scores, statistics and figures, and editing its module reruns exactly its jobs."""
import re
import shutil

import pandas as pd
import pytest
import yaml
from test_workflow_e2e import smk

from milbench.registry import add_code_dirs, resolve
from milbench.testing import check_mil_estimator

from conftest import REPO

EXAMPLE = REPO / "examples" / "own_method"
NAME = "pooling:MeanMaxPooling"


def test_example_method_passes_the_contract():
    add_code_dirs([str(EXAMPLE)])
    check_mil_estimator(resolve("classifier", NAME)())


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The example config at quick-start size: 2 folds, smaller grids, its module copied."""
    wd = tmp_path_factory.mktemp("own-method")
    shutil.copytree(EXAMPLE, wd / "code")
    cfg = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    cfg["code"] = ["code"]                       # relative to the working directory
    exp = cfg["experiments"]["own-method"]
    exp["protocol"]["folds"] = 2
    exp["inner_folds"] = 2
    for c in exp["classifiers"]:
        if "tune" in c:
            c["tune"] = {k: v[:2] for k, v in c["tune"].items()}
    (wd / "config.yaml").write_text(yaml.safe_dump(cfg))
    smk(wd, "--cores", "2", "-q")
    return wd


def test_own_method_in_scores_stats_and_figures(example_run):
    scores = pd.read_parquet(example_run / "results/own-method/scores.parquet")
    ours = scores[scores["classifier"] == NAME]
    assert len(ours) == 2 * 2 and ours["accuracy"].between(0.5, 1).all()   # 2 data sets × 2 folds
    assert scores["classifier"].nunique() == 4
    ranks = pd.read_csv(example_run / "results/own-method/stats/friedman_accuracy_ranks.csv")
    assert ranks["method"].str.contains(NAME, regex=False).any()
    assert any((example_run / "results/own-method/figures").glob("cd_accuracy*.png"))


def test_editing_own_module_reruns_exactly_its_jobs(example_run):
    module = example_run / "code" / "pooling.py"
    original = module.read_text()
    module.write_text(original + "\n_EDITED_BY = 'tests/test_own_method.py'\n")
    try:
        out = smk(example_run, "-n")
    finally:
        module.write_text(original)
    runs = re.findall(r"output: results/own-method/runs/\w+/none/([^/\s]+)\.parquet", out)
    assert len(runs) == 2 and all(r.startswith("pooling-MeanMaxPooling") for r in runs), runs
    assert "Nothing to be done" in smk(example_run, "-n")
