"""A benchmark configuration beside the papers (config/deep.yaml, archive key deep): its
experiments resolve to resources/reproductions/deep/, its runs are archived (no targets: the
rule's one "no paper targets" row, plus the summary, stats tables and CD diagrams), kept and
restored in parts, and docs/deep-mil.md is generated from that archive."""
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO
from milbench.experiment.codehash import JOB_DIGEST
from milbench.report import benchmark_docs
from milbench.report.reproduction import main, no_targets_table
from milbench.report.reproduction_archive import ArchiveError, archive, load_archive
from milbench.report.reproduction_parts import _expected, keep, restore
from milbench.report.stats import run_stats
from milbench.report.targets import BENCHMARKS, archive_key, benchmark_key, paper_key

DATASETS = ("musk1", "fox")
METHODS = ("none + mi-Net", "none + Attention", "none + MILR")


# ----------------------------------------------------------------------------- keys
def test_benchmark_experiments_resolve_to_their_key_and_others_fail_clearly():
    assert BENCHMARKS == ("deep",)
    cfg = yaml.safe_load((REPO / "config" / "deep.yaml").read_text())
    assert {archive_key(e) for e in cfg["experiments"]} == {"deep"}
    assert archive_key("miordm-20") == paper_key("miordm-20") == "miordm"   # papers first
    with pytest.raises(KeyError):
        paper_key("deep")                            # no targets: not a paper
    with pytest.raises(KeyError, match="no benchmark's"):
        benchmark_key("midr")
    for name in ("deeper", "zoo"):
        with pytest.raises(KeyError) as e:
            archive_key(name)
        message = e.value.args[0]
        assert f"experiment {name!r} is neither a paper's" in message
        assert "cvfs, midr, milsd, hydr, miordm" in message and "config/<key>.yaml" in message


def test_unknown_experiments_are_refused_by_name(tmp_path, capsys):
    zoo = tmp_path / "results" / "zoo"
    zoo.mkdir(parents=True)
    no_targets_table("zoo").to_csv(zoo / "reproduction.csv", index=False)
    for argv in (["archive", str(zoo)], ["keep", str(zoo)], ["restore", "zoo"]):
        with pytest.raises(SystemExit) as e:
            main([*argv, "--config", str(REPO / "config" / "deep.yaml"),
                  "--archive", str(tmp_path / "store")])
        assert e.value.code == 2
        assert "experiment 'zoo' is neither a paper's" in capsys.readouterr().err


# ----------------------------------------------------------------------------- archive
def _repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "config" / "reduced").mkdir(parents=True)
    shutil.copy(REPO / "config" / "deep.yaml", repo / "config" / "deep.yaml")
    (repo / "store").mkdir()                 # an empty archive: the tests archive their own runs
    shutil.copy(REPO / "resources" / "reproductions" / "schema.yaml", repo / "store")
    return repo


def _deep_run(repo, experiment="deep", scores=True, seed=0):
    """results/<experiment>/ of a finished deep-like run: per-fold scores, summary, the stats
    tables config/deep.yaml asks for (computed by the workflow's own function), figures, the
    rule's no-targets reproduction.csv and a benchmark file."""
    rng = np.random.default_rng(seed)
    rows = pd.DataFrame([dict(dataset=d, method=m, selector="none",
                              classifier=m.split(" + ")[1].lower(), repeat=r, fold=f,
                              accuracy=rng.uniform(.5, 1), auroc=rng.uniform(.5, 1),
                              fit_cpu_seconds=rng.uniform(.1, 9))
                         for d in DATASETS for m in METHODS for r in range(2) for f in range(3)])
    results = repo / "results" / experiment
    (results / "figures").mkdir(parents=True)
    if scores:
        rows.to_parquet(results / "scores.parquet", index=False)
    g = rows.groupby(["dataset", "method"], sort=False)[["accuracy", "auroc"]]
    g.mean().add_suffix("_mean").join(g.std().add_suffix("_std")).reset_index().to_csv(
        results / "summary.csv", index=False)
    entries = yaml.safe_load((repo / "config" / "deep.yaml").read_text())["experiments"]["deep"]
    (results / "stats").mkdir()
    for name, table in run_stats(rows, entries["stats"]).items():
        table.to_csv(results / "stats" / f"{name}.csv", index=False, float_format="%.6g")
    for name in ("cd_accuracy", "cd_auroc", "scores"):
        (results / "figures" / f"{name}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + name.encode())
    no_targets_table(experiment).to_csv(results / "reproduction.csv", index=False)
    bench = repo / "results" / "benchmarks" / experiment
    bench.mkdir(parents=True)
    (bench / "scores.tsv").write_text("s\tcpu_time\n2.0\t7200.0\n")
    return results, rows


def test_a_deep_run_is_archived_with_its_tables_and_the_page_shows_them(tmp_path):
    repo = _repo(tmp_path)
    store = repo / "store"
    results, rows = _deep_run(repo)
    csv_path, legacy = archive(results, repo / "config" / "deep.yaml", store,
                               date="2026-12-01", repo=repo)
    assert csv_path == store / "deep" / "deep.csv" and legacy == []
    assert csv_path.read_bytes() == (results / "reproduction.csv").read_bytes()
    meta = yaml.safe_load(csv_path.with_suffix(".yaml").read_text())
    assert meta["paper"] == "deep" and meta["status"] == "FULL" and meta["cpu_seconds"] == 7200
    assert meta["figures"] == [{"file": "cd_accuracy.png"}, {"file": "cd_auroc.png"}]
    assert meta["summary"] == "summary.csv" and meta["scores"] == "scores.csv.gz"
    assert sorted(meta["stats"]) == sorted(p.name for p in (results / "stats").glob("*.csv"))
    assert "deep-friedman-accuracy_ranks.csv" in meta["stats"]
    assert meta["command"] == (
        "snakemake results/deep/stats results/deep/figures results/deep/reproduction.csv "
        "--cores 16 --configfile config/deep.yaml && python -m milbench.report.reproduction "
        "archive results/deep --config config/deep.yaml")
    kept = store / "deep" / "deep"
    assert (kept / "stats" / "deep-paired-t-accuracy.csv").read_bytes() == \
        (results / "stats" / "deep-paired-t-accuracy.csv").read_bytes()
    assert not (kept / "scores.png").exists()
    [run] = load_archive("deep-musk2", store)          # any experiment of the benchmark
    assert run.name == "deep" and run.rows["status"].iloc[0].startswith("no paper targets")

    page = benchmark_docs.pages(store)["deep-mil.md"]
    assert "is archived yet" not in page
    musk1 = rows[(rows.dataset == "musk1") & (rows.method == "none + Attention")]
    row = next(x for x in page.splitlines() if x.startswith("| none + Attention |"))
    assert row.split(" | ")[1] == f"{musk1.accuracy.mean():.3f} ± {musk1.accuracy.std():.3f}"
    cpu = page[page.index("CPU seconds per fit"):].splitlines()
    row = next(x for x in cpu if x.startswith("| none + Attention |"))
    assert row.split(" | ")[1] == f"{musk1.fit_cpu_seconds.mean():.2f}"
    assert "![cd_accuracy.png](../resources/reproductions/deep/deep/cd_accuracy.png)" in page
    chi2 = pd.read_csv(results / "stats" / "deep-friedman-auroc.csv")["chi2"].iloc[0]
    assert f"**deep-friedman-auroc** (auroc): Friedman test over 2 data sets, 3 methods: " \
           f"χ²_F = {chi2:.2f}" in page
    paired = pd.read_csv(results / "stats" / "deep-paired-t-accuracy.csv")
    assert len(paired) == 4 and set(paired.method_a) == {"none + MILR"}
    fox = paired[(paired.dataset == "fox") & (paired.method_b == "none + mi-Net")].iloc[0]
    assert f"| fox | none + MILR | none + mi-Net | {fox.mean_a:.3f} | {fox.mean_b:.3f} |" in page


def test_without_scores_the_page_takes_the_summary_and_reduced_runs_say_so(tmp_path):
    repo = _repo(tmp_path)
    store = repo / "store"
    results, rows = _deep_run(repo, "deep-fox", scores=False)
    cut = yaml.safe_load((repo / "config" / "deep.yaml").read_text())
    cut["experiments"]["deep-fox"]["protocol"]["repeats"] = 1
    (repo / "config" / "reduced" / "deep-1.yaml").write_text(yaml.safe_dump(cut))
    path, _ = archive(results, repo / "config" / "reduced" / "deep-1.yaml", store, repo=repo)
    meta = yaml.safe_load(path.with_suffix(".yaml").read_text())
    assert meta["status"] == "REDUCED" and meta["reduced"].startswith(
        "config/reduced/deep-1.yaml: MI-Net family at Wang")
    assert "scores" not in meta
    page = benchmark_docs.pages(store)["deep-mil.md"]
    assert "from the run's summary (`deep-fox/summary.csv`)" in page
    fox = rows[(rows.dataset == "fox") & (rows.method == "none + MILR")]
    row = next(x for x in page.splitlines() if x.startswith("| none + MILR |"))
    assert row.removesuffix(" |").split(" | ")[2] == f"{fox.accuracy.mean():.3f} ± {fox.accuracy.std():.3f}"
    (store / "deep" / "deep-fox" / "summary.csv").unlink()
    with pytest.raises(ArchiveError, match=r"deep-fox\.yaml: summary summary\.csv is not in"):
        load_archive("deep", store)


# ----------------------------------------------------------------------------- in parts
def test_keep_and_restore_a_deep_experiment_in_parts(tmp_path, capsys):
    """Method files carrying the digest the config and code give now are kept under
    resources/reproductions/deep/parts/<experiment>/ and put back once the folds exist."""
    repo = _repo(tmp_path)
    store = repo / "store"
    cfg = {"offline": True, "experiments": {"deep-tiny": {
        "datasets": ["musk1"], "protocol": {"kind": "kfold", "folds": 2, "repeats": 1, "seed": 0},
        "selectors": [{"name": "none"}],
        "classifiers": [{"name": "mi-net", "hidden_layer_sizes": [[4]], "epochs": 1},
                        {"name": "milr", "C": 1.0}]}}}
    config = repo / "tiny.yaml"
    config.write_text(yaml.safe_dump(cfg))
    results = repo / "results" / "deep-tiny"
    expected = _expected(config, "deep-tiny")
    assert len(expected) == 2
    for i, (rel, (digest, _, _)) in enumerate(sorted(expected.items())):
        table = pd.DataFrame(dict(repeat=0, fold=[0, 1], accuracy=[.5 + i / 10, .6]))
        table.attrs[JOB_DIGEST] = digest
        (results / rel).parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(results / rel)
        tsv = (repo / "results" / "benchmarks" / "deep-tiny" / rel).with_suffix(".tsv")
        tsv.parent.mkdir(parents=True, exist_ok=True)
        tsv.write_text("s\tcpu_time\n1.0\t30.0\n")
    kept, _, skipped = keep(results, config, store)
    assert sorted(kept) == sorted(expected) and skipped == {}
    part = store / "deep" / "parts" / "deep-tiny"
    assert yaml.safe_load((part / "parts.yaml").read_text())["cpu_seconds"] == 60.0
    page = benchmark_docs.pages(store)["deep-mil.md"]
    assert "| `deep-tiny` | 2 of 2 | — | 60 s |" in page

    saved = {rel: (results / rel).read_bytes() for rel in expected}
    shutil.rmtree(repo / "results")                         # a later session
    with pytest.raises(ArchiveError, match=r"results/deep-tiny/folds/musk1\.parquet"):
        restore("deep-tiny", config, repo / "results", store)
    (results / "folds").mkdir(parents=True)
    (results / "folds" / "musk1.parquet").write_bytes(b"")
    main(["restore", "deep-tiny", "--config", str(config), "--results",
          str(repo / "results"), "--archive", str(store)])
    assert "2 method files restored, 0 not" in capsys.readouterr().out
    assert {rel: (results / rel).read_bytes() for rel in expected} == saved

    main(["keep", str(results), "--config", str(config), "--archive", str(store), "--drop"])
    assert not part.exists()


# ----------------------------------------------------------------------------- the page
def test_committed_deep_page_is_the_generated_one(tmp_path):
    generated = benchmark_docs.pages()
    committed = (REPO / "docs" / "deep-mil.md").read_text(encoding="utf-8")
    assert committed == generated["deep-mil.md"], \
        "docs/deep-mil.md out of date: run `python -m milbench.report.reproduction docs`"
    main(["docs", "--out", str(tmp_path / "reproduction"), "--benchmark-out", str(tmp_path)])
    assert (tmp_path / "deep-mil.md").read_text(encoding="utf-8") == committed
    main(["docs", "--out", str(tmp_path / "other")])             # no benchmark pages asked for
    assert not (tmp_path / "other" / "deep-mil.md").exists()


def test_the_cost_comes_from_a_kept_plan_or_the_page_points_to_the_planner(tmp_path):
    page = benchmark_docs.pages(plans_dir=tmp_path)["deep-mil.md"]
    assert "Cost: no plan of it is kept in `resources/plans/`; `python -m " \
           "milbench.experiment.plan config/deep.yaml --cores 16` estimates it" in page
    pd.DataFrame(dict(experiment=["deep", "deep", "deep-fox"], cpu=[1.0, 2.0, 3.0],
                      experiment_cpu=[9000.0, 9000.0, 1800.0])).to_csv(tmp_path / "deep.csv")
    page = benchmark_docs.pages(plans_dir=tmp_path)["deep-mil.md"]
    assert "Cost: 3.0 CPU-hours in all, by the plan kept in `resources/plans/deep.csv`" in page
