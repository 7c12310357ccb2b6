"""Reproduction targets of the five papers and the ours-vs-paper table.

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
"""
from __future__ import annotations

import csv
import json
import math
from functools import lru_cache
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import yaml

__all__ = ["targets", "load_targets", "reproduction_table", "TargetError", "EXPERIMENTS",
           "TOLERANCE", "TARGETS_DIR"]

#: default absolute tolerance per metric for "within tolerance" (fractions of 1).
TOLERANCE = {"accuracy": 0.03, "auroc": 0.03}
EXPERIMENTS = ("cvfs", "midr", "milsd", "hydr", "miordm")
TARGETS_DIR = Path(__file__).resolve().parents[3] / "resources" / "targets"
_ALIASES = {"cvfs-mil": "cvfs", "hydr-mi": "hydr", "hydrmi": "hydr", "cvfsmil": "cvfs"}

_COLUMNS = ["paper", "experiment", "source", "dataset", "paper_method", "selector",
            "classifier", "params", "train_ratio", "metric", "target", "target_std",
            "tolerance", "kind", "protocol", "reference"]
_CSV_COLUMNS = ["source", "dataset", "paper_method", "metric", "value", "unit", "std",
                "train_ratio", "tolerance", "kind", "protocol", "note"]


class TargetError(ValueError):
    """A malformed target file; the message names the file and line."""


@lru_cache(maxsize=1)
def _schema():
    return yaml.safe_load((TARGETS_DIR / "schema.yaml").read_text())


@lru_cache(maxsize=None)
def _validator(part):
    return jsonschema.Draft202012Validator(_schema()[part])


def _check(part, obj, where):
    errors = sorted(_validator(part).iter_errors(obj), key=lambda e: [str(p) for p in e.path])
    if errors:
        field = "/".join(map(str, errors[0].path))
        raise TargetError(f"{where}: {field + ': ' if field else ''}{errors[0].message}")


def _number(text):
    try:
        x = float(text)
    except ValueError:
        return text                     # the schema reports it as not a number
    return x if math.isfinite(x) else text


def _method(meta, label):
    """Our selector / classifier / params for a paper label: a ``methods`` entry, or the
    union of ``selectors[<left>]`` and ``classifiers[<right>]`` for "<left> + <right>"."""
    if label in meta["methods"]:
        return meta["methods"][label]
    left, _, right = label.partition(" + ")
    sel, clf = meta.get("selectors", {}).get(left), meta.get("classifiers", {}).get(right)
    if sel is None or clf is None:
        raise KeyError(label)
    return {**sel, **clf, "params": {**sel.get("params", {}), **clf.get("params", {})}}


def _csv_rows(path):
    """(line number, row) per line of a target CSV: empty cells left out, numbers parsed,
    the row checked against the schema."""
    numeric = [k for k, v in _schema()["row"]["properties"].items() if v.get("type") == "number"]
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != _CSV_COLUMNS:
            raise TargetError(f"{path}, line 1: header {reader.fieldnames}, expected "
                              f"{_CSV_COLUMNS}")
        for raw in reader:
            where = f"{path}, line {reader.line_num}"
            if None in raw or None in raw.values():
                raise TargetError(f"{where}: expected {len(_CSV_COLUMNS)} fields")
            r = {k: _number(v) if k in numeric else v for k, v in raw.items() if v != ""}
            _check("row", r, where)
            yield reader.line_num, r


def _rows(experiment, directory=TARGETS_DIR):
    """The target rows of one experiment, validated (:class:`TargetError` otherwise)."""
    meta_path = Path(directory) / f"{experiment}.yaml"
    meta = yaml.safe_load(meta_path.read_text())
    _check("paper", meta, str(meta_path))
    rows, seen = [], {}
    csv_path = Path(directory) / f"{experiment}.csv"
    for line, r in _csv_rows(csv_path):
        where = f"{csv_path}, line {line}"
        key = (r["source"], r["dataset"], r["paper_method"], r["metric"])
        if key in seen:
            raise TargetError(f"{where}: same target as line {seen[key]}: {key}")
        seen[key] = line
        for field, table in (("protocol", "protocols"), ("source", "tables")):
            if r[field] not in meta[table]:
                raise TargetError(f"{where}: {field} {r[field]!r} is not a key of {table} in "
                                  f"{meta_path.name}: {sorted(meta[table])}")
        try:
            m = _method(meta, r["paper_method"])
        except KeyError:
            raise TargetError(f"{where}: paper_method {r['paper_method']!r} is in neither "
                              f"methods nor selectors + classifiers of {meta_path.name}")
        text = meta["protocols"][r["protocol"]]
        tol = TOLERANCE.get(r["metric"], np.nan) if r["kind"] == "value" else np.nan
        rows.append(dict(
            paper=meta["paper"], experiment=experiment, source=r["source"],
            dataset=r["dataset"], paper_method=r["paper_method"], selector=m["selector"],
            classifier=m["classifier"], params=json.dumps(m.get("params", {}), sort_keys=True),
            train_ratio=r.get("train_ratio", np.nan), metric=r["metric"],
            target=r.get("value", np.nan) / (100 if r.get("unit") == "%" else 1),
            target_std=r.get("std", np.nan), tolerance=r.get("tolerance", tol), kind=r["kind"],
            protocol=f"{r['note']}. {text}" if "note" in r else text,
            reference=f"{meta['text']} line {meta['tables'][r['source']]}"))
    return rows


def load_targets(experiment, directory=TARGETS_DIR) -> pd.DataFrame:
    """The targets of one experiment read from ``directory`` (checked against the schema)."""
    return pd.DataFrame(_rows(_experiment_key(experiment), directory), columns=_COLUMNS)


@lru_cache(maxsize=None)
def _targets_cached(experiment):
    return load_targets(experiment)


def targets(experiment=None) -> pd.DataFrame:
    """All reproduction targets (a copy), optionally only those of one experiment
    (cvfs, midr, milsd, hydr, miordm; paper names such as hydr-mi are accepted); only the
    files asked for are read (once a process)."""
    if experiment is not None:
        return _targets_cached(_experiment_key(experiment)).copy()
    return pd.concat([_targets_cached(e) for e in EXPERIMENTS], ignore_index=True)


def _experiment_key(name):
    n = str(name).lower()
    n = _ALIASES.get(n, n)
    if n in EXPERIMENTS:
        return n
    for key in sorted(list(EXPERIMENTS) + list(_ALIASES), key=len, reverse=True):
        if n.startswith(key):
            return _ALIASES.get(key, key)
    raise KeyError(f"no reproduction targets for experiment {name!r}; known: {EXPERIMENTS}")


def _dataset_mask(summary, target_ds, dataset_map):
    ours = summary["dataset"].astype(str)
    mapped = ours.map(lambda s: (dataset_map or {}).get(s, s)).str.lower()
    t = str(target_ds).lower()
    return (mapped == t) | mapped.str.endswith(("-" + t, "_" + t)) \
        | mapped.str.startswith((t + "-", t + "_"))      # webkb-faculty, protein-graph


_OUT_COLUMNS = ["paper", "source", "dataset", "paper_method", "metric", "paper_value",
                "paper_std", "our_method", "ours", "ours_std", "n", "difference", "tolerance",
                "within_tolerance", "status", "kind", "protocol"]


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


def reproduction_table(summary: pd.DataFrame, experiment: str, reproduction_map=None,
                       tolerance=None, dataset_map=None, mapping=None) -> pd.DataFrame:
    """Ours next to the paper's for every target of ``experiment``.

    Columns: paper, source, dataset, paper_method, metric, paper (value), paper_std,
    our_method, ours (mean), ours_std, n, difference (ours - paper), tolerance,
    within_tolerance (True/False, NA when not judged), status, kind, protocol.
    ``tolerance`` overrides the per-metric defaults (:data:`TOLERANCE`): a float or a
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
        return pd.DataFrame(columns=_OUT_COLUMNS)
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
            row["status"] = (f"ambiguous: {len(cand)} runs match ("
                             + "; ".join(f"{r.dataset}/{r.method}" for r in cand.itertuples())
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
            ok = abs(row["difference"]) <= tol + 1e-12
            row["within_tolerance"] = bool(ok)
            row["status"] = "within tolerance" if ok else "outside tolerance"
    return pd.DataFrame(out, columns=_OUT_COLUMNS)
