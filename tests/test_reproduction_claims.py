"""The papers' claims judged from the archive (resources/targets/claims.yaml): computed by the
code that renders the pages, first on each page, the README's verdict table generated; results
off a paper's protocol not judged; gaps without evidence read unexplained."""
import re
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import rankdata, ttest_rel, wilcoxon

from milbench.report.reproduction_archive import ARCHIVE_DIR, ArchiveError, archive, load_archive
from milbench.report.reproduction_claims import ClaimError, load_claims
from milbench.report.reproduction_docs import (
    README,
    README_END,
    README_START,
    pages,
    readme_section,
    readme_table,
    verdicts,
)
from milbench.report.stats import friedman
from milbench.report.targets import TARGETS_DIR

from conftest import MIDR_RUN, REPO

PAPERS = ("cvfs", "hydr", "midr", "milsd", "miordm")


@pytest.fixture(scope="module")
def generated():
    return pages()


@pytest.fixture(scope="module")
def judged():
    return verdicts()


def _claim(judged, paper, where):
    return next(v for v in judged[paper][0] if v["where"].startswith(where))


def test_each_page_opens_with_its_claims_and_lists_its_runs_last(generated):
    for paper in PAPERS:
        heads = [x for x in generated[f"{paper}.md"].splitlines() if x.startswith("## ")]
        assert heads[:2] == ["## Claims", "## Summary"], paper
        assert heads[-1] == "## Runs", paper
        assert "**headline**" in generated[f"{paper}.md"], paper


def test_pages_cite_the_papers_by_table_not_by_our_text_lines(generated):
    for name, text in generated.items():
        assert not re.search(r"\.txt\b|\bline \d", text), name


def test_midr_headline_is_the_rank_test_over_the_archived_means(judged):
    """Recomputed here from the archived CSV: MIDR - baseline per data set, one-sided
    Wilcoxon signed-rank; the page's p-values and verdict are these."""
    table = pd.read_csv(ARCHIVE_DIR / "midr" / f"{MIDR_RUN}.csv")
    t1 = table[(table.source == "Table 1") & (table.metric == "auroc")]
    ours = t1.pivot(index="dataset", columns="paper_method", values="ours")
    claim = _claim(judged, "midr", "Table 1")
    assert claim["headline"] and claim["evidence"] == [f"{MIDR_RUN} (FULL)"]
    significant = 0
    for base in ("ORI", "PCA", "LDA"):
        p = wilcoxon(ours.MIDR - ours[base], alternative="greater").pvalue
        significant += p < .05
        line = next(d for d in claim["details"] if d.startswith(f"vs {base}:"))
        assert f"p = {p:.3f}".replace("0.", ".") in line
    assert significant < 3 and claim["verdict"] == "not supported"


def test_miordm_paper_table_ranked_on_the_data_sets_we_have(judged):
    """The paper's own Table 3 on the five UCI sets ranks MIORDM 3rd (mean rank 4.2, highest =
    best), as the targets give it; its first place comes from data sets we do not have."""
    tg = pd.read_csv(TARGETS_DIR / "miordm.csv")
    five = ["musk1", "musk2", "elephant", "fox", "tiger"]
    acc = tg[(tg.source == "Table 3") & (tg.metric == "accuracy") & tg.dataset.isin(five)]
    wide = acc.pivot(index="dataset", columns="paper_method", values="value")
    ranks = pd.Series(rankdata(wide.to_numpy(), axis=1).mean(axis=0), index=wide.columns)
    assert ranks["MIORDM"] == pytest.approx(4.2)
    assert int((ranks > ranks["MIORDM"]).sum()) + 1 == 3
    claim = _claim(judged, "miordm", "Table 3")
    line = next(d for d in claim["details"] if "five UCI sets" in d)
    assert "the paper's own Table 3 on the same: 3rd, mean rank 4.2" in line
    assert claim["verdict"] == "not supported"
    assert "30 data sets" in " ".join(claim["details"])


def test_hydr_is_judged_on_its_five_seed_protocol(generated, judged):
    """The one-seed run's elephant naive Bayes HyDR-MI (.815, within .03) is shown but not
    judged; the five-seed average (.782) is the result that counts, outside the tolerance."""
    page = generated["hydr.md"]
    rows = [x for x in page.splitlines()
            if x.startswith("| elephant | HyDR-MI + MIWrapper (Naive Bayes) | accuracy |")]
    one_seed = next(x for x in rows if "[legacy-hydr-paper-ga]" in x)
    assert "off the paper's protocol: one GA seed" in one_seed
    assert one_seed.split(" | ")[7] == "—"                       # met: not judged
    five = next(x for x in rows if "[legacy-hydr-per-seed-elephant]" in x)
    assert five.split(" | ")[4:8] == ["0.782 (seeds .74–.82)", "-0.061", "0.03", "no"]
    claim = _claim(judged, "hydr", "Tables 7-11")
    assert claim["verdict"] == "not testable here"
    assert "legacy-hydr-per-seed-elephant (LEGACY (REDUCED))" in claim["evidence"]


def test_figures_answer_the_qualitative_targets_of_their_runs(generated):
    """MIORDM's Fig. 4 / Fig. 5 rows name the FULL runs' figures instead of "not run"."""
    page = generated["miordm.md"]
    for fig, run in (("Fig. 4", "miordm-ratio"), ("Fig. 5", "miordm-heatmap")):
        section = page.split(f"## {fig}\n")[1].split("\n## ")[0]
        assert "not run" not in section
        row = next(x for x in section.splitlines() if f"[{run}]" in x)
        assert "see the run's figure" in row and "| FULL |" in row


def test_superseded_legacy_results_are_not_listed(generated):
    page = generated["midr.md"]
    table1 = page.split("## Table 1\n")[1].split("\n## ")[0]
    assert "[legacy-milr-ori]" not in table1
    assert "Not listed: the results of legacy-midr-grid5, legacy-milr-ori" in table1
    assert "### legacy-milr-ori" in page                        # still described under Runs


def test_outside_tolerance_without_evidence_reads_unexplained(generated):
    page = generated["midr.md"]
    row = next(x for x in page.splitlines()
               if x.startswith("| fox | ORI | auroc |") and f"[{MIDR_RUN}]" in x)
    assert row.endswith("unexplained |")
    assert "unexplained: no archived output or benchmark shows this explanation" in page
    for paper in PAPERS:
        for x in generated[f"{paper}.md"].splitlines():
            cells = x.split(" | ")
            if len(cells) == 13 and cells[7] == "no":
                refs = cells[12].rstrip(" |")
                assert refs.endswith("unexplained") or re.fullmatch(r"(\[\d+\](, )?)+", refs), x


def test_readme_verdict_table_is_the_generated_one(judged):
    text = README.read_text(encoding="utf-8")
    assert readme_section(text, readme_table(judged)) == text, \
        "README.md's verdict table is out of date: run `python -m milbench.report.reproduction docs`"
    block = text.split(README_START)[1].split(README_END)[0]
    assert len([x for x in block.splitlines() if x.startswith("| [")]) == len(PAPERS)
    with pytest.raises(ArchiveError, match="README.md: no"):
        readme_section("# no markers\n", "table")


def test_docs_command_rewrites_the_readme_table_it_is_given(tmp_path):
    from milbench.report.reproduction import main
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{README_START}\nstale\n{README_END}\nrest\n")
    main(["docs", "--out", str(tmp_path / "docs"), "--readme", str(readme)])
    text = readme.read_text()
    assert "stale" not in text and "| [midr](docs/reproduction/midr.md) |" in text
    assert text.startswith("intro\n") and text.endswith(f"{README_END}\nrest\n")


def _targets_copy(tmp_path):
    d = tmp_path / "targets"
    shutil.copytree(TARGETS_DIR, d)
    return d


def test_a_bad_claims_file_names_file_line_and_expectation(tmp_path):
    d = _targets_copy(tmp_path)
    claims = yaml.safe_load((d / "claims.yaml").read_text())
    claims["midr"]["claims"][0]["test"].pop("than")
    (d / "claims.yaml").write_text(yaml.safe_dump(claims, sort_keys=False))
    with pytest.raises(ClaimError, match=r"claims\.yaml, line \d+: midr/claims/0/test: "
                                         r"'than' is a required property"):
        load_claims(d)


def test_claim_and_gap_evidence_must_exist(tmp_path):
    d = _targets_copy(tmp_path)
    claims = yaml.safe_load((d / "claims.yaml").read_text())
    claims["midr"]["claims"][1]["test"]["evidence"] = ["midr-nowhere"]
    (d / "claims.yaml").write_text(yaml.safe_dump(claims, sort_keys=False))
    with pytest.raises(ValueError, match="evidence 'midr-nowhere' is neither an archived run"):
        pages(targets_dir=d)
    shutil.copy(TARGETS_DIR / "claims.yaml", d / "claims.yaml")
    meta = (d / "midr.yaml").read_text()
    (d / "midr.yaml").write_text(meta.replace(f'evidence: ["{MIDR_RUN}"]', 'evidence: ["no-run"]',
                                              1))
    with pytest.raises(ArchiveError, match=r"midr\.yaml, line \d+: gaps evidence 'no-run'"):
        pages(targets_dir=d)


def test_a_reduced_result_makes_a_computed_claim_not_testable(tmp_path):
    """The same MIDR numbers archived as REDUCED (and the earlier FULL run of Table 1 too): the
    verdict is "not testable here", with the indicative outcome beside it."""
    store = tmp_path / "archive"
    shutil.copytree(ARCHIVE_DIR, store)
    for name in (MIDR_RUN, "midr-capped"):
        meta = yaml.safe_load((store / "midr" / f"{name}.yaml").read_text())
        meta.update(status="REDUCED", reduced="a test's cut")
        (store / "midr" / f"{name}.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    claim = _claim(verdicts(archive_dir=store), "midr", "Table 1")
    assert claim["verdict"] == "not testable here"
    assert claim["why"].startswith(f"no paper-size run: the evidence includes {MIDR_RUN} (REDUCED)")
    assert "indicative (not supported)" in claim["why"]


def test_wins_are_counted_per_block_of_data_set_and_classifier(judged):
    """HyDR-MI's blocks pair "<method> + <classifier>" with "<baseline> + <classifier>" on one
    data set; every block counted once per baseline."""
    claim = _claim(judged, "hydr", "Tables 7-11")
    counts = [tuple(map(int, re.search(r"above in (\d+) of (\d+)", line).groups()))
              for line in claim["details"] if line.startswith("vs ")]
    blocks = next(x for x in claim["details"] if x.startswith("ours per block")).split("; ")
    assert len(counts) == 2 and all(0 <= won <= n == len(blocks) for won, n in counts)
    assert "elephant, MIWrapper (Naive Bayes) .782 / " in claim["details"][-1]


# ----------------------------------------------------------------------------- per-fold scores
def _midr_scores(store, seed=0):
    """Per-fold scores for the archived midr run's methods (10 repeats x 5 folds), each fold a
    shared per-fold effect plus the method's own noise; kept in the run's folder."""
    rng = np.random.default_rng(seed)
    table = pd.read_csv(store / "midr" / f"{MIDR_RUN}.csv")
    t1 = table[(table.source == "Table 1") & (table.metric == "auroc")]
    rows = []
    for ds, g in t1.groupby("dataset"):
        shared = rng.normal(0, .04, size=(10, 5))
        for r in g.itertuples():
            own = rng.normal(0, .01, size=(10, 5))
            for rep in range(10):
                for fold in range(5):
                    rows.append(dict(dataset=ds, method=r.our_method, repeat=rep, fold=fold,
                                     auroc=r.ours + shared[rep, fold] + own[rep, fold]))
    scores = pd.DataFrame(rows)
    scores.to_csv(store / "midr" / MIDR_RUN / "scores.csv.gz", index=False)
    meta = yaml.safe_load((store / "midr" / f"{MIDR_RUN}.yaml").read_text())
    meta["scores"] = "scores.csv.gz"
    (store / "midr" / f"{MIDR_RUN}.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    return scores


def test_archived_fold_scores_give_paired_tests_and_spreads_over_repeats(tmp_path):
    store = tmp_path / "archive"
    shutil.copytree(ARCHIVE_DIR, store)
    scores = _midr_scores(store)
    page = pages(archive_dir=store)["midr.md"]
    mine = scores[(scores.dataset == "fox") & scores.method.str.startswith("none")]
    sd = mine.groupby("repeat").auroc.mean().std()
    row = next(x for x in page.splitlines()
               if x.startswith("| fox | ORI | auroc |") and f"[{MIDR_RUN}]" in x)
    assert f"0.5894 ± {sd:.4f} (± over repeats)" in row
    claim = _claim(verdicts(archive_dir=store), "midr", "Table 1")
    assert "per block, the paired t-test over the folds" in claim["test"]
    lda = next(d for d in claim["details"] if d.startswith("vs LDA:"))
    midr = scores[scores.method.str.startswith("midr")].set_index(["dataset", "repeat", "fold"])
    low = scores[scores.method.str.startswith("lda")].set_index(["dataset", "repeat", "fold"])
    n = sum(ttest_rel(midr.auroc.xs(ds), low.auroc.xs(ds), alternative="greater").pvalue < .05
            for ds in ("musk1", "musk2", "elephant", "fox", "tiger"))
    assert f"ours significantly above in {n} of the 5 blocks" in lda


def test_archive_keeps_the_per_fold_scores_of_the_experiments_metrics(tmp_path):
    repo = tmp_path / "repo"
    (repo / "config" / "paper").mkdir(parents=True)
    shutil.copy(REPO / "config" / "paper" / "midr.yaml", repo / "config" / "paper")
    results = repo / "results" / "midr"
    results.mkdir(parents=True)
    shutil.copy(ARCHIVE_DIR / "midr" / f"{MIDR_RUN}.csv", results / "reproduction.csv")
    rows = pd.DataFrame({"dataset": "musk1", "method": "midr + milr", "repeat": [0, 0, 1],
                         "fold": [0, 1, 0], "auroc": [.9, .8, .85], "accuracy": [.8, .7, .75],
                         "fit_seconds": 1.0, "train_ratio": np.nan,
                         "diag.select.converged": [1, 0, 1], "diag.select.n_iter": [40, 1000, 60],
                         "diag.select.orthonormality_loss": .2, "diag.classify.converged": 1})
    rows.to_parquet(results / "scores.parquet", index=False)
    store = repo / "resources" / "reproductions"
    archive(results, repo / "config" / "paper" / "midr.yaml", store, date="2026-12-01",
            repo=repo)
    kept = store / "midr" / "midr" / "scores.csv.gz"
    first = kept.read_bytes()
    back = pd.read_csv(kept)
    assert list(back.columns) == ["dataset", "method", "repeat", "fold", "auroc", "accuracy",
                                  "diag.classify.converged", "diag.select.converged",
                                  "diag.select.n_iter"]
    assert back.auroc.tolist() == [.9, .8, .85]
    run = next(r for r in load_archive("midr", store) if r.name == "midr")
    assert run.meta["scores"] == "scores.csv.gz" and run.scores().equals(back)
    whole = tmp_path / "archive"                    # the page, beside every archived run
    shutil.copytree(ARCHIVE_DIR, whole)
    shutil.rmtree(whole / "midr" / "midr")          # in place of the archived midr run
    shutil.copytree(store / "midr" / "midr", whole / "midr" / "midr")
    for suffix in (".csv", ".yaml"):
        shutil.copy(store / "midr" / f"midr{suffix}", whole / "midr")
    section = pages(archive_dir=whole)["midr.md"].split("### midr\n")[1]
    assert ("- fits not converged (one a fold): classify 0 of 3; select 1 of 3 "
            "(iterations: median 60, max 1000)") in section
    archive(results, repo / "config" / "paper" / "midr.yaml", store, date="2026-12-01",
            repo=repo)
    assert kept.read_bytes() == first                  # no time stamp in the gzip header
    kept.unlink()
    with pytest.raises(ArchiveError, match=r"midr\.yaml: scores scores\.csv\.gz is not in"):
        load_archive("midr", store)


def test_pca_fox_gap_quotes_the_full_run():
    """The PCA-fox gap note (resources/targets/midr.yaml) quotes the archived FULL run."""
    table = pd.read_csv(ARCHIVE_DIR / "midr" / f"{MIDR_RUN}.csv")
    fox = table[(table.source == "Table 1") & (table.dataset == "fox")].set_index("paper_method")
    note = next(g for g in yaml.safe_load((TARGETS_DIR / "midr.yaml").read_text())["gaps"]
                if g["targets"] == [{"source": "Table 1", "paper_method": "PCA",
                                     "dataset": "fox"}])["text"]
    pca, ori = (float(x) for x in re.search(r"(\.\d{3}) against ORI's (\.\d{3})", note).groups())
    assert pca == pytest.approx(fox.ours["PCA"], abs=6e-4)
    assert ori == pytest.approx(fox.ours["ORI"], abs=6e-4)


def test_hydr_metrics_claim_quotes_the_full_runs_friedman_tables():
    """The HyDR-MI Table 6 claim (resources/targets/claims.yaml) quotes the archived FULL
    run's Friedman chi2 and mean ranks (its stats/ tables), and reads the same 85 blocks."""
    stats = ARCHIVE_DIR / "hydr" / "hydr-relieff" / "stats"
    table = pd.read_csv(stats / "relieff-metrics.csv").set_index("sel.percent")
    ranks = pd.read_csv(stats / "relieff-metrics_ranks.csv").pivot_table(
        index="sel.percent", columns="method", values="mean_rank")
    claim = next(c for c in load_claims()["hydr"]["claims"]
                 if c["test"].get("evidence") == ["hydr-relieff"])
    why = " ".join(claim["test"]["why"].split())
    assert "85 blocks" in why and set(table["N"]) == {85}
    chi2 = [float(x) for x in re.search(r"chi2 ([\d.]+(?: / [\d.]+){5})", why)[1].split(" / ")]
    assert chi2 == pytest.approx(list(table["chi2"]), abs=6e-3)
    lo, hi = (float(x) for x in re.search(r"mean rank ([\d.]+) to ([\d.]+)", why).groups())
    assert (ranks.idxmin(axis=1) == "min").all()
    assert (lo, hi) == pytest.approx((ranks["min"].min(), ranks["min"].max()), abs=6e-3)
    last = [float(x) for x in re.search(r"last at 10-30 % \(([\d. /]+)\)", why)[1].split(" / ")]
    assert last == pytest.approx(list(ranks["adapted"].iloc[:3]), abs=6e-3)
    assert (ranks.idxmax(axis=1).iloc[:3] == "adapted").all()


def test_hydr_metrics_claim_quotes_friedman_on_the_papers_own_tables():
    """The same claim's chi2 of the paper's own Tables 2-5 (the archived targets' accuracies,
    17 classifiers x 5 data sets a percentage) is what milbench.report.stats.friedman gives, and
    the adapted metric's first places there are at 10 and 60 % only."""
    rows = pd.read_csv(ARCHIVE_DIR / "hydr" / "hydr-relieff.csv")
    rows = rows[rows.source.str.fullmatch(r"Table [2-5]") & (rows.metric == "accuracy")]
    parts = rows.paper_method.str.extract(r"ReliefF-MI \((\w+), (\d+) %\) \+ (.+)")
    rows = rows.assign(bag_metric=parts[0], percent=parts[1].astype(int), classifier=parts[2])
    claim = next(c for c in load_claims()["hydr"]["claims"]
                 if c["test"].get("evidence") == ["hydr-relieff"])
    why = " ".join(claim["test"]["why"].split())
    quoted = re.search(r"own Tables 2-5 .*?chi2 ([\d.]+(?: / [\d.]+){5})", why)[1]
    chi2, mean_ranks = [], {}
    for percent, block in rows.groupby("percent"):
        table = block.pivot_table(index=["dataset", "classifier"], columns="bag_metric",
                                  values="paper_value")
        assert table.shape == (85, 4)
        result = friedman(table.to_numpy())
        chi2.append(result["chi2"])
        mean_ranks[percent] = pd.Series(result["ranks"].mean(axis=0), index=table.columns)
    assert [float(x) for x in quoted.split(" / ")] == pytest.approx(chi2, abs=6e-3)
    assert [p for p, r in mean_ranks.items() if r.idxmin() == "adapted"] == [10, 60]
    pattern = (r"first at 10 % and 60 % only \(at 10 % mean rank ([\d.]+) "
               r"against the minimal one's ([\d.]+)\)")
    adapted, minimal = (float(x) for x in re.search(pattern, why).groups())
    assert (adapted, minimal) == pytest.approx(
        (mean_ranks[10]["adapted"], mean_ranks[10]["min"]), abs=6e-3)


def test_a_newer_run_of_the_same_status_is_the_one_judged(tmp_path):
    """A rerun archived later (a Table-1-only experiment, say) answers the same targets: its
    results come first, count for "met" and feed the claims; the older run's stay listed."""
    store = tmp_path / "archive"
    shutil.copytree(ARCHIVE_DIR, store)
    rows = pd.read_csv(store / "midr" / f"{MIDR_RUN}.csv", dtype=str, keep_default_na=False)
    fox = (rows.source == "Table 1") & (rows.dataset == "fox") & (rows.paper_method == "MIDR")
    rows.loc[fox, ["ours", "difference", "within_tolerance", "status"]] = \
        ["0.7800", "0.0020", "True", "within tolerance"]
    rows.to_csv(store / "midr" / "midr-rerun.csv", index=False)
    meta = yaml.safe_load((store / "midr" / f"{MIDR_RUN}.yaml").read_text())
    meta.update(experiments=["midr-rerun"], date="2099-01-01")
    for key in ("figures", "scores", "stats"):
        meta.pop(key, None)
    (store / "midr" / "midr-rerun.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    out = pages(archive_dir=store)
    fox_rows = [x for x in out["midr.md"].splitlines() if x.startswith("| fox | MIDR | auroc |")]
    assert "[midr-rerun]" in fox_rows[0] and "| yes |" in fox_rows[0]
    assert f"[{MIDR_RUN}]" in fox_rows[1] and "| no |" in fox_rows[1]
    index = next(x for x in out["index.md"].splitlines() if x.startswith("| [midr]"))
    assert index.split(" | ")[3] == "11 / 20"
    claim = _claim(verdicts(archive_dir=store), "midr", "Table 1")
    assert claim["evidence"] == ["midr-rerun (FULL)"]
    ori = next(d for d in claim["details"] if d.startswith("vs ORI:"))
    assert "mean difference +.036" in ori           # fox MIDR - ORI now .780 - .589
