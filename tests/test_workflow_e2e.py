"""End-to-end: snakemake on a tiny config in a temp dir (reruns only what changed)."""
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from conftest import REPO, tiny_config

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def e2e_config(mi_simple_statistic="minmax"):
    """conftest's tiny config with a PCA selector, a Friedman test, transductive plumbing and a
    coverage entry (4 method jobs of 2 cells each)."""
    cfg = tiny_config()
    cfg["experiments"]["tiny"].update({
        "selectors": [{"name": "none"}, {"name": "pca", "dims": 0.3}],
        "classifiers": [{"name": "milr", "C": 1.0},
                        {"name": "mi-simple", "statistic": mi_simple_statistic}],
        "stats": [{"name": "friedman_acc", "test": "friedman", "metric": "accuracy"}],
        "transductive": True,   # plumbing only: MILR / MI-Simple fit as usual
        "coverage": [{"name": "relieff_top5", "selector": {"name": "relieff-mi", "k": 5, "m": 20},
                      "top": 5}],
    })
    return cfg


def smk(workdir, *args, config=None):
    if config is not None:
        (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    cmd = SNAKEMAKE + ["-d", str(workdir), "--configfile", str(workdir / "config.yaml"), *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    return res.stdout + res.stderr


def planned(output):
    """{rule: count} from a dry run's job table."""
    table = {}
    for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", output, re.M):
        table[m.group(1)] = int(m.group(2))
    table.pop("total", None)
    return table


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    wd = tmp_path_factory.mktemp("e2e")
    smk(wd, "--cores", "2", "-q", config=e2e_config())
    return wd


def test_outputs(finished_run):
    wd = finished_run
    scores = pd.read_parquet(wd / "results/tiny/scores.parquet")
    assert len(scores) == 2 * 2 * 2  # selectors × classifiers × folds
    for col in ("accuracy", "auroc", "fit_seconds", "predict_seconds", "n_features", "method"):
        assert col in scores
    assert scores["transductive"].all()
    assert set(scores.n_features) == {166, 50}
    assert scores.accuracy.between(0, 1).all()
    summary = pd.read_csv(wd / "results/tiny/summary.csv")
    assert len(summary) == 4 and {"accuracy_mean", "auroc_std"} <= set(summary.columns)
    assert any((wd / "results/tiny/stats").glob("*.csv"))
    assert any((wd / "results/tiny/figures").glob("*.png"))
    assert (wd / "results/tiny/reproduction.csv").exists()
    coverage = pd.read_csv(wd / "results/tiny/coverage/relieff_top5_musk1.csv")
    assert coverage["rank"].tolist() == [1, 2, 3, 4, 5]
    assert (wd / "results/tiny/coverage/relieff_top5_musk1.png").exists()
    assert (wd / "results/bags/musk1/instances.parquet").exists()
    assert (wd / "results/tiny/folds/musk1.parquet").exists()
    # PCA's fit is shared by MILR and MI-Simple: one fold stage, read by both method jobs
    stage = pd.read_parquet(next((wd / "results/tiny/stages/musk1").glob("pca.*.parquet")))
    assert sorted(zip(stage.repeat, stage.fold)) == [(0, 0), (0, 1)]


TIMING = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]


def test_method_jobs_equal_the_per_fold_design(finished_run):
    """Every row a method job wrote (its cells run together in one process, over 2 threads)
    equals the same cell run alone through run_fold, on every column except the timings."""
    from milbench.data.store import read_bags
    from milbench.experiment.config import experiment_defaults, experiment_settings
    from milbench.experiment.grid import expand_methods
    from milbench.experiment.runner import run_cell
    from milbench.experiment.scoring import aggregate

    wd, exp = finished_run, experiment_defaults(e2e_config()["experiments"]["tiny"])
    bags = read_bags(wd / "results/bags/musk1")
    folds = pd.read_parquet(wd / "results/tiny/folds/musk1.parquet")
    per_fold = []
    for m in expand_methods(exp):
        for fold in (0, 1):
            row = run_cell(bags, folds, m, experiment_settings(exp), experiment="tiny",
                           dataset="musk1", repeat=0, fold=fold)
            per_fold.append(wd / f"per-fold-{m['selector_id']}-{m['classifier_id']}-{fold}.parquet")
            row.to_parquet(per_fold[-1], index=False)
    ours = pd.read_parquet(wd / "results/tiny/scores.parquet").drop(columns=TIMING)
    pd.testing.assert_frame_equal(ours, aggregate(per_fold).drop(columns=TIMING), check_exact=True)


def test_notebook_entry_equals_the_workflow(finished_run):
    """milbench.experiment.runner.run_experiment on the same bags and config entry gives the rows the
    Snakemake run wrote, on every column but the timings."""
    from milbench.data.store import read_bags
    from milbench.experiment.runner import run_experiment

    wd = finished_run
    bags = read_bags(wd / "results/bags/musk1")
    ours = run_experiment(e2e_config()["experiments"]["tiny"], bags, dataset="musk1",
                          experiment="tiny", threads=2)
    pd.testing.assert_frame_equal(
        ours.drop(columns=TIMING),
        pd.read_parquet(wd / "results/tiny/scores.parquet").drop(columns=TIMING), check_exact=True)


def test_method_log_reports_every_cell(finished_run):
    logs = sorted((finished_run / "results/logs/tiny/runs/musk1").glob("*/*.log"))
    assert len(logs) == 4
    for log in logs:
        text = log.read_text()
        assert re.search(r"cell 1/2 r0_f[01] \d+\.\d\d s CPU", text), text
        assert re.search(r"cell 2/2 r0_f[01] ", text), text


def test_one_cell_from_the_command_line(finished_run):
    wd = finished_run
    clf = next(p.stem for p in (wd / "results/tiny/runs/musk1/none").glob("milr*.parquet"))
    out = wd / "cell.parquet"
    res = subprocess.run([sys.executable, "-m", "milbench.experiment.runner", "--configfile",
                          str(wd / "config.yaml"), "-d", str(wd), "--experiment", "tiny",
                          "--dataset", "musk1", "--selector", "none", "--classifier", clf,
                          "--cell", "r0_f1", "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "accuracy" in res.stdout
    ours = pd.read_parquet(wd / f"results/tiny/runs/musk1/none/{clf}.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(out).drop(columns=TIMING),
                                  ours[ours.fold == 1].reset_index(drop=True).drop(columns=TIMING))
    bad = subprocess.run([sys.executable, "-m", "milbench.experiment.runner", "--configfile",
                          str(wd / "config.yaml"), "-d", str(wd), "--experiment", "tiny",
                          "--dataset", "musk1", "--selector", "none", "--classifier", "nope",
                          "--cell", "r0_f1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no method none/nope" in bad.stderr and clf in bad.stderr


def test_second_run_does_nothing(finished_run):
    out = smk(finished_run, "-n")
    assert "Nothing to be done" in out, out[-2000:]


def test_changed_parameter_reruns_only_its_jobs(finished_run):
    out = smk(finished_run, "-n", config=e2e_config(mi_simple_statistic="mean"))
    jobs = planned(out)
    assert jobs.get("run_method") == 2, jobs   # 2 selectors × the changed classifier
    assert "bags_builtin" not in jobs and "folds" not in jobs
    assert jobs.get("scores") == 1


def test_corrupt_run_file_keeps_the_previous_scores(finished_run, tmp_path):
    """A truncated method file stops the workflow at check_runs, naming it; Snakemake never
    starts `scores`, so the previous good scores.parquet and summary.csv stay as they were."""
    wd = tmp_path / "copy"
    shutil.copytree(finished_run, wd)
    before = {f: (wd / f"results/tiny/{f}").read_bytes() for f in ("scores.parquet", "summary.csv")}
    run = next((wd / "results/tiny/runs/musk1/none").glob("milr*.parquet"))
    run.write_bytes(run.read_bytes()[:100])            # newer than scores: scores is due
    res = subprocess.run(SNAKEMAKE + ["-d", str(wd), "--configfile", str(wd / "config.yaml"),
                                      "--cores", "1", "results/tiny/scores.parquet"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode != 0
    log = (wd / "results/logs/tiny/check_runs.log").read_text()
    assert f"{run.relative_to(wd)}: cannot read the method's rows" in log, log[-2000:]
    assert before == {f: (wd / f"results/tiny/{f}").read_bytes() for f in before}


def test_report(finished_run):
    smk(finished_run, "--report", str(finished_run / "report.html"), config=e2e_config())
    html = (finished_run / "report.html").read_text(errors="replace")
    assert "scores" in html.lower() and len(html) > 10_000


def test_unknown_config_key_is_named(tmp_path):
    cfg = e2e_config()
    cfg["experiments"]["tiny"]["clasifiers"] = []
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                      str(tmp_path / "config.yaml"), "-n"],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "clasifiers" in res.stdout + res.stderr


def test_unknown_method_is_named(tmp_path):
    cfg = e2e_config()
    cfg["experiments"]["tiny"]["classifiers"] = [{"name": "milrr"}]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                      str(tmp_path / "config.yaml"), "-n"],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "milrr" in res.stdout + res.stderr


def test_download_rule_through_http_mirror(tmp_path, http_mirror):
    cfg = e2e_config()
    cfg.update(offline=False, mirror=http_mirror)
    smk(tmp_path, "--cores", "1", "results/bags/musk1/meta.json", "-q", config=cfg)
    assert (tmp_path / "results/raw/musk/clean1.data").exists()
    meta = yaml.safe_load((tmp_path / "results/bags/musk1/meta.json").read_text())
    assert meta["source"] == "download" and meta["n_bags"] == 92


def test_user_dataset_csv(tmp_path):
    rows = ["1,a,0.5,0.2", "1,a,0.1,0.9", "0,b,0.3,0.3", "0,c,0.2,0.1", "1,d,0.9,0.9"]
    (tmp_path / "mine.csv").write_text("\n".join(rows) + "\n")
    cfg = e2e_config()
    cfg["datasets"] = {"mine": {"format": "csv", "path": str(tmp_path / "mine.csv")}}
    smk(tmp_path, "--cores", "1", "results/bags/mine/meta.json", "-q", config=cfg)
    meta = yaml.safe_load((tmp_path / "results/bags/mine/meta.json").read_text())
    assert meta["n_bags"] == 4 and meta["n_instances"] == 5


def test_bad_user_dataset_leaves_no_output(tmp_path):
    (tmp_path / "bad.csv").write_text("1,a,0.5,0.2\n0,b,0.1,nan\n")
    cfg = e2e_config()
    cfg["datasets"] = {"bad": {"format": "csv", "path": str(tmp_path / "bad.csv")}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile", str(tmp_path / "config.yaml"),
                                      "--cores", "1", "results/bags/bad/meta.json"],
                         capture_output=True, text=True)
    assert res.returncode != 0
    log = (tmp_path / "results/logs/bags/bad.log").read_text()
    assert "bad.csv, line 2" in log
    assert not (tmp_path / "results/bags/bad/meta.json").exists()
