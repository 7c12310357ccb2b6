"""Reproduction targets of the five papers, as data.

``resources/targets/<experiment>.csv`` holds one row per number transcribed from a paper (table,
data set, the paper's method label, metric, value as printed, std, kind, protocol id, note), and
``<experiment>.yaml`` its protocols, the line of each table in the paper's text, the mapping of
the paper's method labels to our selector / classifier / parameter hints, and the ``gaps``: why
our numbers differ from the paper's, each entry for the targets its selectors pick (``source``,
``dataset``, ``paper_method``, ``metric``: a name or a list) and, with ``runs``, only for the
results of those archived runs (:mod:`milbench.report.reproduction_archive`).  ``schema.yaml``
is checked on loading (errors name file, line and what was expected).  :func:`targets` returns
the targets, one row per (paper, table, data set, method, metric), on our scale: accuracy and
AUROC as fractions, times in seconds; :func:`load_gaps` the gap explanations.
"""
from __future__ import annotations

import contextlib
import csv
import json
import math
from functools import lru_cache
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import yaml

__all__ = ["targets", "load_targets", "load_gaps", "within", "paper_key", "benchmark_key",
           "archive_key", "reference_config", "yaml_lines", "TargetError", "EXPERIMENTS",
           "BENCHMARKS", "TOLERANCE", "TARGETS_DIR", "TARGET_KEY", "TABLE_COLUMNS"]

#: default absolute tolerance per metric for "within tolerance" (fractions of 1).
TOLERANCE = {"accuracy": 0.03, "auroc": 0.03}
EXPERIMENTS = ("cvfs", "midr", "milsd", "hydr", "miordm")
#: benchmark configurations beside the papers, ``config/<key>.yaml``: no paper of ours and no
#: targets, but their runs are kept in the archive like the papers' (under ``<key>/``)
BENCHMARKS = ("deep",)
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


def schema_error(validator, obj, where, line_of=None, rank=lambda e: ()):
    """The first schema error of ``obj`` as a message naming ``where``, the line
    ``line_of(path)`` gives for the offending field and the field; None when it is valid.
    Errors are ordered by ``rank(error)``, then by field path."""
    errors = sorted(validator.iter_errors(obj), key=lambda e: (rank(e), [str(p) for p in e.path]))
    if not errors:
        return None
    path = list(errors[0].path)
    field = "/".join(map(str, path))
    if line_of is not None:
        where = f"{where}, line {line_of(path)}"
    return f"{where}: {field + ': ' if field else ''}{errors[0].message}"


def _check(part, obj, where, line_of=None):
    """Raise :class:`TargetError` for the first schema error (:func:`schema_error`)."""
    message = schema_error(_validator(part), obj, where, line_of)
    if message:
        raise TargetError(message)


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
    """The target rows, the gap explanations and the YAML of one experiment, validated
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
    return rows, _gaps(meta.get("gaps", []), rows, meta_path, csv_path.name, line_of), meta


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


def load_paper(experiment, directory=TARGETS_DIR):
    """(targets DataFrame, gaps, YAML mapping) of one experiment, read and checked once."""
    rows, gaps, meta = _read(paper_key(experiment), directory)
    return pd.DataFrame(rows, columns=_COLUMNS), gaps, meta


def load_targets(experiment, directory=TARGETS_DIR) -> pd.DataFrame:
    """The targets of one experiment read from ``directory`` (checked against the schema)."""
    return load_paper(experiment, directory)[0]


def load_gaps(experiment, directory=TARGETS_DIR) -> list:
    """The gap explanations of one experiment's targets (``gaps`` of its YAML), checked:
    dicts with ``line`` (in the YAML), ``keys`` (the :data:`TARGET_KEY` tuples of the
    targets it explains, in file order), ``runs`` (archive entries it is about; None: all)
    and ``text`` (whitespace collapsed)."""
    return load_paper(experiment, directory)[1]


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


def benchmark_key(name):
    """The benchmark configuration (:data:`BENCHMARKS`, ``config/<key>.yaml``) of an
    experiment name: the key itself or ``<key>-<anything>`` (deep-musk2 -> deep); KeyError
    otherwise."""
    n = str(name).lower()
    for key in BENCHMARKS:
        if n == key or n.startswith(key + "-"):
            return key
    raise KeyError(f"experiment {name!r} is no benchmark's; benchmarks: {BENCHMARKS} "
                   "(an experiment named <key> or <key>-...)")


def archive_key(name):
    """The folder of ``resources/reproductions/`` that keeps an experiment's runs: its paper
    (:func:`paper_key`) or else its benchmark configuration (:func:`benchmark_key`); KeyError
    naming both otherwise."""
    with contextlib.suppress(KeyError):
        return paper_key(name)
    try:
        return benchmark_key(name)
    except KeyError:
        raise KeyError(f"experiment {name!r} is neither a paper's (reproduction targets for "
                       f"{', '.join(EXPERIMENTS)}, or an experiment named after one, e.g. "
                       f"miordm-20) nor a benchmark configuration's ({', '.join(BENCHMARKS)}: "
                       f"config/<key>.yaml, experiments <key> or <key>-...)") from None


def reference_config(key, repo=TARGETS_DIR.parents[1]):
    """The configuration a run of archive key ``key`` (:func:`archive_key`) is judged FULL or
    REDUCED against: ``config/paper/<paper>.yaml``, or ``config/<benchmark>.yaml``."""
    folder = Path(repo) / "config"
    return folder / (f"{key}.yaml" if key in BENCHMARKS else f"paper/{key}.yaml")


#: the columns of :func:`reproduction_table` (results/<experiment>/reproduction.csv)
TABLE_COLUMNS = ["paper", "source", "dataset", "paper_method", "metric", "paper_value",
                "paper_std", "our_method", "ours", "ours_std", "n", "difference", "tolerance",
                "within_tolerance", "status", "kind", "protocol"]


def within(difference, tolerance):
    """Whether ``|ours - paper|`` is within ``tolerance`` (a rounding margin of 1e-12)."""
    return abs(difference) <= tolerance + 1e-12
