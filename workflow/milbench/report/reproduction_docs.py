"""The reproduction pages ``docs/reproduction/<paper>.md`` and ``index.md``, generated.

From the targets (``resources/targets/``: numbers, claims, gap explanations) and the archived
runs (``resources/reproductions/``, :mod:`milbench.report.reproduction_archive`), never copied
by hand: ``python -m milbench.report.reproduction docs`` rewrites them and a test fails when
the committed pages differ.  A page lists, per table or figure of the paper, every target
next to each archived result for it: ours, the paper's, the difference and tolerance,
whether it is met, the run's status (FULL, REDUCED, LEGACY) and its config and CPU time, and
the gap explanations that apply; targets no run measured say "not run" (in tables of more
than :data:`LIST_ALL` targets they are counted instead of listed).  The paper's judgement is
made against today's target and tolerance, so an erratum shows at once.
"""
from __future__ import annotations

import math
from pathlib import Path

from milbench.report.reproduction_archive import ARCHIVE_DIR, ArchiveError, load_archive
from milbench.report.reproduction_parts import kept_parts
from milbench.report.targets import (
    EXPERIMENTS,
    TARGET_KEY,
    TARGETS_DIR,
    load_paper,
    within,
)

__all__ = ["pages", "write_pages", "LIST_ALL", "DOCS_DIR", "COMMAND"]

DOCS_DIR = Path(__file__).resolve().parents[3] / "docs" / "reproduction"
COMMAND = "python -m milbench.report.reproduction docs"
#: tables with more targets list only those with results and count the rest
LIST_ALL = 60
_RANK = {"FULL": 0, "REDUCED": 1, "LEGACY (FULL)": 2, "LEGACY (REDUCED)": 3}
_DASH = "—"


# --------------------------------------------------------------------------- formatting
def _num(x):
    """Fixed formatting: up to 4 decimals, trailing zeros dropped."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return _DASH
    s = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def _as_written(text):
    """A number as the archive writes it (its precision kept), with a leading zero."""
    text = str(text).strip()
    return ("-0" + text[1:] if text.startswith("-.") else "0" + text
            if text.startswith(".") else text)


def _signed(x):
    return _DASH if x is None or math.isnan(x) else f"{x:+.3f}"


def _cpu(seconds):
    if seconds is None:
        return _DASH
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} CPU-min"
    return f"{seconds / 3600:.2f} CPU-h"


def _cell(text):
    """One table cell: whitespace collapsed, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") or _DASH


def _code(text):
    return f"`{text}`" if text else _DASH


def _table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return out


# --------------------------------------------------------------------------- the model
def _results(paper, tg, runs, targets_dir):
    """{target key: [result dicts]} from every archived run; a row naming no target is an
    error (file and line)."""
    index = {tuple(t[k] for k in TARGET_KEY): t for t in tg.to_dict("records")}
    out = {}
    for run in runs:
        for r in run.rows.to_dict("records"):
            key = tuple(r[k] for k in TARGET_KEY)
            if key not in index:
                raise ArchiveError(
                    f"{run.csv_path}, line {r['line']}: no target {dict(zip(TARGET_KEY, key))} "
                    f"in {Path(targets_dir) / paper}.csv (renamed or removed: edit the row)")
            finding = str(r.get("finding", "") or "")
            if math.isnan(r["ours"]) and not finding:
                continue                      # the run did not measure it ("not run", claims)
            t = index[key]
            judged = t["kind"] == "value" and not math.isnan(t["tolerance"]) \
                and not math.isnan(r["ours"])
            diff = r["ours"] - t["target"] if judged else math.nan
            out.setdefault(key, []).append(dict(
                run=run, ours=r["ours"], ours_std=r["ours_std"], our_method=r["our_method"],
                ours_text=r["ours_text"], ours_std_text=r["ours_std_text"], line=r["line"],
                finding=finding, difference=diff,
                met=within(diff, t["tolerance"]) if judged else None))
    for res in out.values():
        res.sort(key=lambda x: (_RANK[x["run"].status], x["run"].name, x["line"]))
    return out


def _best(results):
    """The results at the best status a target has (FULL, REDUCED, LEGACY (FULL),
    LEGACY (REDUCED))."""
    top = min(_RANK[r["run"].status] for r in results)
    return [r for r in results if _RANK[r["run"].status] == top]


def _summary(tg, results):
    judged = tg[tg["kind"] == "value"]
    met = sum(any(r["met"] for r in _best(results[k]))
              for k in (tuple(t[f] for f in TARGET_KEY) for t in judged.to_dict("records"))
              if k in results)
    counts = {"FULL": 0, "REDUCED": 0, "LEGACY": 0}
    for key in (tuple(t[f] for f in TARGET_KEY) for t in tg.to_dict("records")):
        if key in results:
            counts[_best(results[key])[0]["run"].status.split(" ")[0]] += 1
    claims = tg[tg["kind"].isin(["qualitative", "statistic"])]
    with_finding = sum(tuple(t[f] for f in TARGET_KEY) in results
                       for t in claims.to_dict("records"))
    unavailable = int((tg["kind"] == "unavailable").sum())
    return dict(targets=len(tg), judged=len(judged), met=met, **counts,
                not_run=len(tg) - sum(counts.values()) - unavailable, unavailable=unavailable,
                claims=len(claims), claims_measured=with_finding)


def _summary_line(s):
    return (f"{s['targets']} targets; {s['met']} of the {s['judged']} judged against a "
            f"tolerance are met. With a result: {s['FULL']} FULL, {s['REDUCED']} REDUCED, "
            f"{s['LEGACY']} LEGACY (best status per target); {s['not_run']} not run, "
            f"{s['unavailable']} unavailable. Claims and statistics with a finding: "
            f"{s['claims_measured']} of {s['claims']}.")


# --------------------------------------------------------------------------- a paper's page
def _run_section(run):
    m = run.meta
    lines = [f"### {run.name}", ""]
    facts = [("status", run.status + (f": {m['reduced']}" if m.get("reduced") else "")),
             ("config", _code(m["config"])),
             ("experiments", ", ".join(m["experiments"]) or _DASH),
             ("data sets", ", ".join(m["datasets"]) or _DASH),
             ("CPU", _cpu(m["cpu_seconds"])), ("date", m["date"] or "not recorded")]
    if not run.legacy:                        # a legacy provenance names the command
        facts.append(("regenerate", _code(m["command"])))
    facts.append(("provenance", m["provenance"]))
    if m.get("description"):
        facts.insert(0, ("experiment", m["description"]))
    if m.get("readme"):
        facts += [("reported protocol", m["readme"]["target"]),
                  ("reported measurement", m["readme"]["ours"])]
    if m.get("remark"):
        facts.append(("remark", m["remark"]))
    lines += [f"- {k}: {' '.join(str(v).split())}" for k, v in facts]
    for fig in m.get("figures", []):
        where = f" (beside the paper's {fig['source']})" if fig.get("source") else ""
        path = f"../../resources/reproductions/{m['paper']}/{run.name}/{fig['file']}"
        lines += ["", f"![{fig['file']}{where}]({path})"]
    return lines + [""]


def _row_cells(t, res, gap_refs):
    if t["kind"] == "qualitative":
        paper = t["note"]
    else:
        paper = _num(t["target"]) + (f" ± {_num(t['target_std'])}"
                                     if not math.isnan(t["target_std"]) else "")
        paper += f" ({t['note']})" if t["note"] else ""
    tol = _num(t["tolerance"]) if t["kind"] == "value" else _DASH
    head = [t["dataset"], t["paper_method"], t["metric"], paper]
    if res is None:
        status = "unavailable" if t["kind"] == "unavailable" else "not run"
        return head + [_DASH, _DASH, tol, _DASH, status, _DASH, _DASH, _DASH, gap_refs]
    ours = "" if math.isnan(res["ours"]) else _as_written(res["ours_text"]) + (
        f" ± {_as_written(res['ours_std_text'])}" if not math.isnan(res["ours_std"]) else "")
    if res["finding"]:
        ours = f"{ours} ({res['finding']})" if ours else res["finding"]
    met = _DASH if res["met"] is None else ("yes" if res["met"] else "no")
    m = res["run"].meta
    return head + [ours, _signed(res["difference"]), tol, met, res["run"].status,
                   f"[{res['run'].name}](#{res['run'].name.lower()})", _code(m["config"]),
                   _cpu(m["cpu_seconds"]), gap_refs]


def _source_section(source, meta, tg, results, gaps):
    rows = tg[tg["source"] == source]
    lines = [f"## {source}", "", f"- reference: {meta['text']} line {meta['tables'][source]}"]
    for p in dict.fromkeys(rows["protocol_id"]):
        lines.append(f"- protocol `{p}`: {' '.join(str(meta['protocols'][p]).split())}")
    keys = [tuple(t[k] for k in TARGET_KEY) for t in rows.to_dict("records")]
    here = [g for g in gaps if any(k in g["keys"] for k in keys)]
    number = {id(g): i + 1 for i, g in enumerate(here)}

    def refs(key, run):
        hit = [number[id(g)] for g in here if key in g["keys"]
               and (g["runs"] is None or (run is not None and run.name in g["runs"]))]
        return ", ".join(f"[{i}]" for i in hit)

    listed, hidden = [], 0
    for t, key in zip(rows.to_dict("records"), keys):
        res = results.get(key)
        if res:
            listed += [_row_cells(t, r, refs(key, r["run"])) for r in res]
        elif len(rows) <= LIST_ALL:
            listed.append(_row_cells(t, None, refs(key, None)))
        else:
            hidden += 1
    header = ["data set", "paper method", "metric", "paper", "ours", "Δ", "tolerance", "met",
              "status", "run", "config", "CPU", "gaps"]
    if listed:
        lines += [""] + _table(header, listed)
    if hidden == len(rows):
        lines += ["", f"{hidden} targets, none with an archived result."]
    elif hidden:
        lines += ["", f"{hidden} further targets of {source} have no archived result "
                      f"({len(rows)} in all)."]
    if here:
        lines += ["", "Gap explanations:", ""]
        for g in here:
            runs = f" (runs: {', '.join(g['runs'])})" if g["runs"] else ""
            lines.append(f"{number[id(g)]}. {g['text']}{runs}")
    return lines + [""]


def _paper_page(paper, meta, tg, runs, results, gaps, summary):
    lines = [f"# Reproduction: {meta['paper']} ({meta['text']})", "",
             f"<!-- generated by `{COMMAND}`; edit resources/targets/{paper}.* or "
             f"resources/reproductions/{paper}/ instead -->", "",
             f"Targets: `resources/targets/{paper}.csv` (one row per number or claim the paper "
             f"prints) and `{paper}.yaml` (protocols, method labels, gap explanations). Runs: "
             f"`resources/reproductions/{paper}/`. Status of a result: FULL (the paper's "
             "protocol), REDUCED (a cut of it), LEGACY (measured in an earlier run whose "
             "outputs were not kept; transcribed, see the run's provenance); a target without "
             "a result is \"not run\". \"met\": |ours − paper| within the tolerance.", "",
             _summary_line(summary), "", "## Runs", ""]
    if runs:
        lines += _table(["run", "status", "config", "data sets", "CPU", "date"],
                        [[f"[{r.name}](#{r.name.lower()})", r.status, _code(r.meta["config"]),
                          ", ".join(r.meta["datasets"]) or _DASH, _cpu(r.meta["cpu_seconds"]),
                          r.meta["date"] or "not recorded"] for r in runs])
        lines.append("")
        for r in runs:
            lines += _run_section(r)
    else:
        lines += ["No run archived yet.", ""]
    for source in sorted(meta["tables"], key=lambda s: (meta["tables"][s], s)):
        if (tg["source"] == source).any():
            lines += _source_section(source, meta, tg, results, gaps)
    return "\n".join(lines).rstrip("\n") + "\n"


def _load(paper, targets_dir, archive_dir):
    tg, gaps, meta = load_paper(paper, targets_dir)
    runs = load_archive(paper, archive_dir)
    names = {r.name for r in runs}
    for g in gaps:
        for name in g["runs"] or ():
            if name not in names:
                raise ArchiveError(
                    f"{Path(targets_dir) / paper}.yaml, line {g['line']}: gaps runs {name!r} "
                    f"is not an archived run of {Path(archive_dir) / paper}: {sorted(names)}")
    return meta, tg, runs, _results(paper, tg, runs, targets_dir), gaps


def pages(targets_dir=TARGETS_DIR, archive_dir=ARCHIVE_DIR) -> dict:
    """{file name: Markdown} for ``<paper>.md`` of every paper and ``index.md``."""
    out, index = {}, []
    for paper in sorted(EXPERIMENTS):
        meta, tg, runs, results, gaps = _load(paper, targets_dir, archive_dir)
        s = _summary(tg, results)
        out[f"{paper}.md"] = _paper_page(paper, meta, tg, runs, results, gaps, s)
        index.append([f"[{paper}]({paper}.md)", meta["text"], f"{s['met']} / {s['judged']}",
                      str(s["FULL"]), str(s["REDUCED"]), str(s["LEGACY"]), str(s["not_run"]),
                      f"{s['claims_measured']} / {s['claims']}", str(len(runs))])
    lines = ["# Reproduction status", "",
             f"<!-- generated by `{COMMAND}`; do not edit -->", "",
             "Our numbers next to the five papers' targets, one page per paper. Targets: "
             "`resources/targets/`; archived runs: `resources/reproductions/` (a finished "
             "run joins with `python -m milbench.report.reproduction archive "
             "results/<experiment> --config <file>`; one longer than a working session "
             "keeps its finished method files with `... keep results/<experiment> --config "
             "<file>`, and a later session puts those back with `... restore <experiment> "
             "--config <file>` before it runs the rest). \"met\": targets judged against a "
             "tolerance whose result at the best status (FULL, then REDUCED, then LEGACY) is "
             "within it. FULL / REDUCED / LEGACY: targets by the best status of their "
             "results; LEGACY numbers were measured in earlier runs whose outputs were not "
             "kept.", ""]
    lines += _table(["paper", "text", "met / judged", "FULL", "REDUCED", "LEGACY", "not run",
                     "claims with a finding", "runs"], index)
    parts = [[paper, f"`{exp}`", f"{len(p['files'])} of {p['method_files']}", _kept_cells(p),
              f"{_kept_cpu(p) / 3600:.1f}", str(p["date"]), f"`{p['config']}`"]
             for paper in sorted(EXPERIMENTS) for exp, p in kept_parts(paper, archive_dir).items()]
    if parts:
        lines += ["", "Runs kept in parts (finished method files, and the finished cells of "
                  "unfinished method jobs; not yet a reproduction table: `restore` them, then "
                  "run the rest):", ""]
        lines += _table(["paper", "experiment", "method files kept", "cells of unfinished jobs",
                         "their CPU-h", "kept on", "config"], parts)
    lines += ["", "Baselines checked against other publications (not targets of the five "
              "papers) are pinned, with the published figures, by tests: the set kernel "
              "(`tests/test_set_kernel.py`), EM-DD (`tests/test_diverse_density.py`), mi-SVM, "
              "MI-SVM, the MI kernel and Citation-kNN (`tests/test_zoo_realdata.py`)."]
    out["index.md"] = "\n".join(lines) + "\n"
    return out


def _kept_cells(listing):
    cells = listing.get("cells", {})
    # the classifier's name without its id (the pages name no hash)
    return (", ".join(f"{c['cells']} of `{Path(rel).name.split('.')[0]}` on {Path(rel).parts[1]}"
                      for rel, c in cells.items())
            if cells else _DASH)


def _kept_cpu(listing):
    """CPU seconds of what a part folder keeps: its method jobs' benchmarks and, for the cells
    of unfinished jobs, their rows' fit + predict CPU."""
    return ((listing["cpu_seconds"] or 0)
            + sum(c["cpu_seconds"] for c in listing.get("cells", {}).values()))


def write_pages(out_dir=DOCS_DIR, targets_dir=TARGETS_DIR, archive_dir=ARCHIVE_DIR) -> list:
    """Write :func:`pages` into ``out_dir``; returns the paths written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages(targets_dir, archive_dir).items():
        (out_dir / name).write_text(text, encoding="utf-8")
        written.append(out_dir / name)
    return written
