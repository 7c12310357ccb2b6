"""Every shell command README.md and docs/*.md print runs as printed, in an environment set up
the way the README says: the project's venv activated (its ``bin/`` first on ``PATH``), in a copy
of the workflow (``copy_workflow``). Commands are taken from fenced ``bash`` / ``sh`` /
``console`` blocks and from the backticked commands of the README's "Running" table.

Each is made cheap, never changed in what it names: ``snakemake`` gets ``-n`` (a dry run plans
every job and checks the config, the data paths and the rules); ``python -m
milbench.experiment.plan`` gets ``--count-only``; the benchmark scripts and the one-cell runner
get ``--help``; ``reproduction keep`` / ``restore`` get the copy's ``--archive``, so nothing is
written into the checkout. Placeholders in angle brackets get test values, a user's own file
(``mybench.yaml``, its CSV) is written from the README's recipe, a mirror is an empty directory.
Commands that set up the environment, need a cluster or a finished run, follow a running job
forever or commit to the user's repository are listed in ``SKIPPED`` with the reason.
A command fails the test when it exits non-zero or its shell cannot find it."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_readme_recipe import write_csv

from conftest import REPO, copy_workflow

PAGES = [REPO / "README.md", *sorted(p for p in (REPO / "docs").glob("*.md")
                                     if p.name != "methods.md")]
SHELLS = ("bash", "sh", "console")
TABLE_COMMAND = re.compile(r"`((?:snakemake|python|\.venv/bin/)[^`]*)`")
VENV_BIN = Path(sys.executable).parent

# (a pattern the command matches, why it is not run here)
SKIPPED = [
    (r"pip install", "sets up the environment this test runs in, then runs the whole default "
                     "run / test suite: .ci/run runs exactly these"),
    (r"--profile profiles/slurm", "needs a SLURM cluster: tests/test_slurm.py runs the profile "
                                  "on one"),
    (r"milbench\.experiment\.slurm orphans", "asks SLURM (squeue / scancel) for a killed run's "
                                             "jobs: tests/test_slurm.py runs it on a cluster"),
    (r"snakemake --report ", "builds the report over a finished run (the README's first "
                             "command): the report's own test builds it"),
    (r"^tail -f ", "follows the logs of a running job until interrupted"),
    (r"^git (add|commit)", "commits to the user's own repository"),
]

# placeholder -> test value (the default config's first method and a config it runs)
PLACEHOLDERS = {
    "<config>": "config/config.yaml",
    "<dir-or-url>": "mirror",
    "<experiment>": "quickstart",
    "<dataset>": "musk1",
    "<selector>": "none",
    "<classifier>": "milr",
    "<selector-id>": "none",
    "<classifier-id>": "milr",
    "<e>": "quickstart",
    "<d>": "musk1",
}


def shell_blocks(page):
    """(line number, command) of every command in the page's fenced shell blocks; a trailing
    ``\\`` joins lines, ``#`` lines are comments, ``console`` blocks keep the ``$ `` lines."""
    lines = page.read_text().splitlines()
    out, lang, pending, start = [], None, "", 0
    for i, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            lang = None if lang is not None else (stripped[3:].strip() or "")
            continue
        if lang not in SHELLS:
            continue
        if lang == "console":
            if not stripped.startswith("$ ") and not pending:
                continue
            stripped = stripped[2:] if not pending else stripped
        if not pending:
            if not stripped or stripped.startswith("#"):
                continue
            start = i
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        out.append((start, pending + stripped))
        pending = ""
    return out


def running_table(page):
    """(line number, command) of the backticked commands in the README's "Running" table."""
    text = page.read_text()
    if "## Running" not in text:
        return []
    out = []
    offset = text[:text.index("## Running")].count("\n") + 1
    section = text.split("## Running", 1)[1].split("\n## ", 1)[0]
    for i, line in enumerate(section.splitlines()):
        if line.startswith("|"):
            out += [(offset + i, c) for c in TABLE_COMMAND.findall(line)]
    return out


def documented():
    for page in PAGES:
        for line, cmd in shell_blocks(page) + running_table(page):
            yield pytest.param(cmd, id=f"{page.relative_to(REPO)}:{line}: {cmd[:60]}")


def skip_reason(cmd):
    for pattern, why in SKIPPED:
        if re.search(pattern, cmd):
            return why
    return None


def cheap(cmd):
    """The command as printed, placeholders filled in, made cheap (see the module docstring)."""
    for key, value in PLACEHOLDERS.items():
        cmd = cmd.replace(key, value)
    assert not re.search(r"<[\w-]+>", cmd), f"a placeholder without a test value: {cmd}"
    words = cmd.split()
    if words[0] == "snakemake" and not {"-n", "--dry-run", "--unlock"} & set(words):
        cmd = "snakemake -n" + cmd[len("snakemake"):]
    elif re.match(r"python -m milbench\.experiment\.plan ", cmd) and "--count-only" not in words:
        cmd = cmd.split("#")[0].rstrip() + " --count-only"
    elif re.match(r"python -m (benchmarks\.|milbench\.experiment\.runner )", cmd):
        cmd = " ".join(words[:3]) + " --help"
    elif re.match(r"python -m milbench\.report\.reproduction (keep|restore) ", cmd):
        # the parts go to the copy's resources/, never to the checkout's
        cmd = cmd.split("#")[0].rstrip() + " --archive resources/reproductions"
    return cmd


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A copy of the workflow with what the README's own-data recipe asks the user to make."""
    root = copy_workflow(tmp_path_factory.mktemp("docs_commands"))
    readme = (REPO / "README.md").read_text()
    recipe = readme.split("## Benchmark your own data set", 1)[1]
    block = re.search(r"^```yaml\n(.*?)^```", recipe, re.S | re.M).group(1)
    (root / "mybench.yaml").write_text(block)
    write_csv(root / yaml.safe_load(block)["datasets"]["mydata"]["path"])
    (root / "mirror").mkdir()
    return root


def activated_env():
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV_BIN.parent)
    return env


ACTIVATE = "`source .venv/bin/activate` first"


def test_commands_are_found():
    """The pages print their commands one way: in the activated venv, which each page with a
    command says at its top."""
    for page in PAGES:
        if shell_blocks(page) + running_table(page):
            top = page.read_text().split("\n## ", 1)[0]
            assert ACTIVATE in " ".join(top.split()), (
                f"{page.relative_to(REPO)}: its top does not say {ACTIVATE!r}")
    commands = [p.values[0] for p in documented()]
    assert len(commands) >= 15, commands
    assert any(c.startswith("snakemake") for c in commands)
    assert any(c.startswith("python -m milbench.experiment.plan") for c in commands)
    assert not any("PYTHONPATH=" in c for c in commands), (
        "one way to call the tools: the activated venv the README says, not PYTHONPATH=")


@pytest.mark.parametrize("command", list(documented()))
def test_documented_command_runs(command, workdir):
    why = skip_reason(command)
    if why:
        pytest.skip(why)
    run = cheap(command)
    if run.startswith("rm "):  # the file the page tells the user to delete
        target = workdir / run.split()[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    res = subprocess.run(["bash", "-c", run], cwd=workdir, env=activated_env(),
                         capture_output=True, text=True, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0 and "command not found" not in out, (
        f"`{command}` (run as `{run}`) exited {res.returncode}:\n{out[-3000:]}")


def test_every_module_the_pages_name_runs_with_python_m():
    """Every ``python -m <module>`` the pages name in their text is a module ``python -m`` can
    run from the checkout's root (a module, or a package with ``__main__``)."""
    named = {}
    for page in PAGES:
        for m in re.finditer(r"`python\s+-m\s+([\w.]+)(?=[\s`])", page.read_text()):
            named.setdefault(m.group(1), page.relative_to(REPO))
    assert "milbench.experiment.plan" in named and len(named) >= 10, named
    sys.path.insert(0, str(REPO))
    try:
        for module, page in sorted(named.items()):
            spec = importlib.util.find_spec(module)
            assert spec is not None, f"{page}: `python -m {module}`: no such module"
            if spec.submodule_search_locations is not None:
                assert importlib.util.find_spec(f"{module}.__main__") is not None, (
                    f"{page}: `python -m {module}`: a package without __main__")
    finally:
        sys.path.remove(str(REPO))
