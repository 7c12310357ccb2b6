"""Pins agree between requirements.txt, pyproject.toml and envs/*.yaml; configs validate."""
import re
import tomllib

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


# Workflow-only tools: requirements.txt and the conda env pin them for the workflow runner; the
# library never imports them, so pyproject.toml lists them in its "workflow" extra instead of its
# dependencies. pygments: `snakemake --report` needs it (Snakemake's `reports` extra).
WORKFLOW_ONLY = {"snakemake", "snakemake-executor-plugin-slurm", "pygments"}


def test_pins_parse_names_and_versions():
    assert pins(["numpy==2.4.6  # comment", '    "scikit_learn==1.9.1",', "# x==1", "a>=1"]) == \
        {"numpy": "2.4.6", "scikit-learn": "1.9.1"}


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


def test_pyproject_declares_every_requirement_pin():
    """requirements.txt == pyproject's dependencies + its "workflow" extra, version for version;
    the extra holds exactly the workflow-only tools."""
    req = pins((REPO / "requirements.txt").read_text().splitlines())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    library = pins(project["dependencies"])
    workflow = pins(project.get("optional-dependencies", {}).get("workflow", []))
    assert WORKFLOW_ONLY <= set(req), "the allow-list names a tool requirements.txt no longer pins"
    assert set(workflow) == WORKFLOW_ONLY
    assert not set(library) & WORKFLOW_ONLY, "a workflow-only tool is a library dependency"
    assert library | workflow == req
    assert len(library) + len(workflow) == len(project["dependencies"]) + len(
        project.get("optional-dependencies", {}).get("workflow", [])), "each entry is one name==version, listed once"


def test_requirements_build_the_html_report():
    """`pip install -r requirements.txt` (the README's first command) can run `snakemake
    --report`: every package of Snakemake's `reports` extra is pinned, since the snakemake pin
    alone does not install them."""
    from importlib.metadata import requires

    req = pins((REPO / "requirements.txt").read_text().splitlines())
    extra = {re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower().replace("_", "-")
             for r in requires("snakemake") if re.search(r"""extra\s*==\s*["']reports["']""", r)}
    assert "pygments" in extra
    assert extra <= set(req), f"requirements.txt lacks {sorted(extra - set(req))}"


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
