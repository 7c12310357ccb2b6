"""README's "Benchmark your own data set" recipe works as written: its YAML validates, a CSV in
the layout the README documents reads as bags, `snakemake -n` plans every job the recipe asks
for, and the output paths the README names are the ones those entries write."""
import re

import numpy as np
import pytest
import yaml
from test_workflow_e2e import planned, smk

from milbench.data.sources import read_any
from milbench.experiment.config import with_defaults
from milbench.experiment.grid import expand_methods

from conftest import REPO

SECTION = "## Benchmark your own data set"


def recipe_section():
    text = (REPO / "README.md").read_text()
    assert SECTION in text, f"README.md lost its section {SECTION!r}"
    body = text.split(SECTION, 1)[1]
    return body.split("\n## ", 1)[0]


def fenced(section, lang):
    return re.findall(rf"^```{lang}\n(.*?)^```", section, re.S | re.M)


@pytest.fixture(scope="module")
def recipe():
    section = recipe_section()
    blocks = fenced(section, "yaml")
    assert len(blocks) == 1, "the recipe is one YAML block"
    assert len(blocks[0].splitlines()) <= 15, "the recipe promises at most 15 lines"
    return section, yaml.safe_load(blocks[0])


def write_csv(path, n_bags=12, d=4, seed=0):
    """label, bag id, features: the layout the README's recipe documents (one instance a row,
    no header, a bag's rows together)."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for b in range(n_bags):
        label = b % 2
        for _ in range(int(rng.integers(2, 5))):
            x = rng.normal(size=d) + (2.0 * label if _ == 0 else 0.0)
            lines.append(",".join([str(label), f"bag{b}", *(f"{v:.4f}" for v in x)]))
    path.write_text("\n".join(lines) + "\n")


def test_recipe_validates_and_its_data_reads(recipe, tmp_path):
    cfg = with_defaults(recipe[1], where="README recipe")
    (name, spec), = cfg["datasets"].items()
    assert spec["format"] == "csv"
    write_csv(tmp_path / spec["path"])
    bags = read_any("csv", tmp_path / spec["path"])
    assert len(bags) == 12 and set(bags.labels) == {0, 1} and bags.n_features == 4
    (exp, e), = cfg["experiments"].items()
    assert name in e["datasets"]
    assert e["stats"] and e["figures"]


def test_recipe_dry_run_and_the_paths_it_names(recipe, tmp_path):
    section, cfg = recipe
    (name, spec), = cfg["datasets"].items()
    (exp, e), = cfg["experiments"].items()
    write_csv(tmp_path / spec["path"])

    commands = fenced(section, "bash")
    assert len(commands) == 1
    command = commands[0].strip()
    assert re.fullmatch(r"snakemake --cores \d+ --configfile \S+\.yaml", command), command

    out = smk(tmp_path, "-n", config=cfg)
    jobs = planned(out)
    n_methods = len(expand_methods(with_defaults(cfg)["experiments"][exp]))
    assert jobs.get("bags_user") == 1
    assert jobs.get("run_method") == n_methods * len(e["datasets"])
    assert jobs.get("stats") == jobs.get("figures") == 1
    assert f"output: results/{exp}/figures" in out and f"output: results/{exp}/stats" in out

    # the files the README says the entries write (make_figures / run_stats name them so)
    fig = e["figures"][0]
    cd = fig.get("name") or f"{fig['kind']}_{fig['metric']}"
    assert fig["kind"] == "cd"
    assert f"`results/{exp}/figures/{cd}.png`" in section
    test = e["stats"][0]
    assert test["test"] == "friedman"
    assert f"`results/{exp}/stats/{test['name']}*.csv`" in section


def test_readme_counts_of_the_default_run():
    """The README's "N cells in M method jobs and K fold stages" is the default config's."""
    from milbench.experiment.config import load_config
    from milbench.experiment.plan import count_experiment

    cfg = load_config(REPO / "config" / "config.yaml")
    counts = [count_experiment(n, e, cfg["threads"]["run"])
              for n, e in cfg["experiments"].items()]
    m = re.search(r"(\d+)\s+cells in (\d+) method jobs and (\d+) fold stages",
                  (REPO / "README.md").read_text())
    assert m, "README: the default run's counts are missing"
    assert tuple(map(int, m.groups())) == tuple(
        sum(c[k] for c in counts) for k in ("cells", "method_jobs", "stage_jobs"))
