"""Config defaults come from the JSON schema only: Snakemake's validate and
milbench.experiment.config fill the same ones, the library's own defaults equal them, and a wrong type in
a chain setting fails the dry run naming the key."""
import copy
import inspect
import subprocess

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate as snakemake_validate
from test_workflow_e2e import SNAKEMAKE

from milbench.chains import images, reddit, webkb
from milbench.chains.protein import build_protein_graph
from milbench.chains.synthetic_reddit import make_synthetic_reddit
from milbench.chains.synthetic_scenes import make_synthetic_scenes
from milbench.chains.synthetic_site import make_site
from milbench.experiment.config import (
    SCHEMA,
    chain_settings,
    experiment_defaults,
    load_config,
    with_defaults,
)

from conftest import REPO, tiny_config

CONFIGS = [*sorted((REPO / "config").rglob("*.yaml")),
           *sorted((REPO / "examples").rglob("config*.yaml"))]


def snakemake_filled(cfg):
    """The config as the Snakefile's validate(config, schema, set_default=True) leaves it."""
    cfg = copy.deepcopy(cfg)
    snakemake_validate(cfg, str(SCHEMA), set_default=True)
    return cfg


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(REPO)))
def test_library_fills_the_defaults_snakemake_fills(path):
    raw = yaml.safe_load(path.read_text())
    ours = load_config(path)
    assert ours == snakemake_filled(raw)
    for name, exp in raw["experiments"].items():
        assert experiment_defaults(exp) == ours["experiments"][name]


def test_empty_chains_give_every_chain_setting():
    cfg = snakemake_filled({**tiny_config(), "chains": {}})
    corel = chain_settings(cfg, "corel")
    assert corel["source"] == "synthetic" and corel["n_pos"] == corel["n_neg"] == 300
    assert corel["synthetic"] == {"n_pos": 40, "n_neg": 40, "n_other": 10, "size": [128, 192],
                                  "seed": 0}
    # every property of every chain (and of its synthetic source) has a default
    chains = yaml.safe_load(SCHEMA.read_text())["properties"]["chains"]["properties"]
    for name, sub in chains.items():
        assert list(chain_settings(cfg, name)) == list(sub["properties"]), name
        if "synthetic" in sub["properties"]:
            assert list(cfg["chains"][name]["synthetic"]) == list(
                sub["properties"]["synthetic"]["properties"]), name
    assert cfg["threads"] == {"run": 8, "cell": 1} and cfg["experiments"]["tiny"]["runtime"] == 60


def test_chain_settings_merge_and_keep_the_schema_order():
    """A partial chain / synthetic entry keeps the other defaults; the keys come in the schema's
    order whatever order the config writes them in (the rules' params stay the same)."""
    cfg = with_defaults({**tiny_config(), "chains": {"corel": {
        "threads": 4, "synthetic": {"seed": 3, "n_pos": 5}, "source": "my/images"}}})
    default = chain_settings(with_defaults(tiny_config()), "corel")
    corel = chain_settings(cfg, "corel")
    assert list(corel) == list(default) and list(corel["synthetic"]) == list(default["synthetic"])
    assert corel == {**default, "threads": 4, "source": "my/images",
                     "synthetic": {**default["synthetic"], "seed": 3, "n_pos": 5}}


# (chain, schema key, library function, its parameter): the library's defaults are the schema's
LIBRARY_DEFAULTS = [
    ("corel", "positive", images.select_images, "positive"),
    ("corel", "negative", images.select_images, "negative"),
    ("corel", "exclude", images.select_images, "exclude"),
    ("corel", "n_pos", images.select_images, "n_pos"),
    ("corel", "n_neg", images.select_images, "n_neg"),
    ("corel", "seed", images.select_images, "seed"),
    ("corel", "regions", images.segment_images, "n_regions"),
    ("corel", "oversegmentations", images.segment_images, "oversegmentations"),
    ("corel", "alpha", images.segment_images, "alpha"),
    ("corel", "beta", images.segment_images, "beta"),
    ("corel", "nb", images.segment_images, "nb"),
    ("corel", "codebook", images.fit_codebooks, "n_words"),
    ("corel", "pixels_per_image", images.fit_codebooks, "pixels_per_image"),
    *[("corel.synthetic", k, make_synthetic_scenes, k)
      for k in ("n_pos", "n_neg", "n_other", "size", "seed")],
    *[("reddit", k, reddit.select_bags, k)
      for k in ("n_pos", "n_neg", "pos_threshold", "neg_threshold", "seed")],
    *[("reddit", k, reddit.build_reddit_bags, k) for k in ("n_terms", "subreddits", "time_column")],
    *[("reddit.synthetic", k, make_synthetic_reddit, k)
      for k in ("n_pos", "n_neg", "n_mid", "seed")],
    ("webkb", "max_features", webkb.build_task_bags, "max_features"),
    ("webkb", "min_df", webkb.build_task_bags, "min_df"),
    ("webkb", "passage_words", webkb.build_task_bags, "width"),
    ("webkb", "passage_stride", webkb.build_task_bags, "stride"),
    ("webkb", "seed", webkb.build_task_bags, "seed"),
    *[("webkb.synthetic", k, make_site, k) for k in ("seed", "sizes")],
    *[("protein_graph", k, build_protein_graph, k)
      for k in ("table", "threshold", "k", "drop_position")],
]


@pytest.mark.parametrize("chain, key, fn, param", LIBRARY_DEFAULTS,
                         ids=[f"{c}.{k}" for c, k, _, _ in LIBRARY_DEFAULTS])
def test_library_defaults_equal_the_schema(chain, key, fn, param):
    """The Python defaults (images.DEFAULT_POSITIVE, ...) are not a second source of truth:
    each equals the schema's, as the pipeline's params carry it (lists for tuples)."""
    settings = with_defaults(tiny_config())["chains"]
    for part in chain.split("."):
        settings = settings[part]
    lib = inspect.signature(fn).parameters[param].default
    as_config = yaml.safe_load(yaml.safe_dump(lib, sort_keys=False))   # tuples -> lists
    assert repr(settings[key]) == repr(as_config)      # same types and key order, too


def test_wrong_chain_type_fails_the_dry_run_naming_the_key(tmp_path):
    cfg = {**tiny_config(), "chains": {"corel": {"n_pos": "many"}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                      str(tmp_path / "config.yaml"), "-n"],
                         capture_output=True, text=True)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "config.yaml: chains.corel.n_pos: 'many' is not valid: expected null or integer" in out
    with pytest.raises(ValueError, match=r"config.yaml: chains.corel.n_pos: 'many' is not valid"):
        load_config(tmp_path / "config.yaml")


def test_notebook_entry_fills_the_defaults():
    """run_experiment on an entry that leaves the defaults (and ``datasets``) out gives the rows
    of the same entry with the schema's defaults written out."""
    from milbench.data.sources import load_builtin
    from milbench.experiment.runner import run_experiment

    bags = load_builtin("musk1", offline=True)
    short = {"protocol": {"kind": "kfold", "folds": 2}, "classifiers": [{"name": "mi-simple"}]}
    full = {"datasets": ["musk1"], "scale": "minmax", "selectors": [{"name": "none"}],
            "protocol": {"kind": "kfold", "folds": 2, "repeats": 1, "seed": 0},
            "classifiers": [{"name": "mi-simple"}]}
    timing = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]
    ours, written = (run_experiment(e, bags, dataset="musk1").drop(columns=timing)
                     for e in (short, full))
    pd.testing.assert_frame_equal(ours, written, check_exact=True)
    with pytest.raises(ValueError, match=r"experiment notebook: scale: 'minimax' is not valid "
                                         r"\(allowed: minmax, zscore"):
        run_experiment({**short, "scale": "minimax"}, bags, dataset="musk1")
