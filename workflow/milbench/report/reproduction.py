"""The ours-vs-paper table of an experiment, and the reproduction commands.

The targets are data: ``resources/targets/<experiment>.csv`` holds one row per number
transcribed from a paper in ``../shared/papers`` (table, data set, the paper's method label,
metric, value as printed, std, kind, protocol id), and ``<experiment>.yaml`` its protocols,
the line of each table in the paper's text, and the mapping of the paper's method labels
to our selector / classifier / parameter hints; ``schema.yaml`` is checked on loading.
:func:`targets` returns them, one row per (paper, table, data set, method, metric), on our
scale: accuracy and AUROC as fractions, times in seconds.

Matching a target to our runs (:func:`reproduction_table`).  ``summary`` is the
per-(dataset, method) aggregation (columns dataset, method, selector, classifier,
``<metric>_mean``, ``<metric>_std``, n; optionally train_ratio and flattened parameter
columns ``sel.<p>`` / ``clf.<p>``).  For each target:

1. the data set must match: equal names, or our name ending in ``-<paper name>`` /
   ``_<paper name>`` (``webkb-faculty`` matches ``faculty``), or ``dataset_map`` maps our
   name to the paper's;
2. if ``reproduction_map`` (a dict from the experiment config:
   ``{paper method label: our method label}``; the paper labels are the ``paper_method``
   column, e.g. ``"MIDR"`` or ``"HyDR-MI + MIWrapper (SMO)"``) names the target's paper
   method, the summary rows with that ``method`` are used (the other direction,
   ``{our label: paper label}``, is accepted too; a paper label may be followed by a
   comment, "KISVM (bag level)"; our side may also be a classifier or selector name);
3. otherwise the rows whose ``selector`` and ``classifier`` equal the target's config
   names; then, where the summary has the columns, the target's parameter hints
   (``params``, e.g. ``{"clf.estimator": "svm"}``) and its ``train_ratio`` narrow them.
   One row left = a match; none = "not run"; several = "ambiguous" (listing them: add
   the paper label to ``reproduction_map``).

Commands (``python -m milbench.report.reproduction -h``): ``archive`` keeps a finished run in
``resources/reproductions/`` (:mod:`milbench.report.reproduction_archive`), ``compare`` says
which numbers of a rerun differ from it (:mod:`milbench.report.reproduction_compare`),
``keep`` / ``restore`` a run in parts (:mod:`milbench.report.reproduction_parts`), ``docs``
writes ``docs/reproduction/`` (:mod:`milbench.report.reproduction_docs`) and the benchmark
configurations' pages (``docs/deep-mil.md``, :mod:`milbench.report.benchmark_docs`).
``archive``, ``keep`` and ``restore`` take a benchmark configuration's experiments too
(``config/deep.yaml``: deep, deep-musk2, ...; kept in ``resources/reproductions/deep/``).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from milbench.report import (
    benchmark_docs,
    reproduction_archive,
    reproduction_compare,
    reproduction_docs,
    reproduction_parts,
)
from milbench.report.targets import EXPERIMENTS, TABLE_COLUMNS, TARGETS_DIR, targets, within

__all__ = ["reproduction_table", "no_targets_table", "main"]


def _dataset_mask(summary, target_ds, dataset_map):
    ours = summary["dataset"].astype(str)
    mapped = ours.map(lambda s: (dataset_map or {}).get(s, s)).str.lower()
    t = str(target_ds).lower()
    return (mapped == t) | mapped.str.endswith(("-" + t, "_" + t)) \
        | mapped.str.startswith((t + "-", t + "_"))      # webkb-faculty, protein-graph


def _label_matches(given, paper_label):
    """A config label names a paper method when equal to it or when it starts with it
    followed by a space or parenthesis ("KISVM (bag level)" names "KISVM")."""
    g, p = str(given).strip(), str(paper_label)
    return g == p or g.startswith(p + " ") or g.startswith(p + "(")


def _paper_to_ours(mapping, paper_labels):
    """Normalise a reproduction_map to {paper label: our label(s)}.  Either direction is
    accepted per entry: {paper: ours} or {ours: paper} (as long as one side names a paper
    method of the experiment); paper labels may carry a trailing comment."""
    labels = sorted(set(paper_labels), key=len, reverse=True)
    out = {}
    for k, v in mapping.items():
        hit_k = [p for p in labels if _label_matches(k, p)]
        vals = [v] if isinstance(v, str) else (list(v) if isinstance(v, (list, tuple)) else [])
        hit_v = [p for p in labels if len(vals) == 1 and _label_matches(vals[0], p)]
        if hit_k:
            out.setdefault(hit_k[0], v)
        elif hit_v:
            out.setdefault(hit_v[0], k)
    return out


def _ours(rows, wanted):
    """Summary rows meant by our labels: exact method labels, else classifier or selector
    names."""
    hit = rows["method"].isin(wanted)
    if not hit.any():
        hit = rows["classifier"].isin(wanted) | rows["selector"].isin(wanted)
    return rows[hit]


def _method_rows(summary, t, rmap):
    """The summary rows (over every data set) of target ``t``'s paper method."""
    if t.paper_method in rmap:
        want = rmap[t.paper_method]
        rows = _ours(summary, [want] if isinstance(want, str) else list(want))
    else:
        rows = summary[(summary["selector"] == t.selector)
                       & (summary["classifier"] == t.classifier)]
    return rows[rows["train_ratio"].isna()]


def _friedman_ranks(summary, tg, rmap):
    """{(metric, paper method): (mean rank, data sets, methods ranked, our method)} for the
    ``friedman_rank_<m>``
    statistics: each paper method ranked among the paper's methods of that statistic by
    ``<m>_mean`` on every data set where all of them ran, ranks averaged over those data sets,
    in the paper's convention (highest = best; ties share the mean rank).  Empty for a
    statistic with a method not run, or run more than once on a data set."""
    out = {}
    stats = tg[(tg["kind"] == "statistic") & tg["metric"].str.startswith("friedman_rank_")]
    for metric, group in stats.groupby("metric"):
        col = metric.removeprefix("friedman_rank_") + "_mean"
        if col not in summary.columns:
            continue
        columns = {}
        for t in group.itertuples(index=False):
            rows = _method_rows(summary, t, rmap)
            if rows.empty or rows["dataset"].duplicated().any():
                columns = None
                break
            columns[t.paper_method] = (rows.set_index("dataset")[col], rows["method"].iloc[0])
        if not columns:
            continue
        table = pd.DataFrame({p: v for p, (v, _) in columns.items()}).dropna()
        if table.empty:
            continue
        ranks = pd.DataFrame(rankdata(table.to_numpy(), axis=1), columns=table.columns)
        for p, mean in ranks.mean().items():
            out[(metric, p)] = (float(mean), len(table), len(columns), columns[p][1])
    return out


def reproduction_table(summary: pd.DataFrame, experiment: str, reproduction_map=None,
                       tolerance=None, dataset_map=None, mapping=None) -> pd.DataFrame:
    """Ours next to the paper's for every target of ``experiment``.

    Columns: paper, source, dataset, paper_method, metric, paper (value), paper_std,
    our_method, ours (mean), ours_std, n, difference (ours - paper), tolerance,
    within_tolerance (True/False, NA when not judged), status, kind, protocol.
    ``tolerance`` overrides the per-metric defaults (:data:`milbench.report.targets.TOLERANCE`): a float or a
    {metric: float} dict.  Status values: "within tolerance", "outside tolerance",
    "reference only (not judged)", "not run", "not measured", "ambiguous: ...",
    "cannot be reproduced: ...", "qualitative: ...", "statistic: ...".
    See the module docstring for how targets are matched to our runs.  ``mapping`` is an
    alias of ``reproduction_map``.  An experiment without targets (e.g. a quick-start
    check) gives an empty table with these columns.
    """
    try:
        tg = targets(experiment)
    except KeyError:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    rmap = _paper_to_ours(dict(reproduction_map or mapping or {}), tg["paper_method"])
    summary = summary.reset_index(drop=True).copy()
    if "train_ratio" not in summary.columns:
        summary["train_ratio"] = np.nan
    by_dataset = {}         # paper data set -> {(selector, classifier): rows}, all rows

    def _rows_for(dataset):
        if dataset not in by_dataset:
            sub = summary[_dataset_mask(summary, dataset, dataset_map)]
            groups = {k: g for k, g in sub.groupby(["selector", "classifier"], sort=False)}
            by_dataset[dataset] = (groups, sub)
        return by_dataset[dataset]

    ranks = _friedman_ranks(summary, tg, rmap)
    out = []
    for t in tg.itertuples(index=False):
        tol = t.tolerance
        if isinstance(tolerance, dict):
            tol = tolerance.get(t.metric, tol)
        elif tolerance is not None and t.kind == "value":
            tol = float(tolerance)
        row = dict(paper=t.paper, source=t.source, dataset=t.dataset,
                   paper_method=t.paper_method, metric=t.metric, paper_value=t.target,
                   paper_std=t.target_std, our_method="", ours=np.nan, ours_std=np.nan,
                   n=np.nan, difference=np.nan, tolerance=tol, within_tolerance=pd.NA,
                   status="", kind=t.kind, protocol=t.protocol)
        out.append(row)
        if t.kind == "unavailable":
            row["status"] = "cannot be reproduced: private data set"
            continue
        if t.kind == "qualitative":
            row["status"] = "qualitative: no number in the paper's text; see stats/ and figures/"
            continue
        if t.kind == "statistic":
            if (t.metric, t.paper_method) in ranks:
                rank, blocks, k, ours = ranks[(t.metric, t.paper_method)]
                row.update(ours=rank, n=blocks, our_method=ours,
                           status=f"statistic (not judged): our mean rank among the paper's "
                                  f"{k} methods over our {blocks} data sets, highest = best")
            else:
                row["status"] = "statistic: compare with the stats/ tables"
            continue
        groups, all_rows = _rows_for(t.dataset)
        if t.paper_method in rmap:
            want = rmap[t.paper_method]
            cand = _ours(all_rows, [want] if isinstance(want, str) else list(want))
        else:
            cand = groups.get((t.selector, t.classifier), all_rows.iloc[:0])
            for col, val in json.loads(t.params).items():
                if col in cand.columns and not cand.empty:
                    cand = cand[cand[col].astype(str) == str(val)]
        ratio = cand["train_ratio"].astype(float)
        if np.isnan(t.train_ratio):
            cand = cand[ratio.isna()]           # a training-ratio run is another protocol
        elif ratio.notna().any():
            cand = cand[np.isclose(ratio, t.train_ratio)]
        if cand.empty:
            row["status"] = "not run"
            continue
        if len(cand) > 1:
            names = [f"{r.dataset}/{r.method}" for r in cand.itertuples()]
            more = f"; and {len(names) - 5} more" if len(names) > 6 else ""
            row["status"] = (f"ambiguous: {len(cand)} runs match ("
                             + "; ".join(names[:5] if more else names) + more
                             + "); add the paper label to reproduction_map")
            continue
        c = cand.iloc[0]
        row["our_method"] = c["method"]
        mcol = f"{t.metric}_mean"
        if mcol not in c.index or pd.isna(c[mcol]):
            row["status"] = f"not measured (no {mcol} in the summary)"
            continue
        row.update(ours=float(c[mcol]),
                   ours_std=float(c.get(f"{t.metric}_std", np.nan)),
                   n=c.get("n", np.nan))
        row["difference"] = row["ours"] - float(t.target)
        if t.kind == "reference" or pd.isna(tol):
            row["status"] = "reference only (not judged)"
        else:
            ok = within(row["difference"], tol)
            row["within_tolerance"] = bool(ok)
            row["status"] = "within tolerance" if ok else "outside tolerance"
    return pd.DataFrame(out, columns=TABLE_COLUMNS)


def no_targets_table(experiment: str) -> pd.DataFrame:
    """The reproduction table of an experiment without paper targets (a quick-start or a
    user's own benchmark): one row whose ``status`` says why there is nothing to compare,
    so that the workflow's ``reproduction.csv`` (a declared output of every experiment) never
    reads as a table left empty by a failure."""
    row = dict.fromkeys(TABLE_COLUMNS, pd.NA)
    row["status"] = (f"no paper targets for experiment {experiment!r}: it is not a paper's "
                     f"configuration (targets exist for {', '.join(EXPERIMENTS)} and "
                     "experiments named after them, e.g. miordm-20)")
    return pd.DataFrame([row], columns=TABLE_COLUMNS)


def main(argv=None):
    """``archive`` a finished run into resources/reproductions/, ``keep`` the finished methods of
    an unfinished one there and ``restore`` them in a later session, or write the ``docs``."""
    ap = argparse.ArgumentParser(prog="python -m milbench.report.reproduction",
                                 description=main.__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("archive", help="keep results/<experiment>/reproduction.csv and its "
                       "provenance in resources/reproductions/<paper>/ (a benchmark's, e.g. "
                       "deep: also its summary, stats tables and CD diagrams)")
    a.add_argument("results", help="results/<experiment> of a finished run")
    a.add_argument("--config", required=True, help="the config file the run used")
    a.add_argument("--reduced", help="what the run cut from the paper's protocol (marks it "
                   "REDUCED whatever its config)")
    a.add_argument("--figure", action="append", default=[], metavar="[SOURCE=]PNG",
                   help="a figure to keep beside the paper's table or figure SOURCE")
    a.add_argument("--date", help="YYYY-MM-DD the run finished (default: reproduction.csv's "
                   "modification day, UTC)")
    a.add_argument("--archive", default=str(reproduction_archive.ARCHIVE_DIR))
    k = sub.add_parser("keep", help="keep the finished method files of results/<experiment> "
                       "in resources/reproductions/<paper>/parts/<experiment>/ (a run in parts)")
    k.add_argument("results", help="results/<experiment> of an unfinished run")
    k.add_argument("--config", required=True, help="the config file the run uses")
    k.add_argument("--drop", action="store_true", help="remove the parts instead (the "
                   "experiment has been archived whole)")
    k.add_argument("--archive", default=str(reproduction_archive.ARCHIVE_DIR))
    r = sub.add_parser("restore", help="put the kept parts of an experiment back into "
                       "results/, those the config and code still give")
    r.add_argument("experiment")
    r.add_argument("--config", required=True, help="the config file the run uses")
    r.add_argument("--results", default="results")
    r.add_argument("--archive", default=str(reproduction_archive.ARCHIVE_DIR))
    c = sub.add_parser("compare", help="which targets of a rerun differ from its archived "
                       "run (exit 1 when any does)")
    c.add_argument("results", help="results/<experiment> of the rerun")
    c.add_argument("--tolerance", type=float, default=0.0,
                   help="how far ours may move (default 0: equal to the 4 decimals written)")
    c.add_argument("--archive", default=str(reproduction_archive.ARCHIVE_DIR))
    d = sub.add_parser("docs", help="write docs/reproduction/<paper>.md, index.md, the "
                       "README's verdict table and the benchmarks' pages (docs/deep-mil.md)")
    d.add_argument("--out", default=str(reproduction_docs.DOCS_DIR))
    d.add_argument("--targets", default=str(TARGETS_DIR))
    d.add_argument("--archive", default=str(reproduction_archive.ARCHIVE_DIR))
    d.add_argument("--readme", help="the README.md whose verdict table to rewrite (default: the "
                   "repository's, when --out is the default)")
    d.add_argument("--benchmark-out", help="the folder of the benchmarks' pages (default: the "
                   "repository's docs/, when --out is the default; none otherwise)")
    args = ap.parse_args(argv)
    try:
        status = _dispatch(args)
    except reproduction_archive.ArchiveError as e:
        ap.exit(2, f"{ap.prog} {args.command}: {e}\n")
    if status:
        ap.exit(status)


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is one ("1 method file", "12 method files")."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _dispatch(args):
    if args.command == "archive":
        path, legacy = reproduction_archive.archive(args.results, args.config, args.archive,
                                                    args.reduced, args.figure, args.date)
        print(f"archived {path} (and {path.with_suffix('.yaml').name})")
        for name in legacy:
            print(f"legacy entry {name} covers the same experiment: remove it (and its runs in "
                  f"the targets' gaps) if this run replaces it")
        print(f"then: {reproduction_docs.COMMAND}")
    elif args.command in ("keep", "restore"):
        if args.command == "keep":
            done, cells, skipped = reproduction_parts.keep(args.results, args.config,
                                                           args.archive, drop=args.drop)
            verb = "kept"
        else:
            done, cells, skipped = reproduction_parts.restore(args.experiment, args.config,
                                                              args.results, args.archive)
            verb = "restored"
        for rel in done:
            print(f"{verb} {rel}")
        for rel, n in cells.items():
            print(f"{verb} {_count(n, 'finished cell')} of the unfinished job of {rel}")
        for rel, why in skipped.items():
            print(f"not {verb} {rel}: {why}")
        print("parts dropped" if getattr(args, "drop", False) else
              f"{_count(len(done), 'method file')} {verb}, {len(skipped)} not"
              + (f"; finished cells of {_count(len(cells), 'unfinished job')} {verb}"
                 if cells else ""))
    elif args.command == "compare":
        return _compare(args)
    else:
        readme = args.readme or (reproduction_docs.README
                                 if Path(args.out) == reproduction_docs.DOCS_DIR else None)
        default = Path(args.out) == reproduction_docs.DOCS_DIR
        bench = args.benchmark_out or (benchmark_docs.DOCS_DIR if default else None)
        for path in reproduction_docs.write_pages(args.out, args.targets, args.archive, readme):
            print(path)
        for path in benchmark_docs.write_pages(bench, args.archive) if bench else ():
            print(path)
    return 0


def _compare(args):
    diff, run, n = reproduction_compare.compare(args.results, args.archive, args.tolerance)
    where = (f"its archived run {run.csv_path.parent.name}/{run.csv_path.name} "
             f"({run.meta['date'] or 'undated'}, {run.meta['status']})")
    if diff.empty:
        print(f"experiment {run.name}: all {n} paper targets equal to {where} "
              f"(tolerance {args.tolerance:g})")
        return 0
    print(f"experiment {run.name}: {len(diff)} of {n} paper targets differ from {where} "
          f"(tolerance {args.tolerance:g}):")
    with pd.option_context("display.max_rows", None, "display.width", 200,
                           "display.max_colwidth", 40):
        print(diff.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    return 1


if __name__ == "__main__":
    main()
