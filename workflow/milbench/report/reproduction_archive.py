"""Finished reproduction runs kept in the repository: ``resources/reproductions/<paper>/``,
and those of a benchmark configuration beside the papers (``config/<key>.yaml``,
:data:`~milbench.report.targets.BENCHMARKS`) in ``resources/reproductions/<key>/``.

An entry ``<run>`` (the experiment's name) is ``<run>.csv``, the
``results/<experiment>/reproduction.csv`` the ``reproduction`` rule wrote, copied as is, and
``<run>.yaml``, its provenance (checked against ``schema.yaml`` there): paper, config file,
experiments, FULL or REDUCED (and what was cut), data sets, CPU seconds of the run's jobs,
date, the command that regenerates it, the figures kept beside it (``<run>/<name>.png``), its
per-fold scores (``<run>/scores.csv.gz``: the paired tests of the claims and the spreads over
repeats need them; each fit's CPU seconds and its steps' convergence beside them), its
significance tables (``<run>/stats/``: the statistics a paper's claims are judged on) and a
remark naming the data sets the run's summary marks synthetic.  A benchmark's run has no
targets (its reproduction.csv is the rule's one "no paper targets" row), so its entry also
keeps the run's ``summary.csv`` and its critical-difference figures (``figures/cd_*.png``).
:func:`archive` adds one: ``python -m milbench.report.reproduction archive results/<experiment>
--config <file>``; :func:`load_archive` reads a paper's entries back, checked.

A run is REDUCED when ``--reduced`` says so, when its experiment's description carries a
``[REDUCED: ...]`` (or ``[reduced: ...]``) mark, or when its config lies under
``config/reduced/`` and the experiment (or the data chains) differs from the experiment of
the same name in ``config/paper/<paper>.yaml`` (a benchmark's: ``config/<key>.yaml``);
otherwise FULL.

``legacy-*`` entries keep numbers measured in earlier runs whose outputs were not kept,
transcribed from the README row that reported them (quoted verbatim under ``readme``); their
CSV has the rule's columns plus ``finding`` (what the row reported beyond one number, or
instead of it), and their provenance reads ``legacy: measured in earlier runs, outputs not
archived; rerun <command> to regenerate``.  A run archived later lands beside them under the
experiment's name; :func:`archive` names the legacy entries it may replace.
"""
from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import yaml

from milbench.experiment.config import chain_settings, load_config
from milbench.experiment.finished_cells import EARLIER_CPU, cell_cpu
from milbench.report.targets import (
    BENCHMARKS,
    TABLE_COLUMNS,
    TARGET_KEY,
    archive_key,
    reference_config,
    schema_error,
    yaml_lines,
)

__all__ = ["archive", "load_archive", "ArchiveError", "Run", "ARCHIVE_DIR", "REPO",
           "CONVERGENCE"]

REPO = Path(__file__).resolve().parents[3]
ARCHIVE_DIR = REPO / "resources" / "reproductions"
LEGACY_PREFIX = "legacy-"
FINDING = "finding"
#: a run's per-fold scores, in its folder beside its figures
SCORES = "scores.csv.gz"
#: a benchmark run's summary and significance tables, in its folder
SUMMARY, STATS = "summary.csv", "stats"
SCORE_KEYS = ("dataset", "method", "repeat", "fold", "seed", "train_ratio")
#: a step's convergence diagnostics in the scores (``diag.select.converged``,
#: ``diag.classify.n_iter``)
CONVERGENCE = re.compile(r"diag\.(\w+)\.(converged|n_iter)")


class ArchiveError(ValueError):
    """A malformed archive entry or a run that cannot be archived; the message names the
    file (and line)."""


@dataclass(frozen=True)
class Run:
    """One archive entry: its name, sidecar (``meta``) and rows (the CSV, numbers parsed;
    ``ours_text`` / ``ours_std_text`` as written, ``line`` each row's line in the file)."""
    name: str
    meta: dict
    rows: pd.DataFrame
    csv_path: Path

    @property
    def legacy(self) -> bool:
        return self.meta["provenance"].startswith("legacy: ")

    @property
    def folder(self) -> Path:
        """The folder of the run's figures, scores and tables."""
        return self.csv_path.parent / self.name

    @property
    def status(self) -> str:
        """FULL, REDUCED, LEGACY (FULL) or LEGACY (REDUCED)."""
        return f"LEGACY ({self.meta['status']})" if self.legacy else self.meta["status"]

    def scores(self):
        """The run's per-fold scores (:data:`SCORES`: dataset, method, repeat, fold, the
        metrics), None when it archived none; read once."""
        if "scores" not in self.meta:
            return None
        return _read_scores(self.csv_path.parent / self.name / self.meta["scores"])


@lru_cache(maxsize=16)
def _read_scores(path):
    return pd.read_csv(path)


@lru_cache(maxsize=1)
def _validator():
    schema = yaml.safe_load((ARCHIVE_DIR / "schema.yaml").read_text())
    return jsonschema.Draft202012Validator(schema)


def _check_meta(meta, where, text=None):
    """Raise :class:`ArchiveError` for the first schema error (a field's own before the
    rules between fields), naming ``where`` and the line of the field."""
    message = schema_error(_validator(), meta, where, None if text is None else yaml_lines(text),
                           rank=lambda e: e.validator in ("not", "required"))
    if message:
        raise ArchiveError(message)


def _read_csv(path, legacy, targets=True):
    """The rows of an entry's CSV with their line numbers; the header must be the rule's
    (legacy entries: plus ``finding``) and, with ``targets`` (a paper's), every row must name
    its target."""
    columns = TABLE_COLUMNS + [FINDING] if legacy else TABLE_COLUMNS
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header != columns:
            raise ArchiveError(f"{path}, line 1: header {header}, expected {columns}")
        rows = []
        for raw in reader:
            where = f"{path}, line {reader.line_num}"
            if len(raw) != len(columns):
                raise ArchiveError(f"{where}: {len(raw)} fields, expected {len(columns)}")
            r = dict(zip(columns, raw))
            for k in TARGET_KEY if targets else ():
                if not r[k]:
                    raise ArchiveError(f"{where}: {k} is empty (it names the target)")
            r["ours_text"], r["ours_std_text"] = r["ours"], r["ours_std"]
            for k in ("ours", "ours_std", "n"):
                try:
                    r[k] = float(r[k]) if r[k] else np.nan
                except ValueError:
                    raise ArchiveError(f"{where}: {k} {r[k]!r} is not a number") from None
            r["line"] = reader.line_num
            rows.append(r)
    return pd.DataFrame(rows, columns=columns + ["ours_text", "ours_std_text", "line"])


def _load_meta(path):
    text = path.read_text(encoding="utf-8")
    meta = yaml.safe_load(text)
    if isinstance(meta, dict) and isinstance(meta.get("date"), dt.date):
        meta["date"] = meta["date"].isoformat()           # an unquoted date
    _check_meta(meta, str(path), text)
    return meta


def load_archive(paper, archive_dir=ARCHIVE_DIR) -> list:
    """The archived runs of one paper (cvfs, hydr, midr, milsd, miordm) or benchmark (deep),
    sorted by name, each checked (:class:`ArchiveError` names the file and line otherwise)."""
    paper = archive_key(paper)
    folder = Path(archive_dir) / paper
    if not folder.is_dir():
        return []
    csvs = {p.stem: p for p in folder.glob("*.csv")}
    metas = {p.stem: p for p in folder.glob("*.yaml")}
    for stem in sorted(set(csvs) ^ set(metas)):
        have = csvs.get(stem) or metas.get(stem)
        raise ArchiveError(f"{have}: an entry is <run>.csv and <run>.yaml; "
                           f"{stem}.{'yaml' if stem in csvs else 'csv'} is missing")
    runs = []
    for name in sorted(csvs):
        meta = _load_meta(metas[name])
        if meta["paper"] != paper:
            raise ArchiveError(f"{metas[name]}: paper {meta['paper']!r}, but the entry lies "
                               f"in {folder.name}/")
        legacy = meta["provenance"].startswith("legacy: ")
        if legacy != name.startswith(LEGACY_PREFIX):
            raise ArchiveError(f"{metas[name]}: a legacy provenance and a name starting with "
                               f"{LEGACY_PREFIX!r} go together")
        for fig in meta.get("figures", []):
            if not (folder / name / fig["file"]).is_file():
                raise ArchiveError(f"{metas[name]}: figure {fig['file']} is not in "
                                   f"{folder / name}")
        for what, rel in [(k, meta[k]) for k in ("scores", "summary") if k in meta] + \
                [("stats", f"{STATS}/{f}") for f in meta.get("stats", [])]:
            if not (folder / name / rel).is_file():
                raise ArchiveError(f"{metas[name]}: {what} {rel} is not in {folder / name}")
        runs.append(Run(name, meta, _read_csv(csvs[name], legacy, paper not in BENCHMARKS),
                        csvs[name]))
    return runs


# --------------------------------------------------------------------------- archiving
def _relative(path, repo):
    try:
        return Path(path).resolve().relative_to(Path(repo).resolve()).as_posix()
    except ValueError:
        raise ArchiveError(f"{path}: not a file of the repository {repo} (the archive names "
                           "the config the run came from)") from None


def _chains(datasets):
    """The data chains (``chains.<name>`` of a config) the data sets are built by."""
    out = set()
    for d in datasets:
        d = str(d)
        out |= {"corel"} if d == "corel-cats" else {"reddit"} if d == "reddit" else \
            {"webkb"} if d.startswith("webkb-") else \
            {"protein_graph"} if d == "protein-graph" else set()
    return sorted(out)


def run_status(config_rel, experiment, cfg, repo=REPO, reduced=None):
    """(FULL or REDUCED, what was cut or None) for one experiment of the config ``cfg``
    (its defaults filled in, :func:`milbench.experiment.config.load_config`); see the module
    docstring."""
    if reduced:
        return "REDUCED", reduced
    exp = cfg["experiments"][experiment]
    mark = re.search(r"\[reduced:?\s*([^\]]*)\]", str(exp.get("description", "")), re.I)
    if mark:
        return "REDUCED", " ".join(mark.group(1).split()) or "marked in its description"
    if not config_rel.startswith("config/reduced/"):
        return "FULL", None
    paper_cfg = reference_config(archive_key(experiment), repo)
    if paper_cfg.is_file():
        paper = load_config(paper_cfg)
        if paper["experiments"].get(experiment) == exp and all(
                chain_settings(paper, c) == chain_settings(cfg, c)
                for c in _chains(exp.get("datasets", []))):
            return "FULL", None
    desc = " ".join(str(exp.get("description", "")).split())
    return "REDUCED", f"{config_rel}" + (f": {desc}" if desc else "")


def regenerate_command(config_rel, experiments, config_text, reduced=None,
                       outputs=("reproduction.csv",)):
    """The config header's ``snakemake ... --configfile <config>`` line (or a plain one)
    aimed at the experiments' ``outputs`` (results/<experiment>/<output>), then the archive
    command of each."""
    experiments = [experiments] if isinstance(experiments, str) else list(experiments)
    base = f"snakemake --cores N --configfile {config_rel}"
    for m in re.finditer(r"^#\s*(?:Run:\s*)?(snakemake\s.*)$", config_text, re.M):
        words = m.group(1).split()
        at = words.index("--configfile") + 1 if "--configfile" in words else len(words)
        if at < len(words) and words[at] == config_rel:
            base = " ".join(words)
            break
    targets = " ".join(f"results/{e}/{o}" for e in experiments for o in outputs)
    steps = [base.replace("snakemake ", f"snakemake {targets} ", 1)]
    for e in experiments:
        steps.append(f"python -m milbench.report.reproduction archive results/{e} "
                     f"--config {config_rel}" + (f" --reduced {shlex.quote(reduced)}"
                                                 if reduced else ""))
    return " && ".join(steps)


def file_attrs(path):
    """The ``DataFrame.attrs`` a Parquet file keeps ({} for none)."""
    raw = (pq.read_schema(path).metadata or {}).get(b"PANDAS_ATTRS")
    return json.loads(raw) if raw else {}


def _method_files(runs):
    """{path relative to ``runs``: (CPU of cells from earlier attempts, Σ fit + predict CPU of
    its rows)} of the method files ``runs/<dataset>/<selector>/<classifier>.parquet``."""
    out = {}
    columns = ["repeat", "fold", "fit_cpu_seconds", "predict_cpu_seconds"]
    for path in sorted(Path(runs).rglob("*.parquet")) if runs else ():
        rel = path.relative_to(runs)
        if len(rel.parts) != 3:                  # a kept cell of an unfinished job
            continue
        work = (float(cell_cpu(pd.read_parquet(path, columns=columns)).to_numpy().sum())
                if set(columns) <= set(pq.read_schema(path).names) else 0.0)
        out[rel] = (float(file_attrs(path).get(EARLIER_CPU, 0.0)), work)
    return out


def cpu_seconds(folder, runs=None):
    """CPU seconds of a run: the sum over the Snakemake benchmark files under ``folder`` (an
    experiment's: ``results/benchmarks/<experiment>``, where the shared data chains are not
    counted) of their ``cpu_time``, None when there are none.

    A method job under ``runs`` counts the larger of its benchmark's ``cpu_time`` plus the CPU
    of the cells it took from earlier attempts
    (:data:`~milbench.experiment.finished_cells.EARLIER_CPU`: the benchmark times the last
    attempt only) and the fit + predict CPU of its rows.  Snakemake samples a job's processes
    every 30 s (after its first 15), so the CPU that forked workers spend after their last
    sample is lost, most of it in short jobs with several workers (a measured case in
    docs/performance.md)."""
    files = _method_files(runs)
    total, seen = 0.0, False
    for path in sorted(folder.rglob("*.tsv")):
        try:
            table = pd.read_csv(path, sep="\t")
        except (pd.errors.EmptyDataError, pd.errors.ParserError):
            continue
        if "cpu_time" in table.columns:
            values = pd.to_numeric(table["cpu_time"], errors="coerce").dropna()
            job = float(values.sum())
            rel = path.relative_to(folder)
            method = rel.relative_to("runs").with_suffix(".parquet") \
                if rel.parts[0] == "runs" else None
            if method in files:
                earlier, work = files.pop(method)
                job = max(job + earlier, work)
            total += job
            seen = seen or not values.empty
    total += sum(earlier for earlier, _ in files.values())      # files without a benchmark
    return round(total, 1) if seen else None


#: seconds with no job running that end a sitting: within one, Snakemake starts the next job
#: within seconds of the last one's end
IDLE_GAP = 300.0


def job_spans(folder, exclude=(), walls=None, cell_ends=()):
    """[(start, seconds)]: the sittings of the jobs whose Snakemake benchmark files lie under
    ``folder``.  Each job ran from its file's modification time (when it ended) less its wall
    ``s`` to that time; the jobs' spans joined where less than :data:`IDLE_GAP` apart make a
    sitting, so the idle hours between two sittings in one results folder (a job reused from
    an earlier one, unchanged) are not counted.  Left out: the files at the paths ``exclude``
    (relative to ``folder``: the benchmarks of method files restored from kept parts, whose
    times are those of the copy) and the jobs that ended within a span ``walls`` already
    records ({start: seconds} of the parts kept before: a results folder that ran an earlier
    part keeps its jobs' files).  ``cell_ends``: the times of the last journalled cells of
    the run's unfinished jobs, which extend the sitting they fall in, or follow, to them (a
    job stopped mid-run writes no benchmark file).  Empty when no finished job gives a
    start."""
    recorded = [(_stamp(k), v) for k, v in (walls or {}).items()]

    def kept_before(end):           # ended within a span a part recorded
        return any(a <= end <= a + w + 1 for a, w in recorded)

    spans = []
    for path in sorted(folder.rglob("*.tsv")) if folder.is_dir() else ():
        if path.relative_to(folder) in exclude:
            continue
        end = path.stat().st_mtime
        if kept_before(end):
            continue
        try:
            table = pd.read_csv(path, sep="\t")
        except (pd.errors.EmptyDataError, pd.errors.ParserError):
            continue
        wall = pd.to_numeric(table.get("s", pd.Series(dtype=float)), errors="coerce").dropna()
        if wall.empty:
            continue
        spans.append([end - float(wall.sum()), end])
    sittings = _joined(spans)
    for t in cell_ends:
        before = [x for x in sittings if x[0] <= t]
        if before and not kept_before(t):
            before[-1][1] = max(before[-1][1], t)
    return [(dt.datetime.fromtimestamp(a, dt.timezone.utc).isoformat(timespec="seconds"),
             round(b - a, 1)) for a, b in _joined(sittings)]


def _joined(spans):
    """[start, end] spans, sorted, those less than :data:`IDLE_GAP` apart joined."""
    out = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1] + IDLE_GAP:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def _stamp(iso):
    """POSIX seconds of a span's ISO start."""
    return dt.datetime.fromisoformat(iso).timestamp()


def add_span(walls, span):
    """``walls`` ({start: seconds} of a run's sessions) with the span ``span`` of the jobs that
    ended since (one of :func:`job_spans`); a span overlapping the latest one (a second keep in one
    session) extends it, so no stretch is counted twice."""
    walls = dict(walls)
    start, seconds = span
    last = max(walls, key=_stamp, default=None)
    if last is not None and _stamp(start) <= _stamp(last) + walls[last]:
        walls[last] = round(_stamp(start) + seconds - _stamp(last), 1)
    else:
        walls[start] = seconds
    return walls


def session_walls(bench, listing, cell_ends=()):
    """{start: seconds} of each session of a run: those its kept parts recorded (``listing``:
    the parts' ``parts.yaml``, or None) and this session's, the sittings of its jobs under
    ``bench`` (:func:`job_spans`, the files restored from parts left out; ``cell_ends``: the
    last journalled cells of its unfinished jobs)."""
    walls = dict((listing or {}).get("walls") or {})
    restored = {Path(rel).with_suffix(".tsv") for rel in (listing or {}).get("files", {})}
    for span in job_spans(bench, restored, walls, cell_ends):
        walls = add_span(walls, span)
    return walls


def run_wall(bench, listing):
    """(wall seconds, note or None) of a run: its sessions' spans summed
    (:func:`session_walls`).  The note says when the figure is a lower bound: a part kept
    without its span."""
    walls = session_walls(bench, listing)
    note = None
    if listing and not listing.get("walls"):
        note = ("a lower bound: the wall of the part kept before parts recorded their span "
                "is not counted")
    return (round(sum(walls.values()), 1) if walls else None), note


def run_commit(results_dir):
    """The commit checked out where ``results_dir`` was computed (its git work tree), with
    ``+changes`` when that tree had uncommitted edits of tracked files; None outside git."""
    def git(*args):
        return subprocess.run(["git", "-C", str(results_dir), *args], capture_output=True,
                              text=True, timeout=60)
    head = git("rev-parse", "HEAD")
    if head.returncode:
        return None
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head.stdout.strip() + ("+changes" if dirty else "")


def synthetic_datasets(results_dir):
    """The data sets a run's summary.csv marks synthetic (a chain's generated stand-in for data
    not obtainable here, e.g. Reddit submissions), sorted."""
    summary = Path(results_dir) / "summary.csv"
    if not summary.is_file():
        return []
    s = pd.read_csv(summary)
    if "synthetic" not in s:
        return []
    return sorted(s.loc[s["synthetic"].fillna(False).astype(bool), "dataset"].astype(str).unique())


def per_fold_scores(results_dir, metrics):
    """The per-fold rows of a run's ``scores.parquet`` the claims' paired tests and the spreads
    over repeats need: dataset, method, repeat, fold (seed and train_ratio where present) and
    the ``metrics`` it has, each fit's CPU seconds and each step's convergence diagnostics
    (:data:`CONVERGENCE`: whether the final fit converged, its iterations); None without the
    file."""
    path = Path(results_dir) / "scores.parquet"
    if not path.is_file():
        return None
    names = pq.read_schema(path).names
    keep = [c for c in (*SCORE_KEYS, *metrics, "fit_cpu_seconds") if c in names]
    keep += sorted(c for c in names if CONVERGENCE.fullmatch(c))
    table = pd.read_parquet(path, columns=keep)
    return table.dropna(axis=1, how="all")


#: what a benchmark's run is regenerated up to: the archived tables and figures too
_BENCHMARK_OUTPUTS = (STATS, "figures", "reproduction.csv")


def _outputs(results_dir, benchmark):
    """What the archived run's command regenerates: a benchmark's tables and figures too, a
    paper run's stats/ where it has one, and the reproduction.csv."""
    if benchmark:
        return _BENCHMARK_OUTPUTS
    return (STATS, "reproduction.csv") if (results_dir / STATS).is_dir() else ("reproduction.csv",)


def _run_tables(results_dir, summary):
    """{path in the entry's folder: file} of a run's stats/*.csv (the paper's statistics
    beside its tables) and, with ``summary`` (a benchmark's run), its summary.csv."""
    out = {SUMMARY: results_dir / SUMMARY} if summary and (results_dir / SUMMARY).is_file() \
        else {}
    out.update({f"{STATS}/{p.name}": p for p in sorted((results_dir / STATS).glob("*.csv"))})
    return out


def _wall_fields(bench, parts):
    """The sidecar's ``wall_seconds`` (and ``wall_note``) of a run (:func:`run_wall`), its
    kept parts read from the part folder ``parts``."""
    listing = yaml.safe_load((parts / "parts.yaml").read_text()) \
        if (parts / "parts.yaml").is_file() else None
    wall, note = run_wall(bench, listing)
    return {"wall_seconds": wall, **({"wall_note": note} if note else {})}


def archive(results_dir, config, archive_dir=ARCHIVE_DIR, reduced=None, figures=(),
            date=None, repo=REPO):
    """Keep the finished run ``results_dir`` (``results/<experiment>``, its name the
    experiment's) of ``config`` in the archive: its reproduction.csv as is, the sidecar, the
    given figures (``[SOURCE=]PATH.png``, SOURCE a table or figure of the paper) and the
    per-fold scores of its metrics (:func:`per_fold_scores`, ``<run>/scores.csv.gz``).
    Returns (the CSV's path, the legacy entries naming the same experiment)."""
    results_dir, config = Path(results_dir), Path(config)
    experiment = results_dir.resolve().name
    table = results_dir / "reproduction.csv"
    if not table.is_file():
        raise ArchiveError(f"{table}: missing; the run ends with the `reproduction` rule")
    try:
        paper = archive_key(experiment)
    except KeyError as e:
        raise ArchiveError(f"{results_dir}: {e.args[0]}") from None
    benchmark = paper in BENCHMARKS
    _read_csv(table, False, not benchmark)            # the rule's columns, rows well formed
    config_rel = _relative(config, repo)
    text = config.read_text(encoding="utf-8")
    cfg = load_config(config)
    if experiment not in cfg.get("experiments", {}):
        raise ArchiveError(f"{config}: no experiment {experiment!r} (it has "
                           f"{sorted(cfg.get('experiments', {}))})")
    exp = cfg["experiments"][experiment]
    status, why = run_status(config_rel, experiment, cfg, repo, reduced)
    when = date or dt.datetime.fromtimestamp(table.stat().st_mtime, dt.timezone.utc).date()
    meta = dict(paper=paper, experiments=[experiment], config=config_rel, status=status)
    if why:
        meta["reduced"] = why
    meta.update(datasets=[str(d) for d in exp.get("datasets", [])],
                cpu_seconds=cpu_seconds(results_dir.parent / "benchmarks" / experiment,
                                        results_dir / "runs"),
                **_wall_fields(results_dir.parent / "benchmarks" / experiment,
                               Path(archive_dir) / paper / "parts" / experiment),
                date=str(when),
                **({"commit": commit} if (commit := run_commit(results_dir)) else {}),
                command=regenerate_command(config_rel, experiment, text, reduced,
                                           _outputs(results_dir, benchmark)),
                provenance=f"archived from results/{experiment}/reproduction.csv")
    if exp.get("description"):
        meta["description"] = " ".join(str(exp["description"]).split())
    if synthetic := synthetic_datasets(results_dir):
        meta["remark"] = (f"{', '.join(synthetic)}: SYNTHETIC data (generated in the source's "
                          "schema), not the paper's; the numbers show the chain, not the paper's")
    folder = Path(archive_dir) / paper
    tables = _run_tables(results_dir, summary=benchmark)
    if benchmark:                   # its critical-difference diagrams, unless given
        given = {Path(str(f).rpartition("=")[2]).name for f in figures}
        figures = [*figures, *(str(p) for p in sorted((results_dir / "figures").glob("cd_*.png"))
                               if p.name not in given)]
    figs = []
    for spec in figures:
        source, _, path = str(spec).rpartition("=")
        path = Path(path)
        if path.suffix != ".png" or not path.is_file():
            raise ArchiveError(f"{path}: a figure to archive is an existing .png file")
        figs.append((dict(file=path.name, **({"source": source} if source else {})), path))
    if figs:
        meta["figures"] = [f for f, _ in figs]
    scores = per_fold_scores(results_dir, exp.get("metrics") or ["accuracy", "auroc"])
    if scores is not None:
        meta["scores"] = SCORES
    if SUMMARY in tables:
        meta["summary"] = SUMMARY
    if stats := [Path(rel).name for rel in tables if rel != SUMMARY]:
        meta["stats"] = stats
    _check_meta(meta, f"{folder / experiment}.yaml")
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(table, folder / f"{experiment}.csv")
    shutil.rmtree(folder / experiment / STATS, ignore_errors=True)   # archived again: its own only
    for rel, path in tables.items():
        (folder / experiment / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, folder / experiment / rel)
    if figs or scores is not None:
        (folder / experiment).mkdir(exist_ok=True)
    for f, path in figs:
        shutil.copyfile(path, folder / experiment / f["file"])
    if scores is not None:           # gzip without a time stamp: the same rows, the same bytes
        scores.to_csv(folder / experiment / SCORES, index=False, float_format="%.6g",
                      compression={"method": "gzip", "mtime": 0})
        _read_scores.cache_clear()
    (folder / f"{experiment}.yaml").write_text(
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    legacy = [r.name for r in load_archive(paper, archive_dir)
              if r.legacy and experiment in r.meta["experiments"]]
    return folder / f"{experiment}.csv", legacy
