"""Reproduction targets and the ours-vs-paper table."""
import csv
import re
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from milbench.report.reproduction import reproduction_table
from milbench.report.targets import (
    EXPERIMENTS,
    TABLE_COLUMNS,
    TARGETS_DIR,
    TOLERANCE,
    TargetError,
    load_targets,
    targets,
)

from conftest import REPO

PAPERS = REPO.parent / "shared" / "papers"


def _t(exp, **kw):
    t = targets(exp)
    for k, v in kw.items():
        t = t[t[k] == v]
    return t


def test_targets_cover_the_five_papers():
    t = targets()
    assert set(t["experiment"]) == set(EXPERIMENTS)
    assert set(t["kind"]) == {"value", "reference", "statistic", "qualitative", "unavailable"}
    assert not t.duplicated(["experiment", "source", "dataset", "paper_method", "metric"]).any()
    v = t[t["kind"] == "value"]
    assert v["target"].between(0, 1).all() and v["tolerance"].notna().all()
    assert targets("hydr-mi").equals(targets("hydr"))
    assert targets("cvfs-mil").equals(targets("cvfs"))
    with pytest.raises(KeyError):
        targets("nonsense")


@pytest.mark.parametrize("method,values", [
    ("ORI", [.916, .927, .921, .694, .946]), ("PCA", [.916, .921, .922, .695, .930]),
    ("LDA", [.791, .813, .902, .587, .850]), ("MIDR", [.946, .955, .943, .778, .950])])
def test_spec_midr_targets(method, values):
    t = _t("midr", paper_method=method, metric="auroc").set_index("dataset")
    assert t.loc[["musk1", "musk2", "elephant", "fox", "tiger"], "target"].tolist() == values


def test_spec_milsd_targets():
    acc = _t("milsd", metric="accuracy").set_index(["dataset", "paper_method"])["target"]
    assert acc[("course", "B-MILSD")] == pytest.approx(.972)
    assert acc[("faculty", "B-MILSD")] == pytest.approx(.952)
    assert acc[("student", "B-MILSD")] == pytest.approx(.927)
    assert [acc[("protein", m)] for m in ("B-MILSD", "LC-MF", "I-miSVM", "B-miSVM")] == \
        pytest.approx([.962, .952, .922, .827])
    sec = _t("milsd", metric="fit_seconds", dataset="protein", paper_method="B-MILSD")
    assert sec["target"].item() == 1.7 and sec["kind"].item() == "reference"
    ascot = _t("milsd", dataset="ascot")
    assert len(ascot) == 8 and (ascot["kind"] == "unavailable").all()
    assert _t("milsd", dataset="course")["train_ratio"].eq(0.2).all()


def test_spec_miordm_targets():
    acc = _t("miordm", metric="accuracy", source="Table 3").set_index(
        ["paper_method", "dataset"])["target"]
    spec = {"MIORDM": dict(musk1=.759, musk2=.733, tiger=.831, elephant=.796, fox=.583,
                           faculty=.938),
            "C-KNN": dict(musk1=.873, musk2=.814, tiger=.748, elephant=.784, fox=.594),
            "EMDD": dict(musk1=.830, musk2=.803, tiger=.714, elephant=.791, fox=.593)}
    for m, vals in spec.items():
        for d, v in vals.items():
            assert acc[(m, d)] == pytest.approx(v, abs=6e-4)      # 4-digit table vs the paper
    auc = _t("miordm", metric="auroc", paper_method="MIORDM", dataset="faculty")
    assert auc["target"].item() == 0.9375 and auc["target_std"].item() == 0.0186


def test_hydr_targets_tables():
    t = targets("hydr")
    acc = t[t["metric"] == "accuracy"]
    # Tables 7-11: 17 classifiers x 3 settings x 5 data sets; Tables 2-5: x 4 metrics x 6 %
    assert (acc["source"].isin([f"Table {i}" for i in range(7, 12)])).sum() == 17 * 3 * 5
    assert (acc["source"].isin([f"Table {i}" for i in range(2, 6)])).sum() == 17 * 4 * 6 * 5
    row = acc[(acc["dataset"] == "elephant")
              & (acc["paper_method"] == "HyDR-MI + citationKNN")].iloc[0]
    assert row["target"] == 0.814 and row["classifier"] == "citation-knn"
    nf = t[(t["metric"] == "n_features") & (t["paper_method"] == "ReliefF-MI + MDD")]
    assert set(nf["target"]) == {115, 83}          # 50 % of 230 and of 166 features
    row = acc[(acc["dataset"] == "musk2")
              & (acc["paper_method"] == "ReliefF-MI (min, 60 %) + MISimple (PART)")].iloc[0]
    assert row["target"] == 0.770 and '"sel.percent": 0.6' in row["params"]


def test_cvfs_is_qualitative():
    t = targets("cvfs")
    assert (t["kind"] == "qualitative").all() and t["target"].isna().all()
    assert {"corel", "reddit"} == set(t["dataset"])


def _summary(rows):
    base = dict(selector="none", classifier="milr", n=50)
    return pd.DataFrame([{**base, **r} for r in rows])


def test_run_without_targets_writes_one_row_saying_why(tmp_path, monkeypatch):
    """The reproduction rule's script on an experiment without paper targets: its declared
    output holds one row whose status says there is nothing to compare, not a bare header;
    an experiment with targets gets its target rows only."""
    import runpy
    import sys
    from types import SimpleNamespace

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)     # the script's log setup sets it
    monkeypatch.syspath_prepend(str(REPO / "workflow" / "scripts"))
    summary = tmp_path / "summary.csv"
    _summary([dict(dataset="musk1", method="none+milr", auroc_mean=0.9)]).to_csv(summary,
                                                                              index=False)

    def run(experiment):
        out = tmp_path / experiment / "reproduction.csv"
        out.parent.mkdir()
        smk = SimpleNamespace(input=[str(summary)], output=[str(out)], log=[],
                              rule="reproduction", params=SimpleNamespace(mapping={}),
                              wildcards=SimpleNamespace(experiment=experiment))
        runpy.run_path(str(REPO / "workflow/scripts/reproduction.py"),
                       init_globals={"snakemake": smk})
        return pd.read_csv(out)

    table = run("quickstart")
    assert list(table.columns) == TABLE_COLUMNS and len(table) == 1
    assert table["status"].iloc[0].startswith("no paper targets for experiment 'quickstart': "
                                              "it is not a paper's configuration")
    assert table.drop(columns="status").isna().all(axis=None)
    midr = run("midr")
    assert len(midr) == len(reproduction_table(pd.read_csv(summary), "midr"))
    assert not midr["status"].str.startswith("no paper targets").any()


def test_reproduction_table_matching_and_statuses():
    s = _summary([
        dict(dataset="musk1", method="none+milr", auroc_mean=0.92, auroc_std=0.01,
             fit_seconds_mean=3.0),
        dict(dataset="musk1", method="midr(dims=0.3)+milr", selector="midr",
             auroc_mean=0.90, auroc_std=0.02, **{"sel.dims": 0.3}),
        dict(dataset="musk1", method="midr(dims=0.5)+milr", selector="midr",
             auroc_mean=0.95, auroc_std=0.02, **{"sel.dims": 0.5}),
        dict(dataset="fox", method="pca(dims=0.3)+milr", selector="pca", auroc_mean=0.7,
             **{"sel.dims": 0.3}),
        dict(dataset="fox", method="pca(dims=0.3,whiten)+milr", selector="pca",
             auroc_mean=0.6, **{"sel.dims": 0.3}),
        dict(dataset="elephant", method="lda+milr", selector="lda", auroc_mean=np.nan),
    ])
    r = reproduction_table(s, "midr").set_index(["paper_method", "dataset", "metric"])
    ori = r.loc[("ORI", "musk1", "auroc")]
    assert ori["ours"] == 0.92 and ori["our_method"] == "none+milr"
    assert ori["difference"] == pytest.approx(0.92 - 0.916)
    assert ori["within_tolerance"] is True and ori["status"] == "within tolerance"
    assert ori["tolerance"] == TOLERANCE["auroc"]
    # the params hint picks the 30 % run out of two MIDR runs
    midr = r.loc[("MIDR", "musk1", "auroc")]
    assert midr["our_method"] == "midr(dims=0.3)+milr"
    assert midr["within_tolerance"] is False and midr["status"] == "outside tolerance"
    assert r.loc[("MIDR", "musk2", "auroc"), "status"] == "not run"
    assert r.loc[("PCA", "fox", "auroc"), "status"].startswith("ambiguous: 2 runs")
    assert r.loc[("LDA", "elephant", "auroc"), "status"].startswith("not measured")
    t = r.loc[("ORI", "musk1", "fit_seconds")] if ("ORI", "musk1", "fit_seconds") in r.index \
        else None
    assert t is None                               # Table 2 has no ORI time
    lda_t = r.loc[("LDA", "elephant", "fit_seconds")]
    assert lda_t["status"] == "not measured (no fit_seconds_mean in the summary)"
    # reproduction_map resolves the ambiguity; a tolerance override changes the verdict
    r2 = reproduction_table(s, "midr", reproduction_map={"PCA": "pca(dims=0.3)+milr"},
                            tolerance={"auroc": 0.01}).set_index(["paper_method", "dataset",
                                                                  "metric"])
    pca = r2.loc[("PCA", "fox", "auroc")]
    assert pca["our_method"] == "pca(dims=0.3)+milr" and pca["ours"] == 0.7
    assert pca["within_tolerance"] is True           # |0.7 - 0.695| <= 0.01
    assert r2.loc[("ORI", "musk1", "auroc"), "within_tolerance"] is True
    r3 = reproduction_table(s, "midr", tolerance=0.001)
    assert not r3[r3["our_method"] == "none+milr"]["within_tolerance"].iloc[0]


def test_friedman_rank_statistics_rank_the_papers_methods_on_our_data_sets():
    """A paper's Friedman ranks (highest = best) get ours: each of the paper's methods ranked
    among them by the metric on every data set where all ran, ties sharing the mean rank;
    worked by hand on two data sets. A paper method not run leaves the statistic unfilled."""
    names = ["kisvm", "emdd", "citation-knn", "mildm", "mirsvm", "miordm"]
    rows = [dict(dataset="tiger", method=c, classifier=c, accuracy_mean=a)
            for c, a in zip(names, [.1, .2, .3, .4, .5, .6])]
    rows += [dict(dataset="fox", method=c, classifier=c, accuracy_mean=a)
             for c, a in zip(names, [.5, .5, .5, .5, .5, .1])]
    rows.append(dict(dataset="musk1", method="miordm", classifier="miordm", accuracy_mean=.9))
    r = reproduction_table(_summary(rows), "miordm").set_index(["paper_method", "metric"])
    expect = {"KISVM": 2.5, "EMDD": 3.0, "C-KNN": 3.5, "aMILGDM": 4.0, "MIRSVM": 4.5,
              "MIORDM": 3.5}       # tiger 1..6; fox: MIORDM 1, the others tied at 4
    for paper_method, rank in expect.items():
        row = r.loc[(paper_method, "friedman_rank_accuracy")]
        assert row["ours"] == pytest.approx(rank) and row["n"] == 2, paper_method
        assert row["status"] == ("statistic (not judged): our mean rank among the paper's 6 "
                                 "methods over our 2 data sets, highest = best")
        assert pd.isna(row["difference"])
    auroc = r.loc[("MIORDM", "friedman_rank_auroc")]
    assert pd.isna(auroc["ours"]) and auroc["status"] == "statistic: compare with the stats/ tables"
    r = reproduction_table(_summary(rows[1:]), "miordm").set_index(["paper_method", "metric"])
    assert r.loc[("MIORDM", "friedman_rank_accuracy"), "n"] == 1       # fox only: KI-SVM's
    no_kisvm = [x for x in rows if x["classifier"] != "kisvm"]
    r = reproduction_table(_summary(no_kisvm), "miordm").set_index(["paper_method", "metric"])
    assert pd.isna(r.loc[("MIORDM", "friedman_rank_accuracy"), "ours"])   # KI-SVM not run


def test_reproduction_table_datasets_ratios_and_unavailable():
    s = _summary([
        dict(dataset="webkb-course", method="b-milsd", classifier="milsd", train_ratio=0.2,
             accuracy_mean=0.95, accuracy_std=0.01, fit_seconds_mean=10.0),
        dict(dataset="webkb-course", method="b-milsd", classifier="milsd", train_ratio=0.5,
             accuracy_mean=0.99, accuracy_std=0.01, fit_seconds_mean=20.0),
        dict(dataset="trx", method="b-milsd", classifier="milsd", accuracy_mean=0.9),
    ])
    r = reproduction_table(s, "milsd", dataset_map={"trx": "protein"})
    course = r[(r["dataset"] == "course") & (r["metric"] == "accuracy")].iloc[0]
    assert course["ours"] == 0.95 and course["difference"] == pytest.approx(0.95 - 0.972)
    assert course["within_tolerance"] is True
    t = r[(r["dataset"] == "course") & (r["metric"] == "fit_seconds")].iloc[0]
    assert t["ours"] == 10.0 and t["status"] == "reference only (not judged)"
    assert pd.isna(t["within_tolerance"])
    prot = r[(r["dataset"] == "protein") & (r["paper_method"] == "B-MILSD")
             & (r["metric"] == "accuracy")].iloc[0]
    assert prot["ours"] == 0.9 and prot["within_tolerance"] is False
    assert r[r["dataset"] == "faculty"]["status"].eq("not run").all()
    graph = _summary([dict(dataset="protein-graph", method="b-milsd", classifier="milsd",
                           accuracy_mean=0.93)])        # the chain's name needs no map
    r_graph = reproduction_table(graph, "milsd")
    assert r_graph[(r_graph["dataset"] == "protein") & (r_graph["paper_method"] == "B-MILSD")
                   & (r_graph["metric"] == "accuracy")]["ours"].iloc[0] == 0.93
    ascot = r[r["dataset"] == "ascot"]
    assert len(ascot) == 8 and ascot["status"].str.startswith("cannot be reproduced").all()
    assert ascot["ours"].isna().all()


def test_reproduction_table_hydr_and_cvfs_rows():
    s = _summary([dict(dataset="fox", method="hydr+cknn", selector="hydr-mi",
                       classifier="citation-knn", accuracy_mean=0.66)])
    r = reproduction_table(s, "hydr")
    row = r[(r["paper_method"] == "HyDR-MI + citationKNN") & (r["dataset"] == "fox")
            & (r["metric"] == "accuracy")].iloc[0]
    assert row["ours"] == 0.66 and row["paper_value"] == 0.648 and row["within_tolerance"]
    assert (r["kind"] == "statistic").sum() == 36
    assert r[r["kind"] == "statistic"]["status"].str.startswith("statistic").all()
    c = reproduction_table(s, "cvfs")
    assert len(c) == 9 and c["status"].str.startswith("qualitative").all()


def test_experiment_without_targets_and_mapping_alias():
    s = _summary([dict(dataset="musk1", method="x", accuracy_mean=0.5)])
    empty = reproduction_table(s, "quickstart")
    assert empty.empty and "within_tolerance" in empty.columns
    s = _summary([dict(dataset="musk1", method="mine", selector="pca", auroc_mean=0.9),
                  dict(dataset="musk1", method="mine2", selector="pca", auroc_mean=0.8)])
    r = reproduction_table(s, "midr", mapping={"PCA": "mine2"})
    row = r[(r["paper_method"] == "PCA") & (r["dataset"] == "musk1")
            & (r["metric"] == "auroc")].iloc[0]
    assert row["our_method"] == "mine2" and row["ours"] == 0.8


@pytest.mark.parametrize("caption", ["summary", "stats", "figures", "reproduction"])
def test_report_captions_render(caption):
    """Captions are Jinja + reStructuredText as rendered by `snakemake --report`."""
    from pathlib import Path
    from types import SimpleNamespace

    from docutils.core import publish_parts  # both ship with snakemake (its --report)
    from jinja2 import Environment

    text = (Path(__file__).resolve().parents[1] / "workflow" / "report"
            / f"{caption}.rst").read_text()
    env = Environment(trim_blocks=True, lstrip_blocks=True)
    names = {"stats": ["paired-t_accuracy", "wilcoxon_auroc", "ranksum_accuracy",
                       "friedman_accuracy", "friedman_accuracy_ranks",
                       "friedman_accuracy_nemenyi", "friedman_accuracy_excluded", "custom"],
             "figures": ["cd_accuracy", "vs-features_auroc", "vs-ratio_accuracy",
                         "heatmap_accuracy", "runtime_fit_cpu_seconds", "other"]}.get(caption, [None])
    bodies = set()
    for name in names:
        wc = SimpleNamespace(experiment="midr", **({"name": name} if name else {}))
        rst = env.from_string(text).render(snakemake=SimpleNamespace(wildcards=wc))
        assert "midr" in rst
        html = publish_parts(rst, writer="html",
                             settings_overrides={"halt_level": 2, "report_level": 5})["body"]
        assert "system-message" not in html
        bodies.add(html)
    assert len(bodies) == len(names)          # a distinct caption per table / figure kind


def test_report_front_page_lists_the_experiments():
    """workflow/report/workflow.rst, the page `snakemake --report` opens on: every experiment of
    the default config with its description, linked when it has results."""
    from pathlib import Path
    from types import SimpleNamespace

    from docutils.core import publish_parts
    from jinja2 import Environment

    from milbench.experiment.config import load_config

    repo = Path(__file__).resolve().parents[1]
    cfg = load_config(repo / "config" / "config.yaml")
    text = (repo / "workflow" / "report" / "workflow.rst").read_text()
    rst = Environment(trim_blocks=True, lstrip_blocks=True).from_string(text).render(
        snakemake=SimpleNamespace(config=cfg), categories=[SimpleNamespace(name="imbalanced")])
    html = publish_parts(rst, writer="html", settings_overrides={
        "halt_level": 5, "report_level": 5})["body"]
    for name, exp in cfg["experiments"].items():
        assert name in html and " ".join(exp["description"].split())[:40] in html
    assert "quickstart</strong> (no results in this report)" in html
    assert "warnings" in html


def test_reproduction_map_either_direction_and_ratio_protocol():
    s = _summary([dict(dataset="tiger", method="none + miordm(lam=512)", classifier="miordm",
                       accuracy_mean=0.82),
                  dict(dataset="tiger", method="none + kisvm()", classifier="kisvm",
                       accuracy_mean=0.70),
                  dict(dataset="tiger", method="none + emdd()", classifier="emdd",
                       train_ratio=0.5, accuracy_mean=0.70)])
    # {ours: paper (comment)} as written in config/paper/miordm.yaml
    r = reproduction_table(s, "miordm", reproduction_map={
        "miordm": "MIORDM (Tables 3-5)", "kisvm": "KISVM (bag level; alternating)"})
    r = r[(r["dataset"] == "tiger") & (r["metric"] == "accuracy")
          & (r["source"] == "Table 3")].set_index("paper_method")
    assert r.loc["MIORDM", "our_method"] == "none + miordm(lam=512)"
    assert r.loc["MIORDM", "within_tolerance"] is True          # |0.82 - 0.8305| <= 0.03
    assert r.loc["KISVM", "ours"] == 0.70
    # a training-ratio run is not the 80/20 protocol of Table 3
    assert r.loc["EMDD", "status"] == "not run"


def test_target_files_validate_and_make_the_targets():
    """Every data file passes the schema; the files are exactly the five experiments' (and
    the claims of the five papers)."""
    assert sorted(p.stem for p in TARGETS_DIR.glob("*.csv")) == sorted(EXPERIMENTS)
    assert sorted(p.stem for p in TARGETS_DIR.glob("*.yaml")) == sorted([*EXPERIMENTS, "claims",
                                                                         "schema"])
    for e in EXPERIMENTS:
        t = load_targets(e)
        assert t.equals(targets(e))
        assert t["reference"].str.fullmatch(r"[\w-]+\.txt line \d+").all()


@pytest.mark.parametrize("experiment", [e for e in EXPERIMENTS if e != "cvfs"])
def test_every_number_is_printed_in_its_table(experiment):
    """Oracle: each value and std, as written in the CSV, appears in the paper's text between
    its table's caption and the next caption (90 lines after the last one)."""
    if not PAPERS.exists():
        pytest.skip("../shared/papers absent (fresh clone)")
    meta = yaml.safe_load((TARGETS_DIR / f"{experiment}.yaml").read_text())
    lines = (PAPERS / meta["text"]).read_text().splitlines()
    starts = sorted(meta["tables"].values())
    with open(TARGETS_DIR / f"{experiment}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for i, r in enumerate(rows, start=2):
        first = meta["tables"][r["source"]]
        last = next((s for s in starts if s > first), first + 90)
        region = "\n".join(lines[first - 1:last - 1])
        for field in ("value", "std"):
            if r[field]:
                number = re.escape(r[field]).replace("0\\.", "0?\\.", 1) \
                    if r[field].startswith("0.") else re.escape(r[field])      # 0.916 or .916
                assert re.search(rf"(?<![\d.]){number}(?!\d)", region), \
                    (f"{experiment}.csv line {i}: {field} {r[field]} not in {meta['text']} "
                     f"lines {first}-{last - 1}")


@pytest.mark.parametrize("line,column,bad,message", [
    (36, "value", "abc", "value: 'abc' is not of type 'number'"),
    (36, "value", "", "'value' is a required property"),
    (36, "value", "73.0", "value: 73.0 is greater than the maximum of 1"),   # a percentage
    (36, "kind", "guess", "kind: 'guess' is not one of"),
    (36, "protocol", "nope", "protocol 'nope' is not a key of protocols in hydr.yaml"),
    (36, "source", "Table 99", "source 'Table 99' is not a key of tables in hydr.yaml"),
    (36, "paper_method", "HyDR-MI + MIXYZ", "paper_method 'HyDR-MI + MIXYZ' is in neither"),
    (38, "paper_method", "Full Features + MIEMDD", "same target as line 36"),
])
def test_a_bad_row_names_file_line_and_expectation(tmp_path, line, column, bad, message):
    meta = yaml.safe_load((TARGETS_DIR / "hydr.yaml").read_text())
    del meta["gaps"]                                    # they explain targets cut below
    (tmp_path / "hydr.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    with open(TARGETS_DIR / "hydr.csv", newline="") as f:
        good = list(csv.reader(f))[:40]                 # the first 39 targets load quickly

    def write(rows):
        with open(tmp_path / "hydr.csv", "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)

    write(good)
    assert len(load_targets("hydr", tmp_path)) == 39
    rows = [list(r) for r in good]
    rows[line - 1][good[0].index(column)] = bad
    write(rows)
    with pytest.raises(TargetError, match=re.escape(f"hydr.csv, line {line}: ") + ".*"
                       + re.escape(message)):
        load_targets("hydr", tmp_path)


def test_bad_header_and_bad_method_map(tmp_path):
    for p in TARGETS_DIR.glob("midr.*"):
        shutil.copy(p, tmp_path / p.name)
    meta = yaml.safe_load((tmp_path / "midr.yaml").read_text())
    meta["methods"]["PCA"]["params"] = {"sel.dims": [0.3]}
    text = yaml.safe_dump(meta)
    (tmp_path / "midr.yaml").write_text(text)
    line = text.splitlines().index("      sel.dims:") + 1            # the list-valued hint
    with pytest.raises(TargetError,
                       match=rf"midr.yaml, line {line}: methods/PCA/params/sel.dims: \[0.3\]"):
        load_targets("midr", tmp_path)
    shutil.copy(TARGETS_DIR / "midr.yaml", tmp_path / "midr.yaml")
    text = (tmp_path / "midr.csv").read_text().replace("value,unit", "value,units", 1)
    (tmp_path / "midr.csv").write_text(text)
    with pytest.raises(TargetError, match=r"midr.csv, line 1: header"):
        load_targets("midr", tmp_path)
    lines = (TARGETS_DIR / "midr.csv").read_text().splitlines()
    lines[4] = lines[4].rsplit(",", 1)[0]                # line 5 lacks its last field
    (tmp_path / "midr.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(TargetError, match=r"midr.csv, line 5: expected 12 fields"):
        load_targets("midr", tmp_path)


def test_an_erratum_is_a_data_change(tmp_path):
    """A corrected number in the CSV reaches the targets; percent values are scaled."""
    for p in TARGETS_DIR.glob("milsd.*"):
        shutil.copy(p, tmp_path / p.name)
    text = (tmp_path / "milsd.csv").read_text()
    (tmp_path / "milsd.csv").write_text(text.replace("course,B-MILSD,accuracy,97.2,%",
                                                     "course,B-MILSD,accuracy,96.5,%"))
    key = ["dataset", "paper_method", "metric"]
    t = load_targets("milsd", tmp_path).set_index(key)
    assert t.loc[("course", "B-MILSD", "accuracy"), "target"] == pytest.approx(0.965)
    assert t.loc[("faculty", "B-MILSD", "accuracy"), "target"] == targets("milsd").set_index(
        key).loc[("faculty", "B-MILSD", "accuracy"), "target"]


def test_composite_hydr_label_matches_one_run():
    """"<selector part> + <classifier part>" labels take both parts' parameter hints: the
    min-Hausdorff 10 % MIWrapper (SMO) run matches Table 2 only, not the 50 % or NB runs."""
    base = dict(dataset="tiger", selector="relieff-mi", classifier="mi-wrapper", n=10)
    s = pd.DataFrame([
        {**base, "method": "r10-svm", "sel.metric": "min", "sel.percent": 0.1,
         "clf.estimator": "linear-svm", "accuracy_mean": 0.84},
        {**base, "method": "r10-nb", "sel.metric": "min", "sel.percent": 0.1,
         "clf.estimator": "naive-bayes", "accuracy_mean": 0.70},
        {**base, "method": "r50-svm", "sel.metric": "adapted", "sel.percent": 0.5,
         "clf.estimator": "linear-svm", "accuracy_mean": 0.79}])
    r = reproduction_table(s, "hydr").set_index(["paper_method", "dataset", "metric"])
    smo = r.loc[("ReliefF-MI (min, 10 %) + MIWrapper (SMO)", "tiger", "accuracy")]
    assert smo["our_method"] == "r10-svm" and smo["paper_value"] == 0.835
    assert smo["difference"] == pytest.approx(0.005) and smo["within_tolerance"] is True
    nb = r.loc[("ReliefF-MI (min, 10 %) + MIWrapper (Naive Bayes)", "tiger", "accuracy")]
    assert nb["our_method"] == "r10-nb" and nb["paper_value"] == 0.815
    assert nb["within_tolerance"] is False
    table8 = r.loc[("ReliefF-MI + MIWrapper (SMO)", "tiger", "accuracy")]
    assert table8["our_method"] == "r50-svm" and table8["paper_value"] == 0.800
    assert r.loc[("ReliefF-MI (max, 10 %) + MIWrapper (SMO)", "tiger", "accuracy"),
                 "status"] == "not run"
