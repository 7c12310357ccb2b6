"""The generated page of the benchmark configuration ``config/deep.yaml``: ``docs/deep-mil.md``.

A benchmark is no paper of ours: no targets, no claims, no verdicts.  Its page says what it runs
and how (in parts too), then shows what its archived runs
(``resources/reproductions/deep/``, :mod:`milbench.report.reproduction_archive`) hold: accuracy
and AUROC, mean ± sd over the folds per method and data set (from the run's per-fold scores, or
its summary.csv when it kept none), the figures it kept and its significance tables (Friedman
with Nemenyi critical differences; paired t-tests over the folds).  Then the protocol of the
authors' released code beside ours.  ``python -m milbench.report.reproduction docs`` writes it
and a test fails when the committed page differs.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import yaml

from milbench.report.reproduction_archive import ARCHIVE_DIR, REPO, SCORES, STATS, load_archive
from milbench.report.reproduction_claims import _p
from milbench.report.reproduction_docs import COMMAND, _code, _cpu, _table, _wall
from milbench.report.reproduction_parts import kept_parts
from milbench.report.targets import reference_config

__all__ = ["pages", "write_pages", "DOCS_DIR", "PAGES"]

DOCS_DIR = REPO / "docs"
#: benchmark key -> its page in docs/
PAGES = {"deep": "deep-mil.md"}
PLANS_DIR = REPO / "resources" / "plans"
METRICS = ("accuracy", "auroc")
CPU = "fit_cpu_seconds"
_DASH = "—"

MINNS = "[yanyongluan/MINNs](https://github.com/yanyongluan/MINNs) at commit f816645"
ATTENTION = ("[AMLab-Amsterdam/AttentionDeepMIL](https://github.com/AMLab-Amsterdam/"
             "AttentionDeepMIL) at commit 031ee5b")

_INTRO = """\
A benchmark beside the papers, not a reproduction of one: the deep MIL networks mi-Net and
MI-Net (plain, with deep supervision, with residual connections; Wang, Yan, Tang, Bai & Liu
2018, Pattern Recognition 74), attention and gated-attention pooling (Ilse, Tomczak & Welling
2018, ICML) and DSMIL (Li, Li & Eliceiri 2021, CVPR) against MILR, mi-SVM and MI-SVM on musk1,
musk2, elephant, fox and tiger, 5 × 10-fold cross-validation on folds every method shares. It
has no targets, so no verdicts. The settings are in `config/deep.yaml`'s header, the methods'
parameters in [methods.md](methods.md). The commands below run in the project's environment, from
the checkout's root: `source .venv/bin/activate` first (the [README](../README.md)'s setup makes
`.venv`)."""

_RUNNING = """\
The data sets are downloaded from their canonical hosts (`offline: false`); `mirror:` replaces
those hosts with a directory or URL holding the same file names. A run longer than one session
goes in parts: before a session ends, `keep` copies the finished method files (and the finished
cells of a stopped method job) of each experiment into `resources/reproductions/deep/parts/`;
a later session runs `restore`, then the same `snakemake` command, which computes only the
rest. `restore` puts back only what the config and the code still give, and only once the data
and the folds exist (it names the command that builds them otherwise)."""

_PUBLISHED = """\
Not transcribed. No readable copy of Ilse et al.'s Table 1 (2018, ICML) or of Wang et al.'s
results table (2018, Pattern Recognition) was found in the sources searched here, and neither
authors' repository has a results table in its README, so this page prints no published
number. Compare with the papers' tables directly, with the protocol differences below in
mind."""

_INFLATION = """\
Selecting each fold's best epoch by its test accuracy (a "best test epoch" figure) is selection
on test data; this benchmark never does it. `benchmarks/methods/bench_deep.py --inflation`
measures how much it would add: [performance.md](performance.md#deep-mil-networks)."""


def _protocol_rows():
    """[aspect, Wang et al.'s code, Ilse et al.'s code, this benchmark]."""
    return [
        ["features",
         f"{MINNS}, `mil_nets/dataset.py`: z-scored with the mean and std of all instances of "
         "the data set, before the split (test instances included)",
         "not stated for these data sets (the released code is the MNIST-bags experiment's)",
         "min-max scaled (`scale: minmax`), then z-scored by the networks (`standardize`), both "
         "fitted on each fold's training instances only"],
        ["folds",
         "`mil_nets/dataset.py`: `KFold(num_bag, n_folds=n_folds, shuffle=True, "
         "random_state=None)`, 5 runs of 10 folds: bag-level, unstratified, unseeded (not "
         "repeatable)",
         _DASH,
         "stratified 10-fold, 5 repeats, repeat r shuffled with seed 0 + r; one fold file per "
         "data set, shared by every method, MILR, mi-SVM and MI-SVM included"],
        ["model scored",
         "`mi_Net.py`, `MI_Net.py`, `MI_Net_with_DS.py`, `MI_Net_with_RC.py`: the test accuracy "
         "after the last of 50 epochs; no validation split, no early stopping",
         "README: \"No validation set is used during training, no early stopping\" "
         "(MNIST-bags)",
         "the last epoch's model; nothing is chosen on the test fold"],
        ["optimiser",
         "`SGD(lr=args.init_lr, decay=1e-4, momentum=args.momentum, nesterov=True)`, momentum "
         ".9; `l2(weight_decay)` on the kernels; README: learning rate / weight decay per data "
         "set (musk1 5e-4 / .005, musk2 5e-4 / .03, fox 1e-4 / .01, tiger 5e-4 / .005, "
         "elephant 1e-4 / .005), 50 epochs",
         "README: Adam, 20 epochs (MNIST-bags); the settings of its Table 1 runs are not "
         "transcribed here",
         "MI-Net family: Nesterov SGD, momentum .9, learning rate decayed by 1e-4 a step, l2 on "
         "the weight matrices, 50 epochs; `deep` at the code's defaults 5e-4 / .005 on all five "
         "data sets, `deep-musk2`, `deep-fox`, `deep-elephant` at those data sets' README "
         "settings. Attention, gated attention, DSMIL: Adam, learning rate 5e-4, weight decay "
         "5e-5 (`config/deep.yaml`: PyTorch's 1e-4), 50 epochs"],
        ["tuning",
         "none: the README's fixed settings",
         _DASH,
         "deep networks: none (fixed settings); MILR, mi-SVM, MI-SVM: C by inner 5-fold "
         "cross-validation on the training bags (accuracy)"],
        ["reported",
         "`np.mean(acc)` and `np.std(acc)` over the 50 fold accuracies (np.std: ddof 0)",
         _DASH,
         "accuracy and AUROC, mean and sd (ddof 1) over the 50 folds"],
    ]


# --------------------------------------------------------------------------- formatting
def _f3(x):
    return _DASH if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _text(x):
    """A table cell's text; "" for an empty (NaN) one."""
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def _mean_sd(mean, sd):
    return _DASH if math.isnan(mean) else f"{mean:.3f}" + ("" if math.isnan(sd)
                                                          else f" ± {sd:.3f}")


def _plan_line(key, plans_dir):
    """The cost of the benchmark from its plan kept in resources/plans/, else how to get it."""
    plan = Path(plans_dir) / f"{key}.csv"
    how = f"`python -m milbench.experiment.plan {_rel(reference_config(key))} --cores 16`"
    if plan.is_file():
        p = pd.read_csv(plan)
        hours = p.groupby("experiment", sort=False)["experiment_cpu"].first().sum() / 3600
        return (f"Cost: {hours:.1f} CPU-hours in all, by the plan kept in "
                f"`resources/plans/{plan.name}` ({how} makes a new one).")
    return (f"Cost: no plan of it is kept in `resources/plans/`; {how} estimates it before a "
            "run, and [performance.md](performance.md#deep-mil-networks) reports one.")


def _rel(path):
    return Path(path).resolve().relative_to(REPO).as_posix()


# --------------------------------------------------------------------------- a run's numbers
def _means(run):
    """(DataFrame dataset, method, <metric>_mean, <metric>_std over the folds; where from)."""
    scores = run.scores()
    if scores is not None:
        metrics = [m for m in (*METRICS, CPU) if m in scores.columns]
        g = scores.groupby(["dataset", "method"], sort=False)[metrics]
        out = g.mean().add_suffix("_mean").join(g.std(ddof=1).add_suffix("_std")).reset_index()
        return out, f"the run's per-fold scores (`{run.name}/{SCORES}`)"
    if "summary" in run.meta:
        return (pd.read_csv(run.folder / run.meta["summary"]),
                f"the run's summary (`{run.name}/{run.meta['summary']}`)")
    return None, None


_TABLES = {"accuracy": "Accuracy:", "auroc": "AUROC:",
           CPU: "CPU seconds per fit (training, inner tuning included; mean over the folds, "
                "all on one machine in one run):"}


def _cell(metric, record):
    """A table cell: mean ± sd of a score, the mean alone (two decimals) of the CPU seconds."""
    mean = float(record[f"{metric}_mean"])
    if metric == CPU:
        return _DASH if math.isnan(mean) else f"{mean:.2f}"
    return _mean_sd(mean, float(record.get(f"{metric}_std", math.nan)))


def _metric_tables(run):
    table, source = _means(run)
    if table is None:
        return ["The run archived neither its per-fold scores nor its summary.", ""]
    datasets = list(dict.fromkeys(table["dataset"].astype(str)))
    methods = list(dict.fromkeys(table["method"].astype(str)))
    lines = [f"Mean ± sd over the folds, from {source}.", ""]
    for metric, title in _TABLES.items():
        if f"{metric}_mean" not in table.columns:
            continue
        cell = {(str(r["dataset"]), str(r["method"])): _cell(metric, r)
                for r in table.to_dict("records")}
        lines += [title, ""]
        lines += _table(["method", *datasets],
                        [[m, *(cell.get((d, m), _DASH) for d in datasets)] for m in methods])
        lines.append("")
    return lines


def _stats_section(run):
    """The run's Friedman and pairwise tables, in the order the run's config lists them."""
    files = run.meta.get("stats", [])
    names = {Path(f).stem for f in files}
    lines = []
    for f in files:
        name = Path(f).stem
        if any(name == base + s for base in names for s in ("_ranks", "_nemenyi", "_excluded")):
            continue
        table = pd.read_csv(run.folder / STATS / f)
        if table.empty:
            continue
        if "chi2" in table.columns or ("k" in table.columns and "N" in table.columns):
            lines += _friedman(run, name, table)
        elif {"method_a", "method_b", "p"} <= set(table.columns):
            lines += _pairwise(name, table)
    return lines


def _friedman(run, name, summary):
    lines = []
    for r in summary.to_dict("records"):
        head = f"**{name}** ({r['metric']}): Friedman test over {r['N']} data sets, {r['k']} methods"
        if "chi2" not in r or pd.isna(r.get("chi2")):
            lines += [f"{head}: {r.get('note', 'not run')}.", ""]
            continue
        note = _text(r.get("note"))
        lines += [f"{head}: χ²_F = {r['chi2']:.2f}, {_p(r['p'])}; Iman-Davenport F = "
                  f"{r['F_ID']:.2f}, {_p(r['p_ID'])}; Nemenyi critical difference "
                  f"{r['cd_nemenyi']:.2f} (α = {r['alpha']:g})." + (f" Note: {note}." if note
                                                                    else ""), ""]
    ranks = run.folder / STATS / f"{name}_ranks.csv"
    nemenyi = run.folder / STATS / f"{name}_nemenyi.csv"
    if ranks.is_file():
        rk = pd.read_csv(ranks)
        if not rk.empty:
            lines += _table(["method", "mean rank (1 = best)", f"mean {rk['metric'].iloc[0]}"],
                            [[r["method"], f"{r['mean_rank']:.2f}", _f3(r["mean_metric"])]
                             for r in rk.to_dict("records")])
            lines.append("")
    if nemenyi.is_file():
        nm = pd.read_csv(nemenyi)
        hit = nm[nm["significant"].astype(bool)] if not nm.empty else nm
        pairs = "; ".join(f"{r['method_a']} ahead of {r['method_b']}"
                          for r in hit.to_dict("records"))
        lines += [f"Pairs further apart than the critical difference: {pairs or 'none'}.", ""]
    excluded = run.folder / STATS / f"{name}_excluded.csv"
    if excluded.is_file() and not (ex := pd.read_csv(excluded)).empty:
        lines += ["Left out: " + "; ".join(f"{r['block']} ({r['reason']})"
                                           for r in ex.to_dict("records")) + ".", ""]
    return lines


def _pairwise(name, table):
    first = table.iloc[0]
    group = [c for c in ("dataset", "train_ratio") if c in table.columns]
    adj = "p (Holm)" if str(first.get("correction", "none")) == "holm" else "p"
    per = "dataset" in group
    over = "the matched folds of each data set" if per else "the data sets"
    adjusted = f" p Holm-adjusted{' within each data set' if per else ''}," if adj != "p" else ""
    notes = dict.fromkeys(map(_text, table["note"] if "note" in table else []))
    lines = [f"**{name}** ({first['metric']}): {first['test']} test over {over} "
             f"({first['n_pairs']} pairs),{adjusted} α = {first['alpha']:g}."
             + "".join(f" Note: {n}." for n in notes if n), ""]
    rows = [[*(str(r[c]) for c in group), str(r["method_a"]), str(r["method_b"]),
             _f3(r.get("mean_a")), _f3(r.get("mean_b")),
             _p(r.get("p_adj", r["p"])).removeprefix("p = ").removeprefix("p "),
             "yes" if bool(r.get("significant")) else "no"]
            for r in table.to_dict("records")]
    lines += _table([*group, "a", "b", "mean a", "mean b", adj, "significant"], rows)
    return lines + [""]


def _run_section(run):
    m = run.meta
    lines = [f"### {run.name}", ""]
    facts = [("status", run.status + (f": {m['reduced']}" if m.get("reduced") else "")),
             ("config", _code(m["config"])), ("data sets", ", ".join(m["datasets"]) or _DASH),
             ("CPU", _cpu(m["cpu_seconds"])), *_wall(m), ("date", m["date"] or "not recorded"),
             ("regenerate", _code(m["command"]))]
    if m.get("description"):
        facts.insert(0, ("experiment", m["description"]))
    if m.get("remark"):
        facts.append(("remark", m["remark"]))
    lines += [f"- {k}: {' '.join(str(v).split())}" for k, v in facts] + [""]
    lines += _metric_tables(run)
    for fig in m.get("figures", []):
        path = f"../resources/reproductions/{m['paper']}/{run.name}/{fig['file']}"
        lines += [f"![{fig['file']}]({path})", ""]
    stats = _stats_section(run)
    if stats:
        lines += ["Significance tests the run computed (its `stats:`):", ""] + stats
    return lines


def _parts_lines(key, archive_dir):
    parts = kept_parts(key, archive_dir)
    if not parts:
        return []
    rows = [[f"`{exp}`", f"{len(p['files'])} of {p['method_files']}",
             str(sum(c["cells"] for c in p.get("cells", {}).values()) or _DASH),
             _cpu((p["cpu_seconds"] or 0)
                  + sum(c["cpu_seconds"] for c in p.get("cells", {}).values())),
             str(p["date"])] for exp, p in parts.items()]
    return (["Kept in parts (not yet archived; `restore` them, then run the rest):", ""]
            + _table(["experiment", "method files kept", "cells of unfinished jobs", "their CPU",
                      "kept on"], rows) + [""])


# --------------------------------------------------------------------------- the page
def _deep_page(archive_dir, plans_dir):
    key = "deep"
    config = _rel(reference_config(key))
    experiments = list(yaml.safe_load(reference_config(key).read_text())["experiments"])
    runs = load_archive(key, archive_dir)
    lines = ["# Deep MIL networks beside classic MIL", "",
             f"<!-- generated by `{COMMAND}`; edit resources/reproductions/{key}/ or "
             "workflow/milbench/report/benchmark_docs.py instead -->", "",
             " ".join(_INTRO.split()), "", "## Running it", ""]
    cmd = "python -m milbench.report.reproduction"
    first, rest = experiments[0], experiments[1:]
    lines += _table(["what", "command"], [
        ["all of it", f"`snakemake --cores 16 --configfile {config}`"],
        ["data from a mirror", f"`snakemake --cores 16 --configfile {config} "
                               "--config mirror=<dir-or-url>`"],
        ["its cost, before running", f"`python -m milbench.experiment.plan {config} "
                                     "--cores 16`"],
        ["end of a session: keep what finished", f"`{cmd} keep results/{first} --config "
                                                 f"{config}`"],
        ["next session, before running", f"`{cmd} restore {first} --config {config}`"],
    ])
    lines += ["", f"The config's experiments: `{first}`, and "
              f"{', '.join(f'`{e}`' for e in rest)}, kept, restored and archived like "
              f"`{first}`, by their names. " + " ".join(_RUNNING.split()) + f" Once an experiment has "
              f"finished: `{cmd} archive results/{first} --config {config}` keeps it in the "
              f"archive (this page shows it), `{cmd} keep results/{first} --config {config} "
              f"--drop` removes its parts, and `{COMMAND}` rewrites this page.", "",
              _plan_line(key, plans_dir), "",
              "## Our results", ""]
    lines += _parts_lines(key, archive_dir)
    if runs:
        lines += [f"Archived runs, in `resources/reproductions/{key}/` (archiving keeps the "
                  "run's reproduction.csv, per-fold scores, summary, significance tables and "
                  "critical-difference diagrams).", ""]
        lines += _table(["run", "status", "data sets", "CPU", "date"],
                        [[f"[{r.name}](#{r.name.lower()})", r.status,
                          ", ".join(r.meta["datasets"]) or _DASH, _cpu(r.meta["cpu_seconds"]),
                          r.meta["date"] or "not recorded"] for r in runs])
        lines.append("")
        for r in runs:
            lines += _run_section(r)
    else:
        lines += [f"No run of `{config}` is archived yet (`resources/reproductions/{key}/` "
                  "holds none), so this page shows no numbers of ours.", ""]
    lines += ["## Published numbers", "", " ".join(_PUBLISHED.split()), "",
              "## Protocol differences", "",
              f"The authors' released code: Wang et al.'s {MINNS}; Ilse et al.'s "
              f"{ATTENTION}, whose README documents only its MNIST-bags experiment.",
              ""]
    lines += _table(["", "Wang et al.'s code", "Ilse et al.'s code", "this benchmark"],
                    _protocol_rows())
    lines += ["", "## Best-test-epoch inflation", "", " ".join(_INFLATION.split())]
    return "\n".join(lines).rstrip("\n") + "\n"


def pages(archive_dir=ARCHIVE_DIR, plans_dir=PLANS_DIR) -> dict:
    """{file name in docs/: Markdown} of every benchmark's page."""
    return {PAGES["deep"]: _deep_page(archive_dir, plans_dir)}


def write_pages(out_dir=DOCS_DIR, archive_dir=ARCHIVE_DIR, plans_dir=PLANS_DIR) -> list:
    """Write :func:`pages` into ``out_dir``; returns the paths written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages(archive_dir, plans_dir).items():
        (out_dir / name).write_text(text, encoding="utf-8")
        written.append(out_dir / name)
    return written
