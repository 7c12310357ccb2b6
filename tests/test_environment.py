"""Pins agree between requirements.txt, pyproject.toml and envs/*.yaml; configs validate."""
import re

import jsonschema
import pytest
import yaml

from conftest import REPO


def pins(lines):
    out = {}
    for line in lines:
        line = line.split("#")[0].strip().strip("\"',")
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_conda_envs_pin_the_same_versions_as_pip():
    req = pins((REPO / "requirements.txt").read_text().splitlines())
    assert len(req) >= 10
    envs = sorted((REPO / "envs").glob("*.yaml"))
    assert envs
    for env in envs:
        spec = yaml.safe_load(env.read_text())
        flat = []
        for dep in spec["dependencies"]:
            flat += dep["pip"] if isinstance(dep, dict) else [dep.replace("=", "==", 1)
                                                              if "==" not in dep else dep]
        got = pins(flat)
        for name, version in got.items():
            if name in req:
                assert req[name] == version, f"{env.name}: {name} {version} != requirements {req[name]}"
        missing = set(req) - set(got)
        assert not missing, f"{env.name} lacks {sorted(missing)}"


def test_pyproject_pins_agree():
    req = pins((REPO / "requirements.txt").read_text().splitlines())
    proj = pins((REPO / "pyproject.toml").read_text().splitlines())
    for name, version in proj.items():
        assert req.get(name) == version, name


@pytest.mark.parametrize("path", [REPO / "config/config.yaml",
                                  *sorted((REPO / "config/paper").glob("*.yaml")),
                                  *sorted((REPO / "config/reduced").glob("*.yaml"))],
                         ids=lambda p: p.name)
def test_configs_validate_against_schema(path):
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)


@pytest.mark.parametrize("path", [REPO / "config/config.yaml",
                                  *sorted((REPO / "config/paper").glob("*.yaml")),
                                  *sorted((REPO / "config/reduced").glob("*.yaml"))],
                         ids=lambda p: p.name)
def test_every_configured_method_builds(path):
    """Every selector / classifier entry names a registry method with valid parameters."""
    from milbench.experiment.config import load_config
    from milbench.experiment.fold import build_estimator
    from milbench.experiment.grid import expand_methods
    for exp, cfg in load_config(path)["experiments"].items():
        for m in expand_methods(cfg):
            build_estimator(cfg["scale"], m["selector"], m["classifier"])
