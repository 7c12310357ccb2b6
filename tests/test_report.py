"""The README's `snakemake --report results/report.html`, run after a finished (tiny) run, builds
the HTML report, and its landing page opens on the title and "What to look at first"."""
import html
import json
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
import yaml

from conftest import copy_workflow, tiny_config

SNAKEMAKE_TEMPLATE = Path(find_spec("snakemake").submodule_search_locations[0]) / \
    "report" / "html_reporter" / "template"


def snakemake(root, *args):
    res = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=root,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


@pytest.fixture(scope="module")
def landing(tmp_path_factory):
    """The workflow description the report's landing page shows (HTML), as embedded in
    results/report.html by the README's command; the tiny config stands in for the default."""
    root = copy_workflow(tmp_path_factory.mktemp("report"))
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(tiny_config()))
    snakemake(root, "--cores", "2", "--quiet", "rules")
    snakemake(root, "--report", "results/report.html")
    page = (root / "results" / "report.html").read_text()
    m = re.search(r'<script id="workflow-desc">\s*var workflow_desc = (.*?);\s*</script>', page,
                  re.S)
    assert m, "report.html embeds no workflow description"
    return json.loads(m.group(1))


def visible_text(fragment):
    fragment = re.sub(r"<style>.*?</style>", " ", fragment, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def test_landing_page_opens_on_title_and_what_to_look_at_first(landing):
    text = visible_text(landing)
    assert text.startswith("milbench: results per experiment What to look at first Figure scores")
    first = text[:text.index("Experiments")]
    # the four pointers whole, before the experiment list: short enough for the first screen
    # beside the rule graph (the pane is 32rem wide, about 75 characters a line)
    for item in ("Figure scores", "Table summary.csv", "Statistics (under statistics)",
                 "Figure runtime_*: training CPU time per method and data set."):
        assert item in first
    assert len(first) < 1200, f"{len(first)} characters before the experiments"
    assert "javascript:app.showCategory('tiny')" in landing.replace("&#x27;", "'")


def test_landing_page_style_targets_snakemakes_content_pane(landing):
    """The description's stylesheet top-aligns the pane Snakemake centres vertically (whose top
    is otherwise out of scroll reach when the page is taller than the window) and caps the rule
    graph; its selectors must match the installed report template's classes and ids."""
    style = re.search(r"<style>(.*?)</style>", landing, re.S)
    assert style, "the landing description carries no stylesheet"
    style = style.group(1)
    style = re.sub(r"/\*.*?\*/", "", style, flags=re.S)
    rules = {sel.strip(): body for sel, body in re.findall(r"([^{}]+)\{([^}]*)\}", style)}
    pane = next(sel.strip() for sel, body in rules.items() if "align-items: flex-start" in body)
    assert "overflow: auto" in rules["#rulegraph"] and "max-height" in rules["#rulegraph"]
    content_js = (SNAKEMAKE_TEMPLATE / "components" / "content.js").read_text()
    classes = re.findall(r'className: "([^"]*)"', content_js)
    wanted = [c.lstrip(".") for c in pane.split()[-1].split(".") if c]
    centred = [c.split() for c in classes if set(wanted) <= set(c.split())]
    assert len(centred) == 1 and "items-center" in centred[0], \
        f"{pane!r} matches no single pane of Snakemake's report template"
    assert 'id: "rulegraph"' in (SNAKEMAKE_TEMPLATE / "components" / "rule_graph.js").read_text()
