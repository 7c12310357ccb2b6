"""The README's cost paragraph and docs/usage.md's threshold table quote the measured run kept in
resources/costs.json (``python -m benchmarks.workflow.bench_setup --tests``), never hand-typed
figures.  The counts the paragraph quotes are also config/config.yaml's
(tests/test_readme_recipe.py), so the file is a run of the current default."""
import json
import re

from conftest import REPO

COSTS = REPO / "resources" / "costs.json"


def costs():
    return json.loads(COSTS.read_text())


def readme_head():
    """The README up to its first section: the two commands and the paragraph under them."""
    text = (REPO / "README.md").read_text().split("\n## ", 1)[0]
    return " ".join(text.split())


def number(s):
    return float(s.replace(",", ""))


def minutes(stage):
    return round(stage["cpu_s"] / 60, 1), round(stage["wall_s"] / 60, 1)


def load(stage):
    return round(stage["load_before"], 1), round(stage["load_after"], 1)


def cost_mismatches(text, c):
    """(pattern, quoted, recorded) for each figure of the paragraph that is not the file's, rounded as
    printed; a figure the paragraph lacks counts as a mismatch."""
    run, suite, cores = c["default_run"], c.get("test_suite"), c["machine"]["cores"]
    checks = [
        (r"(\d+) cells in (\d+) method jobs and (\d+) fold stages",
         (run["cells"], run["jobs_per_rule"]["run_method"], run["jobs_per_rule"]["fold_stage"])),
        (r"(\d+) jobs, ([\d.]+) CPU-minutes and ([\d.]+) min wall on a (\d+)-core machine "
         r"shared with other work, load average ([\d.]+) → ([\d.]+)\)",
         (run["jobs"], *minutes(run), cores, *load(run))),
    ]
    if suite:
        checks += [
            (r"([\d,]+) tests on two pytest-xdist workers \((\d+) passed, (\d+) skipped; "
             r"([\d.]+) CPU-minutes and ([\d.]+) min wall on the same machine, "
             r"load average ([\d.]+) → ([\d.]+)\)",
             (suite["passed"] + suite["skipped"], suite["passed"], suite["skipped"],
              *minutes(suite), *load(suite))),
        ]
    checks.append((r"the (\d+) tests that read `\.\./shared`", (c["tests_reading_shared"],)))
    out = []
    for pattern, want in checks:
        m = re.search(pattern, text)
        got = tuple(number(g) for g in m.groups()) if m else None
        if got != tuple(float(w) for w in want):
            out.append((pattern, got, want))
    return out


def test_readme_costs_are_the_measured_ones():
    assert not cost_mismatches(readme_head(), costs())


def test_the_check_catches_a_typed_figure():
    text, c = readme_head(), costs()
    cpu = f"{c['default_run']['cpu_s'] / 60:.1f} CPU-minutes"
    assert cpu in text
    assert cost_mismatches(text.replace(cpu, "7.8 CPU-minutes"), c)
    assert cost_mismatches(text.replace(" cells in ", " cells, "), c)


def test_usage_threshold_table_is_the_default_runs():
    """docs/usage.md's ``threshold: auto`` rows are the default run's
    results/imbalanced/summary.csv, as the run recorded them."""
    rows = {r["method"]: r for r in costs()["results"]["imbalanced"]}
    text = (REPO / "docs" / "usage.md").read_text()
    table = re.findall(r"^\| (none \+ [\w-]+) \| auto \| ([\d.]+) \| ([\d.]+) \| ([-\d.]+) \| "
                       r"([\d.]+) \|", text, re.M)
    assert sorted(m for m, *_ in table) == sorted(rows)
    for method, *values in table:
        r = rows[method]
        want = [r[f"{k}_mean"] for k in ("accuracy", "balanced_accuracy", "matthews_corrcoef",
                                          "auroc")]
        assert values == [f"{w:.3f}" for w in want], method
