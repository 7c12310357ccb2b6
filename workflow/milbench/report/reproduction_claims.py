"""The papers' claims, judged from the archived runs: ``resources/targets/claims.yaml``.

Each paper lists its headline and secondary claims (``claim``: the claim in the paper's words,
``where``: the table, figure or section that makes it) with the test that judges it, and the
numeric tables and claimed figures it does not compare (``not_compared``: source and reason).
A claim's ``test`` is one of

- ``better``: ``method`` above each of ``than`` in ``metric`` over the targets of ``sources``
  (a block is a data set, or a (data set, classifier) pair where the paper's labels read
  "<method> + <classifier>"); per baseline, the wins over the blocks and the one-sided
  Wilcoxon signed-rank test of our differences (:func:`scipy.stats.wilcoxon`); supported when
  it rejects at ``alpha`` against every baseline;
- ``rank``: ``method`` first among ``methods`` by the mean rank over the data sets where all of
  them have a result (highest = best, ties share the mean rank, as MIORDM's Friedman ranks),
  with the Friedman test (:func:`scipy.stats.friedmanchisquare`); the paper's own table is
  ranked on the same data sets, which shows what the subset alone says;
- ``judged``: read by hand from an archived finding or figure (``evidence``: archived runs or
  repository files, checked to exist), the verdict given with ``why``;
- ``untestable``: ``why`` says what is missing.

The numbers are the archived results at the best status each target has (FULL, REDUCED,
LEGACY; results a run's sidecar marks off the paper's protocol are not used): the same results
the pages list.  A computed verdict needs paper-size evidence (FULL, or LEGACY (FULL)); with a
REDUCED result among those used it reads "not testable here", the indicative outcome beside
it.  The rank tests run over the blocks' means; where a run archived its per-fold scores
(:data:`~milbench.report.reproduction_archive.SCORES`) the ``better`` test also counts the
blocks where a one-sided paired t-test over the folds (:func:`scipy.stats.ttest_rel`) finds the
method above the baseline.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import yaml
from scipy.stats import friedmanchisquare, rankdata, ttest_rel, wilcoxon

from milbench.report.targets import TARGET_KEY, TARGETS_DIR, schema_error, yaml_lines

__all__ = ["load_claims", "judge", "CLAIMS", "SUPPORTED", "NOT_SUPPORTED", "UNTESTABLE"]

CLAIMS = "claims.yaml"
SUPPORTED, NOT_SUPPORTED, UNTESTABLE = "supported", "not supported", "not testable here"
#: evidence of the paper's size
_PAPER_SIZE = ("FULL", "LEGACY (FULL)")
_ORDINAL = {1: "1st", 2: "2nd", 3: "3rd"}


class ClaimError(ValueError):
    """A malformed claims file; the message names the file and line."""


@lru_cache(maxsize=None)
def _validator(targets_dir):
    schema = yaml.safe_load((Path(targets_dir) / "schema.yaml").read_text())["claims"]
    return jsonschema.Draft202012Validator(schema)


def load_claims(targets_dir=TARGETS_DIR) -> dict:
    """{paper: {"claims": [...], "not_compared": [...]}} of ``claims.yaml``, checked against
    the ``claims`` part of ``schema.yaml`` (:class:`ClaimError` names file and line)."""
    path = Path(targets_dir) / CLAIMS
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    message = schema_error(_validator(str(targets_dir)), data, str(path), yaml_lines(text))
    if message:
        raise ClaimError(message)
    return data


def _ordinal(n):
    return _ORDINAL.get(n, f"{n}th")


def _p(p):
    """"p = .031", "p < .001" or "p undefined"."""
    return "p undefined" if p is None or math.isnan(p) else \
        f"p = {p:.3f}".replace("0.", ".", 1) if p >= .001 else "p < .001"


def _signed(x):
    return ".000" if abs(x) < 5e-4 else f"{x:+.3f}".replace("0.", ".", 1)


def _runs_used(used):
    """[(run name, status)] in order of first use."""
    return list(dict.fromkeys((r["run"].name, r["run"].status) for r in used))


def _verdict(computed, used, outcome):
    """The verdict of a computed test: ``computed`` if every result used is of paper size,
    otherwise "not testable here" with the indicative outcome."""
    small = [(n, s) for n, s in _runs_used(used) if s not in _PAPER_SIZE]
    if not small:
        return computed, outcome
    names = ", ".join(f"{n} ({s})" for n, s in small)
    return UNTESTABLE, (f"no paper-size run: the evidence includes {names}; indicative "
                        f"({computed}): {outcome}")


def fold_scores(result, dataset, metric):
    """The per-fold ``metric`` of a result's method on the paper's ``dataset`` (indexed by
    repeat and fold, seeds averaged), from its run's archived scores; None without them."""
    scores = result["run"].scores()
    if scores is None or metric not in scores.columns:
        return None
    ours = scores["dataset"].astype(str).str.lower()
    d = str(dataset).lower()
    hit = (ours == d) | ours.str.endswith(("-" + d, "_" + d)) | ours.str.startswith(
        (d + "-", d + "_"))
    rows = scores[hit & (scores["method"] == result["our_method"])]
    if rows.empty:
        return None
    return rows.groupby(["repeat", "fold"])[metric].mean()


def _paired(a, b, alpha):
    """Whether the paired t-test over the folds both have finds ``a`` above ``b`` (one-sided,
    :func:`scipy.stats.ttest_rel`); None when there are fewer than two folds in common."""
    both = pd.concat([a, b], axis=1, join="inner").dropna()
    if len(both) < 2:
        return None
    return bool(ttest_rel(both.iloc[:, 0], both.iloc[:, 1], alternative="greater").pvalue
                < alpha)


def _targets(tg, sources, metric):
    rows = tg[tg["source"].isin(sources) & (tg["metric"] == metric)]
    return {tuple(r[k] for k in TARGET_KEY): r for r in rows.to_dict("records")}


def _better(test, tg, best):
    """Method vs each baseline over blocks: wins and the one-sided Wilcoxon signed-rank test
    of our differences; the paper's wins on the same blocks beside them."""
    method, sources, metric = test["method"], test["sources"], test["metric"]
    alpha = test.get("alpha", .05)
    rows = _targets(tg, sources, metric)
    used, lines, ok, beaten, tested, folds, values = [], [], [], [], 0, False, {}
    for base in test["than"]:
        ours, paper, paired = [], [], []
        for (src, ds, label, m), t in rows.items():
            if label != method and not label.startswith(method + " + "):
                continue
            other = (src, ds, base + label[len(method):], m)
            a, b = best.get((src, ds, label, m)), best.get(other)
            if a is None or b is None or other not in rows:
                continue
            used += [a, b]
            block = values.setdefault((ds, label[len(method) + 3:]), {})
            block.update({method: a["ours"], base: b["ours"]})
            ours.append(a["ours"] - b["ours"])
            paper.append(t["target"] - rows[other]["target"])
            fa, fb = fold_scores(a, ds, metric), fold_scores(b, ds, metric)
            if fa is not None and fb is not None:
                paired.append(_paired(fa, fb, alpha))
        if not ours:
            lines.append(f"vs {base}: no block with both archived")
            continue
        tested += 1
        d = np.asarray(ours)
        p = float(wilcoxon(d, alternative="greater").pvalue) if np.any(d != 0) else 1.0
        ok.append(p < alpha)
        if p < alpha:
            beaten.append(base)
        wins, losses = int((d > 0).sum()), int((d < 0).sum())
        lines.append(f"vs {base}: ours above in {wins} of {len(d)} (below in {losses}; mean "
                     f"difference {_signed(d.mean())}), Wilcoxon signed-rank one-sided "
                     f"{_p(p)}; the paper above in "
                     f"{int((np.asarray(paper) > 0).sum())} of {len(d)}")
        tried = [x for x in paired if x is not None]
        if tried:
            folds = True
            lines[-1] += (f"; paired t-test over the folds (one-sided, p < "
                          f"{str(alpha).lstrip('0')}): ours significantly above in "
                          f"{sum(tried)} of the {len(tried)} blocks with archived per-fold "
                          "scores")
    if not tested:
        return UNTESTABLE, "no archived result for the method and a baseline on one block", \
            lines, used, folds
    names = [method, *test["than"]]
    lines.append(f"ours per block ({' / '.join(names)}): " + "; ".join(
        f"{ds}{', ' + clf if clf else ''} "
        + " / ".join(f"{v[n]:.3f}".replace("0.", ".", 1) if n in v else "—" for n in names)
        for (ds, clf), v in values.items()))
    computed = SUPPORTED if all(ok) and tested == len(test["than"]) else NOT_SUPPORTED
    outcome = (f"over the blocks, {method} is significantly above (p < "
               f"{str(alpha).lstrip('0')}) {len(beaten)} of the {len(test['than'])} baselines"
               + (f" ({', '.join(beaten)})" if beaten else ""))
    verdict, why = _verdict(computed, used, outcome)
    return verdict, why, lines, used, folds


def _mean_ranks(table):
    """Mean rank per column of a (blocks x methods) array, highest value = highest rank."""
    return rankdata(table, axis=1).mean(axis=0)


def _standing(methods, ranks, method):
    order = sorted(zip(methods, ranks), key=lambda x: -x[1])
    place = 1 + sum(r > ranks[methods.index(method)] for _, r in order)
    ahead = [f"{m} {r:.1f}" for m, r in order if r > ranks[methods.index(method)]]
    return place, ahead


def _rank(test, tg, best):
    """Method's place by mean rank among ``methods`` on the data sets all have, ours and the
    paper's own table on the same data sets; Friedman over ours."""
    method, methods, metric = test["method"], list(test["methods"]), test["metric"]
    rows = _targets(tg, test["sources"], metric)
    datasets = list(dict.fromkeys(k[1] for k in rows))
    ours, paper, used, have = [], [], [], []
    for ds in datasets:
        keys = [next((k for k in rows if k[1] == ds and k[2] == m), None) for m in methods]
        if any(k is None or k not in best for k in keys):
            continue
        have.append(ds)
        used += [best[k] for k in keys]
        ours.append([best[k]["ours"] for k in keys])
        paper.append([rows[k]["target"] for k in keys])
    if not have:
        return UNTESTABLE, "no data set with an archived result for every method", [], []
    ours, paper = np.array(ours), np.array(paper)
    lines = [f"data sets with every method archived: {', '.join(have)}"]
    place = p_place = None
    extra = []
    for label, subset in [(None, have), *test.get("subsets", {}).items()]:
        pick = [i for i, ds in enumerate(have) if ds in subset]
        if not pick or (label is not None and len(pick) == len(have)):
            continue
        r_ours, r_paper = _mean_ranks(ours[pick]), _mean_ranks(paper[pick])
        at, ahead = _standing(methods, list(r_ours), method)
        p_at, p_ahead = _standing(methods, list(r_paper), method)
        if label is None:
            place, p_place = at, p_at
        else:
            extra.append(f"on {label}: ours {_ordinal(at)}, the paper's own table "
                         f"{_ordinal(p_at)} (mean rank {r_paper[methods.index(method)]:.1f})")
        on = f"our {len(pick)} data sets" if label is None else \
            f"{label} ({', '.join(have[i] for i in pick)})"
        lines += [f"on {on}: ours {method} {_ordinal(at)} of {len(methods)}, mean rank "
                  f"{r_ours[methods.index(method)]:.1f} (highest = best)"
                  + (f", behind {', '.join(ahead)}" if ahead else "")
                  + f"; the paper's own {', '.join(test['sources'])} on the same: "
                  f"{_ordinal(p_at)}, mean rank {r_paper[methods.index(method)]:.1f}"
                  + (f", behind {', '.join(p_ahead)}" if p_ahead else "")]
        if len(pick) >= 2 and len(methods) >= 3:
            p = float(friedmanchisquare(*ours[pick].T).pvalue)
            lines[-1] += f"; Friedman over ours {_p(p)}"
    n = len(have)
    if test.get("paper_rank"):
        lines.append(test["paper_rank"])
    computed = SUPPORTED if place == 1 else NOT_SUPPORTED
    outcome = f"{method} {_ordinal(place)} of {len(methods)} on our {n} data sets"
    if p_place != place or p_place != 1:
        outcome += (f"; the paper's own table ranks it {_ordinal(p_place)} on the same "
                    f"{n}")
    outcome = "; ".join([outcome, *extra])
    verdict, why = _verdict(computed, used, outcome)
    return verdict, why, lines, used


def _check_evidence(paper, evidence, runs, repo, where):
    names = {r.name for r in runs}
    for e in evidence:
        if e not in names and not (Path(repo) / e).exists():
            raise ClaimError(f"{where}: evidence {e!r} is neither an archived run of {paper} "
                             f"({sorted(names)}) nor a file of the repository")


def judge(paper, tg, best, runs, claims, repo) -> list:
    """One dict per claim of ``paper``: claim, where, headline, test (what was done), verdict,
    why, details (lines), evidence (run names and statuses, or files).  ``best``: {target key:
    the result the pages count for it}."""
    out = []
    for i, c in enumerate(claims.get("claims", [])):
        test = c["test"]
        kind = test["kind"]
        where = f"{CLAIMS}: {paper}/claims/{i}"
        if kind == "better":
            verdict, why, lines, used, folds = _better(test, tg, best)
            what = (f"{test['method']} vs {', '.join(test['than'])} on {test['metric']}: "
                    "one-sided Wilcoxon signed-rank over the blocks of our archived means"
                    + ("; per block, the paired t-test over the folds" if folds else
                       " (the runs archived no per-fold scores, so no paired test over "
                       "folds)"))
            evidence = [f"{n} ({s})" for n, s in _runs_used(used)]
        elif kind == "rank":
            verdict, why, lines, used = _rank(test, tg, best)
            what = (f"mean rank of {test['method']} among {len(test['methods'])} methods on "
                    f"{test['metric']} over the data sets archived; Friedman test")
            evidence = [f"{n} ({s})" for n, s in _runs_used(used)]
        else:
            _check_evidence(paper, test.get("evidence", []), runs, repo, where)
            status = {r.name: r.status for r in runs}
            evidence = [f"{e} ({status[e]})" if e in status else f"`{e}`"
                        for e in test.get("evidence", [])]
            verdict = test["verdict"] if kind == "judged" else UNTESTABLE
            why, lines = " ".join(test["why"].split()), []
            what = "read by hand from the archived evidence" if kind == "judged" else "—"
        out.append(dict(claim=" ".join(c["claim"].split()), where=c["where"],
                        headline=bool(c.get("headline")), test=what, verdict=verdict, why=why,
                        details=lines, evidence=evidence))
    return out
