"""The documentation says what the code does: every YAML example in README.md and docs/*.md
parses; docs/stats-and-figures.md shows every statistical test of the schema and every figure
kind with an example, and each example is valid and runs on generated scores; the config
reference in docs/usage.md gives every key of the schema with the schema's default."""
import re

import numpy as np
import pytest
import yaml

from milbench.experiment.config import schema, with_defaults
from milbench.report import plots, stats
from milbench.testing import synthetic_scores

from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
STATS_PAGE = REPO / "docs" / "stats-and-figures.md"
USAGE_PAGE = REPO / "docs" / "usage.md"


def yaml_blocks(text):
    return re.findall(r"^ *```yaml\n(.*?)^ *```", text, re.S | re.M)


def section(text, heading):
    assert heading in text, f"section {heading!r} missing"
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_yaml_example_parses(page):
    for block in yaml_blocks(page.read_text()):
        yaml.safe_load(block)


def slug(heading):
    """GitHub's anchor of a markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page):
    return {slug(h) for h in re.findall(r"^#+ (.*)$", page.read_text(), re.M)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    """Every relative link names an existing file (and heading); the generated pages under
    docs/reproduction/ are checked once they are there."""
    pending = not (REPO / "docs" / "reproduction").is_dir()
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if pending and (REPO / "docs" / "reproduction") in [dest, *dest.parents]:
            continue
        assert dest.exists(), f"{page.name}: link to missing {target}"
        if anchor:
            assert anchor in anchors(dest), f"{page.name}: no heading #{anchor} in {path}"


# --------------------------------------------------------------- stats and figures page
def examples(key):
    """The entries of every `key:` list in the page's YAML examples."""
    out = []
    for block in yaml_blocks(STATS_PAGE.read_text()):
        doc = yaml.safe_load(block)
        if isinstance(doc, dict) and key in doc:
            out += doc[key]
    return out


def stats_tests():
    item = schema()["$defs"]["experiment"]["properties"]["stats"]["items"]
    return item["properties"]["test"]["enum"]


def figure_kinds():
    kind = schema()["$defs"]["experiment"]["properties"]["figures"]["items"].get(
        "properties", {}).get("kind", {})
    return sorted(set(kind.get("enum", [])) | set(plots.KINDS))


def test_the_schema_and_the_code_know_the_same_tests():
    assert sorted(stats_tests()) == sorted(stats.TESTS)


@pytest.mark.parametrize("test", stats_tests())
def test_every_stats_test_has_a_section_and_an_example(test):
    text = STATS_PAGE.read_text()
    assert f"### `{test}`" in text
    assert test in [e["test"] for e in examples("stats")]


@pytest.mark.parametrize("kind", figure_kinds())
def test_every_figure_kind_has_a_section_and_an_example(kind):
    text = STATS_PAGE.read_text()
    assert f"### `{kind}`" in text
    assert kind in [e["kind"] for e in examples("figures")]


def stats_scores():
    scores = synthetic_scores(3, methods=[("none", "milr", 0.0), ("none", "miordm", 0.03),
                                          ("none", "citation-knn", 0.01),
                                          ("relieff-mi", "mi-simple", 0.02),
                                          ("hydr-mi", "mi-simple", 0.04)], repeats=2, folds=3)
    rng = np.random.default_rng(0)
    scores["sel.metric"] = rng.choice(["max", "min", "adapted"], len(scores))
    scores["sel.percent"] = rng.choice([0.1, 0.3], len(scores))
    return scores


def test_every_stats_example_is_valid_and_runs():
    item = schema()["$defs"]["experiment"]["properties"]["stats"]["items"]
    from jsonschema import validate
    entries = examples("stats")
    for e in entries:
        validate(e, item)
    tables = stats.run_stats(stats_scores(), entries)
    for e in entries:
        name = e.get("name") or f"{e['test']}_{e.get('metric', 'accuracy')}"
        assert not tables[name].empty, e
        assert tables[name]["p"].notna().any(), e


def figure_scores(entry):
    kind = plots.KIND_ALIASES.get(entry["kind"], entry["kind"])
    if kind == "vs-features":
        return synthetic_scores(4, n_features=(10, 20, 40), repeats=1, folds=2)
    if kind == "vs-ratio":
        return synthetic_scores(5, train_ratios=(0.1, 0.3, 0.5), repeats=3, folds=1)
    scores = synthetic_scores(6, methods=[("none", "milr", 0.0), ("none", "miordm", 0.03),
                                          ("midr", "milr", 0.02)], repeats=1, folds=3)
    rng = np.random.default_rng(1)
    n = len(scores)
    scores["fit_cpu_seconds"] = scores["fit_seconds"]
    for col, grid in (("clf.lam", [1.0, 16.0, 256.0]), ("clf.theta", [0.1, 0.5, 0.9]),
                      ("clf.mu", [0.6, 0.8]), ("sel.C1", [1e-3, 1.0]), ("sel.C2", [1e-3, 1.0])):
        scores[col] = rng.choice(grid, n)
    scores["diag.select.orthonormality_loss"] = rng.random(n)
    return scores


def test_every_figure_example_uses_documented_keys_and_renders(tmp_path):
    rows = [line for line in section(STATS_PAGE.read_text(), "## Figures (`figures:`)")
            .split("\n### ", 1)[0].splitlines() if line.startswith("| `")]
    documented = {k for row in rows for k in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert {"kind", "metric", "x", "y", "facet", "control"} <= documented
    for i, entry in enumerate(examples("figures")):
        assert set(entry) <= documented, (entry, documented)
        paths = plots.make_figures(figure_scores(entry), [entry], outdir=tmp_path / str(i))
        assert [p.suffix for p in paths] == [".png", ".svg"]
        assert all(p.stat().st_size > 5000 for p in paths), entry


# --------------------------------------------------------------- config reference
def reference():
    text = section(USAGE_PAGE.read_text(), "## Configuration reference")
    blocks = yaml_blocks(text)
    assert len(blocks) == 1
    return text, yaml.safe_load(blocks[0])


def resolve(node):
    while "$ref" in node:
        node = schema()["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def check_defaults(node, doc, where, text, problems):
    """Every property of ``node`` with a default is in ``doc`` with that value (an empty
    container default may be shown filled); one without a default is at least named."""
    node = resolve(node)
    for key, sub in node.get("properties", {}).items():
        sub = resolve(sub)
        if key not in doc:
            if "default" in sub:
                problems.append(f"{where}{key}: missing (default {sub['default']!r})")
            elif not re.search(rf"\b{re.escape(key)}:", text):
                problems.append(f"{where}{key}: not documented")
            continue
        if "default" in sub and sub["default"] not in ({}, []) and doc[key] != sub["default"]:
            problems.append(f"{where}{key}: {doc[key]!r} but the schema's default is "
                            f"{sub['default']!r}")
        if isinstance(doc[key], dict):
            check_defaults(sub, doc[key], f"{where}{key}.", text, problems)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and ("properties" in resolve(extra)):
        for name, value in doc.items():
            if isinstance(value, dict) and name not in node.get("properties", {}):
                check_defaults(extra, value, f"{where}{name}.", text, problems)


def test_config_reference_is_valid_and_gives_every_default():
    text, doc = reference()
    assert with_defaults(doc, where="docs/usage.md") == doc   # valid, nothing left to fill
    problems = []
    check_defaults(schema(), doc, "", text, problems)
    assert not problems, "\n".join(problems)


PLANS = REPO / "resources" / "plans"


def experiment_hours(families):
    """Each experiment's whole estimate in CPU-hours (families, fold stages, job starts and
    workflow: the plan CSV's ``experiment_cpu``, repeated on the experiment's rows); a plan
    written before that column has only its families' cells."""
    if "experiment_cpu" not in families:
        return families.groupby("experiment")["cpu"].sum() / 3600
    return families.groupby("experiment")["experiment_cpu"].first() / 3600


@pytest.mark.parametrize("plan", sorted(PLANS.glob("*.csv")), ids=lambda p: p.stem)
def test_budget_table_comes_from_the_stored_plan(plan):
    """docs/performance.md's budget row of a config is the plan kept in resources/plans/
    (``python -m milbench.experiment.plan config/paper/<name>.yaml --csv``): its estimated CPU
    is the experiments' estimates summed, and each experiment named in the row with its hours
    (or days) is the plan's."""
    import pandas as pd

    hours = experiment_hours(pd.read_csv(plan))
    text = (REPO / "docs" / "performance.md").read_text()
    row = next(x for x in text.splitlines() if x.startswith(f"| {plan.stem} |"))
    cells = row.split(" | ")
    value, unit = re.match(r"([\d.,]+) CPU-(h|days)", cells[2]).groups()
    est = float(value.replace(",", "")) * (24 if unit == "days" else 1)
    total = hours.sum()
    assert abs(est - total) <= 0.05 * (24 if unit == "days" else 1) + 1e-9, (row, total)
    named = re.findall(r"`([a-z][\w-]+)` ([\d.]+) (h|d)\b", cells[4])
    assert named, row
    for exp, value, unit in named:
        assert exp in hours.index, (exp, row)
        got = hours[exp] / (24 if unit == "d" else 1)
        assert abs(float(value) - got) <= max(0.05, 0.005 * got), (exp, value, got)


def test_plan_against_measured_runs_comes_from_the_plan_and_the_archive():
    """docs/performance.md's table of planned against measured CPU: each row's planned hours
    are the experiment's estimate in the plan file it names (resources/plans/; a plan made on
    the machine and day of the run), its measured hours the archived run's CPU (every job's
    benchmark) in the entry of the experiment's name or the one named beside it, an archived
    run (FULL, or REDUCED when the configuration itself is the paper's cut), not a legacy
    transcription; its ratio their quotient."""
    import pandas as pd

    text = (REPO / "docs" / "performance.md").read_text()
    rows = re.findall(r"^  \| `([\w-]+)`(?: \(entry `([\w-]+)`\))? \| `([\w./-]+)` \| "
                      r"([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", text, re.M)
    assert len(rows) >= 3, rows
    for exp, entry, plan, planned, measured, ratio in rows:
        paper = exp.split("-")[0]
        got_plan = experiment_hours(pd.read_csv(PLANS / plan))[exp]
        meta = yaml.safe_load((REPO / "resources" / "reproductions" / paper
                               / f"{entry or exp}.yaml").read_text())
        assert meta["status"] in ("FULL", "REDUCED"), exp
        assert meta["provenance"].startswith("archived from "), exp
        assert exp in meta["experiments"], (exp, entry)
        got_measured = meta["cpu_seconds"] / 3600
        assert abs(float(planned) - got_plan) <= 0.005, (exp, planned, got_plan)
        assert abs(float(measured) - got_measured) <= 0.005, (exp, measured, got_measured)
        assert abs(float(ratio) - got_plan / got_measured) <= 0.005, (exp, ratio)


# --------------------------------------------------------------- benchmarks the docs cite
BENCH_REF = re.compile(r"benchmarks/(?:methods|workflow|parity)/(bench_\w+)\.py"
                       r"|benchmarks\.(?:methods|workflow|parity)\.(bench_\w+)\b|\b(bench_\w+)\.py")
CITING = [*PAGES, *sorted((REPO / "config").rglob("*.yaml")),
          *sorted((REPO / "workflow").rglob("*.py")), *sorted((REPO / "workflow").rglob("*.smk")),
          *sorted((REPO / "benchmarks").rglob("*.py"))]


def bench_scripts():
    return {p.stem: p for p in (REPO / "benchmarks").glob("*/bench_*.py")}


def cited(text):
    """(script, the words after it up to the end of its backtick span) for every benchmark the
    text names; words only where the name opens a command in backticks."""
    for span in re.finditer(r"`([^`]+)`|[^`]+", text):
        inside = span.group(1) is not None
        text = span.group(1) if inside else span.group(0)
        for m in BENCH_REF.finditer(text):
            name = next(g for g in m.groups() if g)
            rest = text[m.end():].split() if inside else []
            yield name, rest


@pytest.mark.parametrize("page", CITING, ids=lambda p: str(p.relative_to(REPO)))
def test_every_cited_benchmark_exists_with_its_options(page):
    """A figure in docs/performance.md (or a docstring, a config comment) names the benchmark
    that measures it: the script exists, and each ``--option`` and subcommand of a cited
    command is one the script takes, so the command still runs."""
    scripts = bench_scripts()
    for name, words in cited(page.read_text()):
        assert name in scripts, f"{page.name}: names {name}.py, which is not in benchmarks/"
        source = scripts[name].read_text()
        for word in words:
            opt = word.split("=")[0].rstrip(",;:.)")
            if re.fullmatch(r"--[a-z][\w-]*", opt):
                assert f'"{opt}"' in source, f"{page.name}: {name} has no option {opt}"
        if "add_subparsers" in source and words and not words[0].startswith("-"):
            assert f'"{words[0]}"' in source, f"{page.name}: {name} has no mode {words[0]!r}"


def test_citations_are_found():
    """The check above reads what the pages cite (it would pass vacuously otherwise)."""
    perf = dict(cited((REPO / "docs" / "performance.md").read_text()))
    assert {"bench_midr", "bench_milsd", "bench_miordm", "bench_overhead"} <= set(perf)
    assert list(cited("`python -m benchmarks.methods.bench_midr cell --variants a`")) == \
        [("bench_midr", ["cell", "--variants", "a"])]


# --------------------------------------------------------------- what code text may hold
# a timing with its unit, "N× faster", a date: measurements, which belong in
# docs/performance.md next to the benchmark that measures them
FIGURE = re.compile(r"\d(?:[\d.,]*\d)?\s?(?:ms|s|min|h|CPU-h|CPU-min|CPU-days)\b(?![-'])"
                    r"|\d(?:\.\d+)?\s?[×x]\s+(?:faster|slower|less|more|fewer|cheaper)\b"
                    r"|\b20\d\d-\d\d-\d\d\b")
# a number on a tracker the reader does not have; spelled in pieces so this file passes
TRACKER = re.compile("issue[ -]?#?[0-9]+|\\(#[0-9]+\\)|(?<![\\w&#/])#[0-9]{2,}\\b", re.I)
NOT_MEASURED = {   # (file, figure): why it is no measurement
    ("runner.py", "0.42 s"): "the format of a log line",
    ("reproduction_archive.py", "30 s"): "Snakemake's sampling interval",
}
# the planner's module moves into a package whose text is checked like the rest
PENDING = {REPO / "workflow" / "milbench" / "experiment" / "plan.py"}


def prose(path):
    """(line, text) of a file's docstrings, other bare strings and comments (a .smk file's
    comments)."""
    import ast
    import io
    import tokenize

    src = path.read_text()
    if path.suffix != ".py":
        yield from ((i, line) for i, line in enumerate(src.splitlines(), 1)
                    if line.lstrip().startswith("#"))
        return
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            yield node.lineno, node.value.value
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


LIBRARY_TEXT = sorted(p for p in [*(REPO / "workflow").rglob("*.py"),
                                  *(REPO / "workflow").rglob("*.smk"), REPO / "Snakefile"]
                      if p not in PENDING)


@pytest.mark.parametrize("path", LIBRARY_TEXT, ids=lambda p: str(p.relative_to(REPO)))
def test_code_text_holds_no_measurements(path):
    """Docstrings and comments say what the code does and cite the paper; timings, speed-ups
    and dates go to docs/performance.md with the benchmark that measures them."""
    found = [f"{path.name}:{line}: {m.group()!r} in …{text[max(0, m.start() - 50):m.end()]!r}"
             for line, text in prose(path) for m in FIGURE.finditer(text)
             if (path.name, m.group()) not in NOT_MEASURED]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("folder", ["workflow", "tests", "benchmarks", "config"])
def test_no_tracker_numbers(folder):
    """"issue #NN" means nothing to a reader without the tracker: say the behaviour or the
    reason instead."""
    files = [p for p in (REPO / folder).rglob("*")
             if p.suffix in (".py", ".smk", ".yaml", ".sh", ".md") and p.is_file()]
    found = [f"{p.relative_to(REPO)}:{i}: {line.strip()}" for p in files
             for i, line in enumerate(p.read_text().splitlines(), 1) if TRACKER.search(line)]
    assert not found, "\n".join(found)


def test_the_checks_catch_what_they_forbid():
    assert FIGURE.search("one fit 16.6 → 4.3 s CPU") and FIGURE.search("2.5–10× slower")
    assert FIGURE.search("until 2026-11-28") and not FIGURE.search("max_iter = 100 rounds")
    assert all(TRACKER.search(t) for t in ("(issue #" "29)", "issue " "26", "(#" "26)",
                                           "see #" "17"))
    assert not any(TRACKER.search(t) for t in ("color #1f77b4", "&#39;", "C = 2^5"))
