"""Reproduction pages generated from the targets and the archive; the archive command; the
gap explanations' schema check; the legacy rows transcribed, not invented."""
import re
import shutil
import subprocess

import pandas as pd
import pytest
import yaml

from milbench.report.reproduction import main, reproduction_table
from milbench.experiment.finished_cells import EARLIER_CPU
from milbench.report.reproduction_archive import (
    ARCHIVE_DIR,
    ArchiveError,
    archive,
    cpu_seconds,
    load_archive,
)
from milbench.report.reproduction_compare import compare
from milbench.report.reproduction_docs import COMMAND, DOCS_DIR, pages
from milbench.report.targets import TARGETS_DIR, TargetError, load_gaps

from conftest import MIDR_RUN, REPO

PAPERS = ("cvfs", "hydr", "midr", "milsd", "miordm")
LEGACY = re.compile(r"legacy: measured in earlier runs, outputs not archived; rerun `(.+)` "
                    r"(\(.+\) )?to regenerate")


@pytest.fixture(scope="module")
def generated():
    return pages()


def test_committed_pages_are_the_generated_ones(generated, tmp_path):
    """docs/reproduction/*.md equal what the archive and the targets give today."""
    main(["docs", "--out", str(tmp_path)])
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == generated
    committed = {p.name: p.read_text(encoding="utf-8") for p in DOCS_DIR.glob("*.md")}
    assert sorted(committed) == sorted(generated) == sorted([*(f"{p}.md" for p in PAPERS),
                                                             "index.md"])
    stale = [name for name in generated if committed[name] != generated[name]]
    assert not stale, f"docs/reproduction/{', '.join(stale)} out of date: run `{COMMAND}`"


def test_pages_name_no_commit_or_issue(generated):
    for name, text in generated.items():
        assert not re.search(r"(?<![\w-])#\d+\b|\bissue\b", text, re.I), name
        assert not re.search(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b", text), name


def test_index_counts_each_paper(generated):
    index = generated["index.md"]
    for p in PAPERS:
        line = next(x for x in index.splitlines() if x.startswith(f"| [{p}]({p}.md)"))
        met, judged = (int(v) for v in line.split(" | ")[3].split(" / "))
        assert 0 <= met <= judged
    midr = next(x for x in index.splitlines() if x.startswith("| [midr]"))
    # the FULL run MIDR_RUN answers all 35 targets (Table 1's 20 and Table 2's 15), so its rows
    # rank above the legacy runs' 15 ORI, PCA and MIDR rows; 10 of Table 1's 20 are within .03
    assert midr.split(" | ")[2:8] == ["not supported", "10 / 20", "35", "0", "0", "0"]


def _dots(*values):
    """Numbers below 1 as the notes print them (.ddd), joined by "-"."""
    return "-".join(f"{v:.3f}".replace("0.", ".", 1) for v in values)


def _gap_text(paper, run):
    """The text of ``paper``'s gap note on the archived ``run``, on one line."""
    gaps = yaml.safe_load((TARGETS_DIR / f"{paper}.yaml").read_text())["gaps"]
    return " ".join(next(g["text"] for g in gaps if g.get("runs") == [run]).split())


def test_midr_gap_note_quotes_the_full_run():
    """The gap note on Table 1's MIDR rows (resources/targets/midr.yaml) quotes the archived
    FULL run: each "<data set> ±.ddd" is our MIDR minus our ORI at 30 % there, and the paper's
    MIDR - ORI range beside it is the targets'."""
    table = pd.read_csv(REPO / "resources" / "reproductions" / "midr" / f"{MIDR_RUN}.csv")
    t1 = table[(table.source == "Table 1") & (table.metric == "auroc")]
    ours = t1.pivot(index="dataset", columns="paper_method", values="ours")
    paper = t1.pivot(index="dataset", columns="paper_method", values="paper_value")
    note = _gap_text("midr", MIDR_RUN)
    quoted = dict(re.findall(r"(musk1|musk2|elephant|fox|tiger) ([+-]\.\d{3})", note))
    assert sorted(quoted) == sorted(ours.index)
    for ds, diff in quoted.items():
        assert float(diff) == pytest.approx(ours.MIDR[ds] - ours.ORI[ds], abs=6e-4), ds
    lift = paper.MIDR - paper.ORI
    assert _dots(lift.min(), lift.max()) in note
    gap = paper.ORI - ours.ORI
    assert _dots(gap.min(), gap.max()) in note


WEBKB = ("course", "faculty", "student")
WEBKB_LABELS = {"B-MILSD": "milsd", "LC-MF": "lcmf", "I-miSVM": "mi-svm", "B-miSVM": "MI-svm"}


def test_milsd_webkb_notes_quote_the_full_run():
    """Every "<method> .ddd / .ddd / .ddd" (course / faculty / student) that the milsd-table2
    gap note and the milsd claims quote is that method's mean accuracy over the 20 splits in
    the archived run's fold scores."""
    scores = pd.read_csv(REPO / "resources" / "reproductions" / "milsd" / "milsd-table2"
                         / "scores.csv.gz")
    scores["label"] = scores.method.str.extract(r"^none \+ ([\w-]+)\(", expand=False)
    mean = scores.groupby(["label", "dataset"]).accuracy.mean()
    gaps = yaml.safe_load((TARGETS_DIR / "milsd.yaml").read_text())["gaps"]
    claims = yaml.safe_load((TARGETS_DIR / "claims.yaml").read_text())["milsd"]
    texts = [g["text"] for g in gaps if g.get("runs") == ["milsd-table2"]]
    texts += [c["test"]["why"] for c in claims["claims"] if c.get("headline")]
    texts += [n["why"] for n in claims["not_compared"] if "WebKB" in n["source"]]
    quoted = 0
    for text in texts:
        for label, *values in re.findall(r"(B-MILSD|LC-MF|I-miSVM|B-miSVM) (\.\d{3}) / "
                                         r"(\.\d{3}) / (\.\d{3})", " ".join(text.split())):
            for task, value in zip(WEBKB, values):
                assert float(value) == pytest.approx(
                    mean[WEBKB_LABELS[label], f"webkb-{task}"], abs=6e-4), (label, task)
                quoted += 1
    assert quoted >= 4 * len(WEBKB)          # each of the four methods, once at least
    table = pd.read_csv(REPO / "resources" / "reproductions" / "milsd" / "milsd-table2.csv")
    acc = table[table.metric == "accuracy"].dropna(subset=["ours"])
    for method, text in zip(("B-MILSD", "I-miSVM"), texts):     # "<lo>-<hi> below" the paper
        below = acc[acc.paper_method == method].eval("paper_value - ours")
        assert f"{_dots(below.min(), below.max())} below" in text, method


# ----------------------------------------------------------------------------- legacy rows
def _numbers(text):
    return re.findall(r"(?<![\d.])\.?\d+(?:\.\d+)?", text)


def _printed(number, text):
    return re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", text) is not None


@pytest.mark.parametrize("paper", PAPERS)
def test_legacy_numbers_are_the_readme_rows(paper):
    """Oracle against inventing: each number of a legacy row is printed in the README row its
    sidecar quotes (ours and its std in the row's "ours" cell); the provenance says how to
    regenerate it."""
    runs = [r for r in load_archive(paper) if r.legacy]
    assert runs
    for run in runs:
        quote = run.meta["readme"]
        assert LEGACY.fullmatch(run.meta["provenance"]), run.name
        everything = " ".join(quote.values())
        for row in run.rows.to_dict("records"):
            where = f"{run.csv_path}, line {row['line']}"
            for col in ("ours_text", "ours_std_text"):
                if row[col]:
                    assert _printed(row[col], quote["ours"]), f"{where}: {row[col]}"
            assert row["ours_text"] or row["finding"], where
            for n in _numbers(row["finding"]):
                assert _printed(n, everything), f"{where}: {n} of the finding"


def test_every_gap_is_on_a_page(generated):
    for paper in PAPERS:
        page = generated[f"{paper}.md"]
        for g in load_gaps(paper):
            assert g["text"] in page, (paper, g["line"])


# ----------------------------------------------------------------------------- archive
def _repo(tmp_path):
    """A repository copy with the configs and the archive the test changes, and in it a
    legacy entry transcribed for the experiment miordm-20 (of the reduced config)."""
    repo = tmp_path / "repo"
    for rel in ("config/paper/miordm.yaml", "config/reduced/miordm-20-splits.yaml"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, repo / rel)
    store = repo / "resources" / "reproductions"
    shutil.copytree(ARCHIVE_DIR, store)
    old = store / "miordm" / "legacy-miordm-fixed-lambda"
    shutil.copy(old.with_suffix(".csv"), store / "miordm" / "legacy-miordm-20.csv")
    meta = yaml.safe_load(old.with_suffix(".yaml").read_text())
    (store / "miordm" / "legacy-miordm-20.yaml").write_text(
        yaml.safe_dump(dict(meta, experiments=["miordm-20"]), allow_unicode=True))
    return repo


def _finished_run(repo, experiment, accuracy, dataset="tiger"):
    """results/<experiment>/ as the workflow leaves it: reproduction.csv written as the
    rule's script writes it, and benchmark files with their CPU seconds."""
    results = repo / "results" / experiment
    results.mkdir(parents=True)
    summary = pd.DataFrame([dict(dataset=dataset, method="none + miordm", selector="none",
                                 classifier="miordm", n=20, accuracy_mean=accuracy,
                                 accuracy_std=0.05)])
    reproduction_table(summary, "miordm").to_csv(results / "reproduction.csv", index=False,
                                                 float_format="%.4f")
    bench = repo / "results" / "benchmarks" / experiment
    (bench / "runs" / "tiger" / "none").mkdir(parents=True)
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (bench / "runs" / "tiger" / "none" / "miordm.tsv").write_text(
        head + "70.0\t0:01:10\t300\t400\t300\t300\t1\t2\t95.0\t61.25\n")
    (bench / "scores.tsv").write_text(head + "2.0\t0:00:02\t100\t200\t100\t100\t0\t0\t50\t1.5\n")
    (bench / "figures.tsv").write_text(head + "1.0\t0:00:01\t100\t200\t100\t100\t0\t0\t50\tNA\n")
    return results


def test_a_jobs_cpu_is_at_least_its_rows_fits_when_its_benchmark_missed_workers(tmp_path):
    """A method job counts max(benchmark cpu_time + earlier attempts' cells, Σ fit + predict
    CPU of its rows, per-seed rows' shared fit once); other jobs their benchmark."""
    bench, runs = tmp_path / "benchmarks", tmp_path / "runs"
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"

    def job(name, bench_cpu, fits, earlier=None, seeds=1):
        (bench / "runs" / "tiger" / "none").mkdir(parents=True, exist_ok=True)
        (runs / "tiger" / "none").mkdir(parents=True, exist_ok=True)
        (bench / "runs" / "tiger" / "none" / f"{name}.tsv").write_text(
            head + f"30.0\t0:00:30\t1\t1\t1\t1\t0\t0\t90\t{bench_cpu}\n")
        rows = pd.DataFrame([dict(repeat=0, fold=k, seed=s, fit_cpu_seconds=f,
                                  predict_cpu_seconds=0.5)
                             for k, f in enumerate(fits) for s in range(seeds)])
        if earlier is not None:
            rows.attrs[EARLIER_CPU] = earlier
        rows.to_parquet(runs / "tiger" / "none" / f"{name}.parquet")

    job("workers", 30.5, [20.0, 24.5])          # workers missed: the rows' 45.5 s count
    job("sampled", 60.0, [20.0, 19.0])           # the benchmark's 60 s count
    job("resumed", 10.0, [5.0, 30.0], earlier=30.5)     # 10 + 30.5 from kept cells > 36
    job("per-seed", 1.0, [4.0], seeds=3)         # one cell: 4 + 0.5, not 3 x 4.5
    (bench / "scores.tsv").write_text(head + "2.0\t0:00:02\t1\t1\t1\t1\t0\t0\t50\t1.5\n")
    assert cpu_seconds(bench, runs) == 45.5 + 60.0 + 40.5 + 4.5 + 1.5
    assert cpu_seconds(bench) == 30.5 + 60.0 + 10.0 + 1.0 + 1.5


def test_archive_keeps_a_finished_run_and_the_pages_show_it(tmp_path, capsys):
    repo = _repo(tmp_path)
    store = repo / "resources" / "reproductions"
    # without the archived FULL faculty run, so that LEGACY is the faculty target's best status
    for kept in (store / "miordm").glob("miordm-faculty*"):
        shutil.rmtree(kept) if kept.is_dir() else kept.unlink()
    results = _finished_run(repo, "miordm-20", 0.8505, dataset="faculty")
    png = repo / "results" / "miordm-20" / "figures" / "cd_accuracy.png"
    png.parent.mkdir()
    png.write_bytes(b"\x89PNG\r\n\x1a\n")
    cfg = repo / "config" / "reduced" / "miordm-20-splits.yaml"
    csv_path, legacy = archive(results, cfg, store, figures=[f"Table 3={png}"],
                               date="2026-12-01", repo=repo)
    assert csv_path == store / "miordm" / "miordm-20.csv"
    assert csv_path.read_bytes() == (results / "reproduction.csv").read_bytes()   # as is
    assert legacy == ["legacy-miordm-20"]
    meta = yaml.safe_load(csv_path.with_suffix(".yaml").read_text())
    assert meta["status"] == "REDUCED" and meta["reduced"].startswith(
        "config/reduced/miordm-20-splits.yaml: miordm at 20 of the paper's 50 splits")
    assert meta["experiments"] == ["miordm-20"] and meta["cpu_seconds"] == 62.8
    assert meta["datasets"] == ["musk1", "musk2", "elephant", "fox", "tiger"]
    assert meta["date"] == "2026-12-01"
    assert meta["provenance"] == "archived from results/miordm-20/reproduction.csv"
    assert meta["command"].startswith("snakemake results/miordm-20/reproduction.csv --cores N "
                                      "--configfile config/reduced/miordm-20-splits.yaml")
    assert meta["command"].endswith(
        "&& python -m milbench.report.reproduction archive results/miordm-20 "
        "--config config/reduced/miordm-20-splits.yaml")
    assert meta["figures"] == [{"file": "cd_accuracy.png", "source": "Table 3"}]
    assert (store / "miordm" / "miordm-20" / "cd_accuracy.png").read_bytes() == png.read_bytes()
    assert "commit" not in meta                         # results outside a git work tree

    page = pages(archive_dir=store)["miordm.md"]
    row = next(x for x in page.splitlines()
               if x.startswith("| faculty | MIORDM | accuracy |") and "[miordm-20]" in x)
    cells = row.split(" | ")
    assert cells[4:9] == ["0.8505 ± 0.0500", "-0.087", "0.03", "no", "REDUCED"]
    assert "| 63 s |" in row
    assert "![cd_accuracy.png (beside the paper's Table 3)](../../resources/reproductions/" \
           "miordm/miordm-20/cd_accuracy.png)" in page
    # the best status of the faculty target is now REDUCED, ahead of the legacy result
    index = pages(archive_dir=store)["index.md"]
    line = next(x for x in index.splitlines() if x.startswith("| [miordm]"))
    assert line.split(" | ")[5] == "1"


def test_archive_status_cli_and_refusals(tmp_path, capsys):
    repo = _repo(tmp_path)
    store = repo / "resources" / "reproductions"
    # the reduced config's miordm-heatmap equals the paper's experiment: FULL
    heat = _finished_run(repo, "miordm-heatmap", 0.83)
    cfg = repo / "config" / "reduced" / "miordm-20-splits.yaml"
    path, legacy = archive(heat, cfg, store, repo=repo, date="2026-12-01")
    meta = yaml.safe_load(path.with_suffix(".yaml").read_text())
    assert meta["status"] == "FULL" and "reduced" not in meta
    assert legacy == []                     # the archived full run replaced its legacy entry
    m20 = _finished_run(repo, "miordm-20", 0.8)
    _, legacy = archive(m20, cfg, store, repo=repo, date="2026-12-01")
    assert legacy == ["legacy-miordm-20"]
    # --reduced overrides, and the regenerating command repeats it
    path, _ = archive(heat, cfg, store, reduced="one split", repo=repo, date="2026-12-01")
    meta = yaml.safe_load(path.with_suffix(".yaml").read_text())
    assert meta["status"] == "REDUCED" and meta["reduced"] == "one split"
    assert meta["command"].endswith("--reduced 'one split'")

    with pytest.raises(ArchiveError, match="no experiment 'miordm-nope'"):
        archive(_finished_run(repo, "miordm-nope", 0.8), cfg, store, repo=repo)
    outside = tmp_path / "elsewhere.yaml"
    shutil.copy(cfg, outside)
    with pytest.raises(ArchiveError, match="not a file of the repository"):
        archive(heat, outside, store, repo=repo)
    bad = repo / "results" / "miordm-bad"
    bad.mkdir(parents=True)
    (bad / "reproduction.csv").write_text("paper,source\nmiordm,Table 3\n")
    with pytest.raises(ArchiveError, match=r"reproduction.csv, line 1: header"):
        archive(bad, cfg, store, repo=repo)

    main(["archive", str(m20), "--config", str(REPO / "config/reduced/miordm-20-splits.yaml"),
          "--archive", str(store), "--date", "2026-12-02"])       # the config of this repo
    out = capsys.readouterr().out
    assert "legacy entry legacy-miordm-20 covers the same experiment" in out
    assert yaml.safe_load((store / "miordm" / "miordm-20.yaml").read_text())["date"] \
        == "2026-12-02"


def test_archive_remarks_the_synthetic_data_sets_of_a_run(tmp_path):
    """A run whose summary.csv marks a data set synthetic (a chain's generated stand-in, e.g.
    Reddit) is archived with a remark naming it, and its page shows the remark; a run on real
    data gets none."""
    repo = _repo(tmp_path)
    store = repo / "resources" / "reproductions"
    cfg = repo / "config" / "reduced" / "miordm-20-splits.yaml"
    results = _finished_run(repo, "miordm-heatmap", 0.83)
    pd.DataFrame({"dataset": ["tiger", "fox"], "synthetic": [True, False]}).to_csv(
        results / "summary.csv", index=False)
    path, _ = archive(results, cfg, store, repo=repo, date="2026-12-01")
    meta = yaml.safe_load(path.with_suffix(".yaml").read_text())
    assert meta["remark"].startswith("tiger: SYNTHETIC data")
    assert "- remark: tiger: SYNTHETIC data" in pages(archive_dir=store)["miordm.md"]
    pd.DataFrame({"dataset": ["tiger"], "synthetic": [False]}).to_csv(
        results / "summary.csv", index=False)
    path, _ = archive(results, cfg, store, repo=repo, date="2026-12-01")
    assert "remark" not in yaml.safe_load(path.with_suffix(".yaml").read_text())


def test_a_stale_archive_names_file_and_line(tmp_path):
    store = tmp_path / "archive"
    shutil.copytree(ARCHIVE_DIR, store)
    path = store / "midr" / "legacy-midr-grid5.csv"
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace(",musk2,", ",musk3,")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ArchiveError, match=r"legacy-midr-grid5.csv, line 3: no target "
                                           r"\{'source': 'Table 1', 'dataset': 'musk3'"):
        pages(archive_dir=store)
    shutil.rmtree(store / "midr")
    with pytest.raises(ArchiveError, match=r"midr.yaml, line \d+: gaps runs 'legacy-midr-grid5' "
                                           r"is not an archived run"):
        pages(archive_dir=store)


def test_a_bad_sidecar_names_file_line_and_expectation(tmp_path):
    store = tmp_path / "archive"
    shutil.copytree(ARCHIVE_DIR, store)
    side = store / "milsd" / "legacy-milsd-protein.yaml"
    text = side.read_text().replace("status: REDUCED", "status: HALF")
    side.write_text(text)
    line = text.splitlines().index("status: HALF") + 1
    with pytest.raises(ArchiveError, match=rf"legacy-milsd-protein.yaml, line {line}: status: "
                                           r"'HALF' is not one of \['FULL', 'REDUCED'\]"):
        load_archive("milsd", store)


# ----------------------------------------------------------------------------- gap schema
def _midr_with_gaps(tmp_path, block):
    for p in TARGETS_DIR.glob("midr.*"):
        shutil.copy(p, tmp_path / p.name)
    text = (TARGETS_DIR / "midr.yaml").read_text()
    head = text[:text.index("\n# Why our numbers differ")] + "\n"
    (tmp_path / "midr.yaml").write_text(head + block)
    return len(head.splitlines())              # the line before the block


@pytest.mark.parametrize("block,at,message", [
    ("gaps:\n  - targets:\n      - {source: Table 1, datset: fox}\n    text: x\n", 3,
     "gaps/0/targets/0: Additional properties are not allowed ('datset' was unexpected)"),
    ("gaps:\n  - targets:\n      - {source: Table 1, dataset: foxx}\n    text: x\n", 3,
     "gaps/0/targets/0/dataset: 'foxx' is not the dataset of any target in midr.csv"),
    ("gaps:\n  - targets:\n      - {source: Table 2, metric: auroc}\n    text: x\n", 3,
     "gaps/0/targets/0: no target of midr.csv has all of"),
    ("gaps:\n  - targets: []\n    text: x\n", 2, "gaps/0/targets: [] should be non-empty"),
    ("gaps:\n  - targets:\n      - {dataset: [fox, 7]}\n    text: x\n", 3,
     "gaps/0/targets/0/dataset/1: 7 is not of type 'string'"),
    ("gaps:\n  - targets:\n      - {dataset: fox}\n", 2, "gaps/0: 'text' is a required property"),
    ("gaps:\n  - targets:\n      - {dataset: fox}\n    runs: legacy-x\n    text: x\n", 4,
     "gaps/0/runs: 'legacy-x' is not of type 'array'"),
])
def test_a_bad_gap_names_file_line_and_expectation(tmp_path, block, at, message):
    before = _midr_with_gaps(tmp_path, block)
    with pytest.raises(TargetError, match=re.escape(f"midr.yaml, line {before + at}: {message}")):
        load_gaps("midr", tmp_path)


def test_a_good_gap_selects_its_targets(tmp_path):
    _midr_with_gaps(tmp_path, "gaps:\n  - targets:\n      - {paper_method: [ORI, PCA], "
                              "dataset: fox, metric: auroc}\n      - {source: Table 2, "
                              "dataset: fox, paper_method: MIDR}\n    runs: [r1]\n"
                              "    text: >-\n      two\n      lines\n")
    (g,) = load_gaps("midr", tmp_path)
    assert g["keys"] == [("Table 1", "fox", "ORI", "auroc"), ("Table 1", "fox", "PCA", "auroc"),
                         ("Table 2", "fox", "MIDR", "fit_seconds")]
    assert g["runs"] == ["r1"] and g["text"] == "two lines"


def test_compare_names_the_targets_a_rerun_changed(tmp_path, capsys):
    """`compare` matches a rerun's reproduction.csv with the archived run target by target:
    equal runs exit 0; a moved number (and a changed verdict) is listed, exit 1; a tolerance
    lets a small move pass; an experiment without an archived run exits 2, naming it."""
    repo = _repo(tmp_path)
    store = repo / "resources" / "reproductions"
    cfg = repo / "config" / "reduced" / "miordm-20-splits.yaml"
    archive(_finished_run(repo, "miordm-20", 0.9300, dataset="faculty"), cfg, store, repo=repo,
            date="2026-12-01")
    rerun = _finished_run(tmp_path / "rerun", "miordm-20", 0.9300, dataset="faculty")
    args = ["compare", str(rerun), "--archive", str(store)]
    main(args)
    assert re.match(r"experiment miordm-20: all \d+ paper targets equal to its archived run "
                    r"miordm/miordm-20.csv \(2026-12-01, REDUCED\)", capsys.readouterr().out)

    shutil.rmtree(tmp_path / "rerun")
    rerun = _finished_run(tmp_path / "rerun", "miordm-20", 0.9000, dataset="faculty")
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr().out
    assert e.value.code == 1 and out.startswith("experiment miordm-20: 1 of ")
    assert "paper targets differ" in out.splitlines()[0]
    line = next(x for x in out.splitlines() if "faculty" in x and "MIORDM" in x)
    assert re.search(r"0\.9300\s+0\.9000\s+-0\.0300\s+within tolerance\s+outside tolerance",
                     line), line
    with pytest.raises(SystemExit) as e:                 # the verdict changed: not within 0.05
        main(args + ["--tolerance", "0.05"])
    assert e.value.code == 1
    diff, _, _ = compare(rerun, store, tolerance=0.05)
    assert list(diff["now_status"]) == ["outside tolerance"]

    with pytest.raises(SystemExit) as e:
        main(["compare", str(_finished_run(tmp_path / "rerun", "miordm-heatmap", 0.8)),
              "--archive", str(tmp_path / "empty")])
    assert e.value.code == 2
    assert "experiment miordm-heatmap: no archived run in " in capsys.readouterr().err


def test_compare_of_an_experiment_without_paper_targets_speaks_of_experiments(tmp_path, capsys):
    """`compare results/<experiment>` of an experiment no paper's targets cover (the default
    config's zoo) names that experiment and the experiments it could compare, not papers."""
    repo = _repo(tmp_path)
    store = repo / "resources" / "reproductions"
    archive(_finished_run(repo, "miordm-20", 0.93, dataset="faculty"),
            repo / "config" / "reduced" / "miordm-20-splits.yaml", store, repo=repo)
    zoo = tmp_path / "results" / "zoo"
    zoo.mkdir(parents=True)
    errors = {}
    for folder in (zoo, tmp_path / "results" / "zo"):
        with pytest.raises(SystemExit) as e:
            main(["compare", str(folder), "--archive", str(store)])
        assert e.value.code == 2
        errors[folder.name] = capsys.readouterr().err.split(" compare: ", 1)[1].rstrip()
    assert errors["zo"].startswith("experiment zo: no results folder")
    head, names = errors["zoo"].split("; archived experiments: ")
    assert head == "experiment zoo: no paper targets, so no archived run to compare with"
    names = names.split(", ")
    assert "miordm-20" in names and "hydr" not in names        # experiments, not papers


def test_archive_records_the_commit_the_run_was_computed_at(tmp_path):
    repo = _repo(tmp_path)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "config"], check=True)
    subprocess.run(git + ["commit", "-qm", "c"], check=True)
    head = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    store = repo / "resources" / "reproductions"
    cfg = repo / "config" / "reduced" / "miordm-20-splits.yaml"
    path, _ = archive(_finished_run(repo, "miordm-20", 0.9), cfg, store, repo=repo)
    assert yaml.safe_load(path.with_suffix(".yaml").read_text())["commit"] == head
    cfg.write_text(cfg.read_text() + "# edited\n")
    path, _ = archive(repo / "results" / "miordm-20", cfg, store, repo=repo)
    meta = yaml.safe_load(path.with_suffix(".yaml").read_text())
    assert meta["commit"] == head + "+changes"
    assert head not in pages(archive_dir=store)["miordm.md"]     # data, not on the pages


HYDR_GA_CLASSIFIERS = ("citation-knn", "milr", "mi-simple")
HYDR_GA_NAMES = ("citationKNN", "MIRL", "MISimple (PART)")        # the paper's, in that order
TRIPLE = r" (\.\d{3}) / (\.\d{3}) / (\.\d{3})"                      # ".ddd / .ddd / .ddd"
HYDR_GA_SELECTORS = {"HyDR-MI": "hydr-mi", "all features": "none",
                     "ReliefF-MI at the text's 70 %": "relieff-mi"}


def _hydr_archive(run):
    """(per-fold scores with ``sel`` and ``clf`` columns, compared table) of an archived
    HyDR-MI run."""
    folder = REPO / "resources" / "reproductions" / "hydr"
    scores = pd.read_csv(folder / run / "scores.csv.gz")
    scores["sel"] = scores.method.str.extract(r"^([\w-]+)", expand=False)
    scores["clf"] = scores.method.str.extract(r"\+ ([\w-]+)\(", expand=False)
    return scores, pd.read_csv(folder / f"{run}.csv")


def test_hydr_drug_ga_note_quotes_the_archived_run():
    """Every "<selector> .ddd / .ddd / .ddd" (citationKNN / MIRL / MISimple (PART)) that the
    hydr-drug-ga gap note quotes, the seed ranges, MIRL's loss and the features kept are the
    archived run's (means over the 10 folds and the 5 GA seeds), the "(paper ...)" triples
    the paper's targets."""
    scores, table = _hydr_archive("hydr-drug-ga")
    mean = scores.groupby(["sel", "clf"]).accuracy.mean()
    text = _gap_text("hydr", "hydr-drug-ga")
    paper = table[(table.metric == "accuracy") & (table.dataset == "musk1")].set_index(
        "paper_method").paper_value
    for label, sel in HYDR_GA_SELECTORS.items():
        values = re.search(rf"{re.escape(label)}{TRIPLE}(?: \(paper{TRIPLE}\))?", text)
        assert values, label
        ours, printed = values.groups()[:3], values.groups()[3:]
        for clf, value in zip(HYDR_GA_CLASSIFIERS, ours):
            assert float(value) == pytest.approx(mean[sel, clf], abs=6e-4), (label, clf)
        if sel != "relieff-mi":          # the paper's ReliefF-MI keeps 50 %, not compared
            head = {"hydr-mi": "HyDR-MI", "none": "Full Features"}[sel]
            for name, value in zip(HYDR_GA_NAMES, printed):
                assert float(value) == pytest.approx(paper[f"{head} + {name}"]), (label, name)
    per_seed = scores[scores.sel == "hydr-mi"].groupby(["clf", "seed"]).accuracy.mean()
    span = {c: _dots(per_seed[c].min(), per_seed[c].max()) for c in HYDR_GA_CLASSIFIERS}
    assert f"five seeds {span['milr']}" in text
    assert f"({span['citation-knn']}, {span['mi-simple']})" in text
    assert (per_seed["milr"] < mean["none", "milr"]).all()      # "each below all features"
    loss = mean["none", "milr"] - mean["hydr-mi", "milr"]
    assert f"MIRL loses {_dots(loss)}" in text
    kept = table[(table.metric == "n_features") & table.paper_method.str.startswith("HyDR")
                 & table.ours.notna()]
    assert len(kept) == 3 and kept.ours.max() < 116 / 2     # below a random start's half
    assert f"keeps {kept.ours.min():.0f}-{kept.ours.max():.0f} of the 166" in text


def test_hydr_images_ga_note_quotes_the_archived_run():
    """The hydr-images-ga gap note's "<data set> .ddd / .ddd / .ddd (paper ...)" triples
    (citationKNN / MIRL / MISimple (PART); HyDR-MI first, all features second) are the archived
    means over 10 folds and 5 GA seeds and the paper's Tables 7-9; its counts, ranges, seed
    span, features kept, p values and the legacy match are the archive's too."""
    scores, table = _hydr_archive("hydr-images-ga")
    mean = scores.groupby(["sel", "dataset", "clf"]).accuracy.mean()
    acc = table[table.metric == "accuracy"].set_index(["dataset", "paper_method"]).paper_value
    text = _gap_text("hydr", "hydr-images-ga")
    for part, sel, head in ((text.split("all features:")[0], "hydr-mi", "HyDR-MI"),
                            (text.split("all features:")[1], "none", "Full Features")):
        found = re.findall(rf"(elephant|tiger|fox){TRIPLE} \(paper{TRIPLE}\)", part)
        assert sorted(f[0] for f in found) == ["elephant", "fox", "tiger"], (sel, found)
        for ds, *values in found:
            for clf, name, ours, paper in zip(HYDR_GA_CLASSIFIERS, HYDR_GA_NAMES, values[:3],
                                              values[3:]):
                assert float(ours) == pytest.approx(mean[sel, ds, clf], abs=6e-4), (ds, clf)
                assert float(paper) == pytest.approx(acc[ds, f"{head} + {name}"]), (ds, name)
    hydr, full = mean["hydr-mi"], mean["none"]

    def paper_of(head):          # the paper's accuracies of one selector, indexed as ``hydr``
        names = dict(zip(HYDR_GA_CLASSIFIERS, HYDR_GA_NAMES))
        return pd.Series([acc[ds, f"{head} + {names[clf]}"] for ds, clf in hydr.index],
                         index=hydr.index)

    paper, paper_full = paper_of("HyDR-MI"), paper_of("Full Features")
    gap = (hydr - paper).round(3)
    assert f"within .03 of the paper in {(gap.abs() <= .03).sum()} of the 9 cells" in text
    assert f"{_dots(-gap[gap < -.03].max(), -gap.min())} below in the other " \
           f"{(gap.abs() > .03).sum()}" in text
    lift = (hydr - full).round(3)
    assert f"by -{_dots(-lift.min())} to +{_dots(lift.max())} (above in " \
           f"{(lift > 0).sum()} of the 9 cells)" in text
    assert f"the paper's HyDR-MI is above in {(paper > paper_full).sum()} of 9, " \
           f"{(paper_full == .5).sum()} of them against the .500" in text
    kept = table[(table.metric == "n_features") & table.paper_method.str.startswith("HyDR")
                 & table.ours.notna()]
    assert len(kept) == 9 and kept.ours.max() < 115 / 2      # below a random start's half
    assert f"keeps {kept.ours.min():.0f}-{kept.ours.max():.0f} of the 230 features (paper " \
           f"{kept.paper_value.min():.0f}-{kept.paper_value.max():.0f})" in text
    per_seed = scores[scores.sel == "hydr-mi"].groupby(["dataset", "clf", "seed"]).accuracy.mean()
    span = per_seed.groupby(["dataset", "clf"]).agg(["min", "max"])
    widest = (span["max"] - span["min"]).idxmax()
    assert widest == ("fox", "citation-knn")
    assert f"at most {_dots(span['max'][widest] - span['min'][widest])} (fox citationKNN " \
           f"{_dots(*span.loc[widest])})" in text
    assert f"HyDR-MI .766 (seeds {_dots(*span.loc['elephant', 'mi-simple'])})" in text
    legacy = pd.read_csv(REPO / "resources" / "reproductions" / "hydr"
                         / "legacy-hydr-per-seed-elephant.csv").query("metric == 'accuracy'")
    legacy = legacy.set_index("paper_method").ours
    for label, sel in (("HyDR-MI + MISimple (PART)", "hydr-mi"),
                       ("Full Features + MISimple (PART)", "none")):
        assert round(mean[sel, "elephant", "mi-simple"], 3) == legacy[label], label
    stats = pd.read_csv(REPO / "resources" / "reproductions" / "hydr" / "hydr-images-ga"
                        / "stats" / "hydr-vs-relieff-vs-all.csv")
    assert f"(p = {_dots(stats.p.min(), stats.p.max())})" in text


def test_hydr_citation_knn_half_note_quotes_the_paper_and_the_full_run():
    """The gap note on the paper's citationKNN cells of exactly .500 (hydr-relieff): it selects
    every such ReliefF-MI cell of the image sets and no other, and its ranges are the paper's
    and the archive's, at those cells and at 10-40 %."""
    _, table = _hydr_archive("hydr-relieff")
    knn = table[(table.metric == "accuracy") & table.paper_method.str.contains("citationKNN")
                & table.dataset.isin(["elephant", "tiger", "fox"]) & table.ours.notna()]
    half = knn[knn.paper_value == .5]
    low = knn[knn.paper_method.str.contains(r", [1-4]0 %")]
    gap = next(g for g in load_gaps("hydr-relieff") if g["runs"] == ["hydr-relieff"]
               and "exactly .500" in g["text"])
    assert sorted(gap["keys"]) == sorted(zip(half.source, half.dataset, half.paper_method,
                                             half.metric))
    text = gap["text"]
    assert f"in {len(half)} ReliefF-MI cells" in text
    assert f"at 10-40 % it prints {_dots(low.paper_value.min(), low.paper_value.max())}" in text
    assert f"{_dots(half.ours.min(), half.ours.max())} in those {len(half)} cells" in text
    assert f"as at 10-40 % ({_dots(low.ours.min(), low.ours.max())})" in text
    musk = table[(table.metric == "accuracy") & table.paper_method.str.contains("citationKNN")
                 & table.dataset.str.startswith("musk")]
    assert (musk.paper_value != .5).all()                   # "never on musk1 or musk2"


def test_a_gap_note_is_marked_superseded_only_where_none_of_its_results_is_listed(generated):
    """A note whose run has results a better run supersedes in a table, and others listed
    there (hydr-images-ga in Table 7: its ReliefF-MI cells are hydr-relieff's, its HyDR-MI and
    all-features cells its own), is not marked as about results not listed."""
    table7 = generated["hydr.md"].split("\n## Table 7\n")[1].split("\n## ")[0]
    assert "[hydr-images-ga](#hydr-images-ga)" in table7
    assert "Not listed: the results of hydr-images-ga" in table7
    note = next(line for line in table7.splitlines() if "(evidence: hydr-images-ga" in line)
    assert "superseded" not in note
