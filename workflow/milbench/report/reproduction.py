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

Gap explanations are data too: the ``gaps`` list of ``<experiment>.yaml`` says why our
numbers differ from the paper's, each entry for the targets its selectors pick (``source``,
``dataset``, ``paper_method``, ``metric``: a name or a list) and, with ``runs``, only for the
results of those archived runs (:mod:`milbench.report.reproduction_archive`);
:func:`load_gaps` returns them checked, :mod:`milbench.report.reproduction_docs` prints them
beside the targets.  Commands (``python -m milbench.report.reproduction -h``): ``archive``
keeps a finished run in ``resources/reproductions/``, ``docs`` writes ``docs/reproduction/``.
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

__all__ = ["targets", "load_targets", "load_gaps", "reproduction_table", "within", "paper_key",
           "yaml_lines", "TargetError", "EXPERIMENTS", "TOLERANCE", "TARGETS_DIR", "TARGET_KEY",
           "TABLE_COLUMNS"]

#: default absolute tolerance per metric for "within tolerance" (fractions of 1).
TOLERANCE = {"accuracy": 0.03, "auroc": 0.03}
EXPERIMENTS = ("cvfs", "midr", "milsd", "hydr", "miordm")
TARGETS_DIR = Path(__file__).resolve().parents[3] / "resources" / "targets"
_ALIASES = {"cvfs-mil": "cvfs", "hydr-mi": "hydr", "hydrmi": "hydr", "cvfsmil": "cvfs"}

_COLUMNS = ["paper", "experiment", "source", "dataset", "paper_method", "selector",
            "classifier", "params", "train_ratio", "metric", "target", "target_std",
            "tolerance", "kind", "protocol", "reference", "note", "protocol_id"]
#: the columns naming one target (unique within a paper)
TARGET_KEY = ("source", "dataset", "paper_method", "metric")
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


def _check(part, obj, where, line_of=None):
    """Raise :class:`TargetError` for the first schema error, naming ``where`` (and the
    line ``line_of(path)`` gives for the offending field)."""
    errors = sorted(_validator(part).iter_errors(obj), key=lambda e: [str(p) for p in e.path])
    if errors:
        path = list(errors[0].path)
        field = "/".join(map(str, path))
        if line_of is not None:
            where = f"{where}, line {line_of(path)}"
        raise TargetError(f"{where}: {field + ': ' if field else ''}{errors[0].message}")


def yaml_lines(text):
    """A function ``line_of(path)``: the 1-based line of the YAML entry at ``path`` (mapping
    keys and sequence indices) in ``text`` (a mapping entry's line is its key's), or of the
    deepest entry on the way that exists."""
    root = yaml.compose(text)

    def line_of(path):
        node, line = root, (root.start_mark.line if root is not None else 0)
        for key in path:
            if isinstance(node, yaml.MappingNode):
                hit = next(((k, v) for k, v in node.value if k.value == str(key)), None)
                if hit is None:
                    break
                line, node = hit[0].start_mark.line, hit[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) \
                    and key < len(node.value):
                node = node.value[key]
                line = node.start_mark.line
            else:
                break
        return line + 1
    return line_of


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


def _read(experiment, directory=TARGETS_DIR):
    """The target rows and the gap explanations of one experiment, validated
    (:class:`TargetError` otherwise)."""
    meta_path = Path(directory) / f"{experiment}.yaml"
    text = meta_path.read_text()
    meta, line_of = yaml.safe_load(text), yaml_lines(text)
    _check("paper", meta, str(meta_path), line_of)
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
            reference=f"{meta['text']} line {meta['tables'][r['source']]}",
            note=r.get("note", ""), protocol_id=r["protocol"]))
    return rows, _gaps(meta.get("gaps", []), rows, meta_path, csv_path.name, line_of)


def _selected(row, selector):
    return all(row[f] in ([v] if isinstance(v, str) else v) for f, v in selector.items())


def _gaps(entries, rows, meta_path, csv_name, line_of):
    """Each ``gaps`` entry with the keys of the targets it selects; every name a selector
    gives must be one of the targets', and each selector must pick at least one target."""
    out = []
    for i, g in enumerate(entries):
        keys = []
        for j, sel in enumerate(g["targets"]):
            for field, want in sel.items():
                have = {r[field] for r in rows}
                for name in [want] if isinstance(want, str) else want:
                    if name not in have:
                        path = ["gaps", i, "targets", j, field]
                        raise TargetError(
                            f"{meta_path}, line {line_of(path)}: gaps/{i}/targets/{j}/{field}: "
                            f"{name!r} is not the {field} of any target in {csv_name}")
            hit = [tuple(r[k] for k in TARGET_KEY) for r in rows if _selected(r, sel)]
            if not hit:
                raise TargetError(
                    f"{meta_path}, line {line_of(['gaps', i, 'targets', j])}: "
                    f"gaps/{i}/targets/{j}: no target of {csv_name} has all of {sel}")
            keys += [k for k in hit if k not in keys]
        out.append(dict(line=line_of(["gaps", i]), keys=keys, runs=g.get("runs"),
                        text=" ".join(g["text"].split())))
    return out


def _rows(experiment, directory=TARGETS_DIR):
    """The target rows of one experiment, validated (:class:`TargetError` otherwise)."""
    return _read(experiment, directory)[0]


def load_targets(experiment, directory=TARGETS_DIR) -> pd.DataFrame:
    """The targets of one experiment read from ``directory`` (checked against the schema)."""
    return pd.DataFrame(_rows(paper_key(experiment), directory), columns=_COLUMNS)


def load_gaps(experiment, directory=TARGETS_DIR) -> list:
    """The gap explanations of one experiment's targets (``gaps`` of its YAML), checked:
    dicts with ``line`` (in the YAML), ``keys`` (the :data:`TARGET_KEY` tuples of the
    targets it explains, in file order), ``runs`` (archive entries it is about; None: all)
    and ``text`` (whitespace collapsed)."""
    return _read(paper_key(experiment), directory)[1]


@lru_cache(maxsize=None)
def _targets_cached(experiment):
    return load_targets(experiment)


def targets(experiment=None) -> pd.DataFrame:
    """All reproduction targets (a copy), optionally only those of one experiment
    (cvfs, midr, milsd, hydr, miordm; paper names such as hydr-mi are accepted); only the
    files asked for are read (once a process)."""
    if experiment is not None:
        return _targets_cached(paper_key(experiment)).copy()
    return pd.concat([_targets_cached(e) for e in EXPERIMENTS], ignore_index=True)


def paper_key(name):
    """The targets' file stem (cvfs, midr, milsd, hydr, miordm) of an experiment or paper
    name: equal, an alias (hydr-mi, cvfs-mil) or a prefix (miordm-20 -> miordm); KeyError
    otherwise."""
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


#: the columns of :func:`reproduction_table` (results/<experiment>/reproduction.csv)
TABLE_COLUMNS = ["paper", "source", "dataset", "paper_method", "metric", "paper_value",
                "paper_std", "our_method", "ours", "ours_std", "n", "difference", "tolerance",
                "within_tolerance", "status", "kind", "protocol"]


def within(difference, tolerance):
    """Whether ``|ours - paper|`` is within ``tolerance`` (a rounding margin of 1e-12)."""
    return abs(difference) <= tolerance + 1e-12


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
            ok = within(row["difference"], tol)
            row["within_tolerance"] = bool(ok)
            row["status"] = "within tolerance" if ok else "outside tolerance"
    return pd.DataFrame(out, columns=TABLE_COLUMNS)


def main(argv=None):
    """``archive`` a finished run into resources/reproductions/, or write the ``docs``."""
    import argparse

    from milbench.report import reproduction_archive, reproduction_docs

    ap = argparse.ArgumentParser(prog="python -m milbench.report.reproduction",
                                 description=main.__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("archive", help="keep results/<experiment>/reproduction.csv and its "
                       "provenance in resources/reproductions/<paper>/")
    a.add_argument("results", help="results/<experiment> of a finished run")
    a.add_argument("--config", required=True, help="the config file the run used")
    a.add_argument("--reduced", help="what the run cut from the paper's protocol (marks it "
                   "REDUCED whatever its config)")
    a.add_argument("--figure", action="append", default=[], metavar="[SOURCE=]PNG",
                   help="a figure to keep beside the paper's table or figure SOURCE")
    a.add_argument("--date", help="YYYY-MM-DD the run finished (default: reproduction.csv's "
                   "modification day, UTC)")
    a.add_argument("--archive", default=str(reproduction_archive.ARCHIVE_DIR))
    d = sub.add_parser("docs", help="write docs/reproduction/<paper>.md and index.md")
    d.add_argument("--out", default=str(reproduction_docs.DOCS_DIR))
    d.add_argument("--targets", default=str(TARGETS_DIR))
    d.add_argument("--archive", default=str(reproduction_archive.ARCHIVE_DIR))
    args = ap.parse_args(argv)
    if args.command == "archive":
        path, legacy = reproduction_archive.archive(args.results, args.config, args.archive,
                                                    args.reduced, args.figure, args.date)
        print(f"archived {path} (and {path.with_suffix('.yaml').name})")
        for name in legacy:
            print(f"legacy entry {name} covers the same experiment: remove it (and its runs in "
                  f"the targets' gaps) if this run replaces it")
        print(f"then: {reproduction_docs.COMMAND}")
    else:
        for path in reproduction_docs.write_pages(args.out, args.targets, args.archive):
            print(path)


if __name__ == "__main__":
    main()
