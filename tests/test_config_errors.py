"""A wrong config stops with a short message whose first line names the experiment and the key
(its path in the config), the offending value and what is allowed, never the schema."""
import copy
import subprocess

import pytest
import yaml
from test_workflow_e2e import SNAKEMAKE

from milbench.experiment.config import experiment_defaults, load_config, with_defaults

from conftest import tiny_config

MAX_LINES = 5


def broken(edit):
    cfg = copy.deepcopy(tiny_config())
    edit(cfg, cfg["experiments"]["tiny"])
    return cfg


def error_of(cfg, tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ValueError) as info:
        load_config(tmp_path / "config.yaml")
    message = str(info.value)
    assert len(message.splitlines()) <= MAX_LINES and "$defs" not in message
    return message.splitlines()


def test_misspelt_protocol_key_names_experiment_key_and_allowed_keys(tmp_path):
    def edit(cfg, exp):
        exp["protocol"]["fold"] = exp["protocol"].pop("folds")

    first, *rest = error_of(broken(edit), tmp_path)
    # the misspelling, not the 'folds' it leaves missing
    assert first.startswith("experiment tiny: experiments.tiny.protocol.fold: unknown key")
    assert "allowed keys: kind, folds, repeats, seed, train, train_ratios" in first
    assert "did you mean 'folds'?" in first
    assert rest == [f"  in {tmp_path / 'config.yaml'}"]


def test_wrong_value_type_names_experiment_key_value_and_type(tmp_path):
    def edit(cfg, exp):
        exp["protocol"]["folds"] = "three"

    first = error_of(broken(edit), tmp_path)[0]
    assert first == ("experiment tiny: experiments.tiny.protocol.folds: 'three' is not valid: "
                     "expected integer")


@pytest.mark.parametrize("key, value, expected", [
    ("scale", "minimax", "scale: 'minimax' is not valid (allowed: minmax, zscore, none)"),
    ("inner_folds", 1, "inner_folds: 1 is not valid: must be >= 2"),
    ("classifiers", [], "classifiers: [] is not valid: too few items (at least 1)"),
    ("figures", [{"kind": "bars"}],
     "figures.0.kind: 'bars' is not valid (allowed: scores, cd, vs-features"),
])
def test_wrong_value_lists_what_is_allowed(tmp_path, key, value, expected):
    first = error_of(broken(lambda cfg, exp: exp.update({key: value})), tmp_path)[0]
    assert first.startswith(f"experiment tiny: experiments.tiny.{expected}")


def test_unknown_experiment_key_names_the_experiment(tmp_path):
    first = error_of(broken(lambda cfg, exp: exp.update({"folds": 3})), tmp_path)[0]
    assert first.startswith("experiment tiny: experiments.tiny.folds: unknown key (allowed keys: "
                            "description, datasets, protocol,")


def test_missing_key_is_named_with_its_path(tmp_path):
    first = error_of(broken(lambda cfg, exp: exp.pop("classifiers")), tmp_path)[0]
    assert first == "experiment tiny: experiments.tiny.classifiers: required key is missing"


def test_unknown_top_level_key_names_the_key_and_file(tmp_path):
    cfg = tiny_config()
    cfg["experiment"] = cfg.pop("experiments")
    lines = error_of(cfg, tmp_path)
    assert lines[0].startswith(f"{tmp_path / 'config.yaml'}: experiment: unknown key (allowed "
                               "keys: offline, mirror, code, datasets, chains, experiments,")
    assert "did you mean 'experiments'?" in lines[0]


def test_one_entry_and_a_whole_config_check_alike():
    exp = {**tiny_config()["experiments"]["tiny"], "scale": "minimax"}
    with pytest.raises(ValueError, match=r"^experiment nb: scale: 'minimax' is not valid"):
        experiment_defaults(exp, where="experiment nb")
    cfg = {"experiments": {"nb": exp}}
    with pytest.raises(ValueError, match=r"^experiment nb: experiments.nb.scale: 'minimax'"):
        with_defaults(cfg)


def test_dry_run_shows_the_short_message_not_the_schema(tmp_path):
    def edit(cfg, exp):
        exp["protocol"]["fold"] = exp["protocol"].pop("folds")

    (tmp_path / "config.yaml").write_text(yaml.safe_dump(broken(edit)))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                      str(tmp_path / "config.yaml"), "-n"],
                         capture_output=True, text=True)
    out = (res.stdout + res.stderr).strip().splitlines()
    at = next(i for i, line in enumerate(out) if "experiments.tiny.protocol.fold" in line)
    assert res.returncode != 0
    assert out[at].startswith("experiment tiny: experiments.tiny.protocol.fold: unknown key")
    assert out[at + 1] == f"  in {tmp_path / 'config.yaml'}"
    assert len(out) <= 10 and not any("Failed validating" in line for line in out)
