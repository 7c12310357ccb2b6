"""Significance tests for comparing MIL methods (Demšar 2006, "Statistical comparisons of
classifiers over multiple data sets", JMLR 7:1-30) on SciPy (``ttest_rel``, ``wilcoxon``,
``mannwhitneyu``, ``tiecorrect``, ``studentized_range``).  Kept here is what no library
provides: the Nadeau & Bengio (2003) corrected t-test, Demšar's chi2_F (no tie correction) and
Iman-Davenport F_F (eqs. 1-2), Nemenyi / Bonferroni-Dunn critical differences and z-tests vs a
control (§3.2.2), Holm, the SPSS-style rank-sum report of Zafra et al. (2013, Information
Sciences, Tables 12-13), and
:func:`run_stats`: ``scores.parquet`` + the ``stats:`` entries of a config (keys and defaults
in workflow/schemas/config.schema.yaml) -> tables ``results/<exp>/stats/<name>.csv``.
Missing results are reported, never dropped: pairwise tables carry ``n_missing`` and
``missing``; Friedman writes ``<name>_excluded`` and repeats it in its summary row.
"""
from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

TESTS = ("paired-t", "wilcoxon", "ranksum", "friedman")
NAN = float("nan")


# ----------------------------------------------------------------------------- tests
def holm(pvalues):
    """Holm (1979) adjusted p-values max_{j<=i} min(1, (m-j+1) p_(j)); NaNs ignored (kept)."""
    p = np.asarray(pvalues, dtype=float)
    out, idx = np.full(p.shape, np.nan), np.flatnonzero(~np.isnan(p))
    o = idx[np.argsort(p[idx], kind="mergesort")]
    out[o] = np.minimum(1.0, np.maximum.accumulate((o.size - np.arange(o.size)) * p[o]))
    return out


def _pair(x, y):
    x, y = (np.asarray(v, dtype=float).ravel() for v in (x, y))
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def paired_t(x, y, corrected=False, test_train_ratio=None):
    """Two-sided paired t-test (scipy.stats.ttest_rel; cvfs-mil Table 1), NaN pairs dropped;
    ``corrected``: Nadeau & Bengio (2003), var(d) (1/n + n_test/n_train) for var(d)/n, i.e.
    SciPy's t / sqrt(1 + n test_train_ratio).  Identical results give t = 0, p = 1."""
    x, y = _pair(x, y)
    n, d = x.size, x - y
    res = dict(n_pairs=n, mean_a=x.mean() if n else NAN, mean_b=y.mean() if n else NAN,
               mean_diff=d.mean() if n else NAN, sd_diff=d.std(ddof=1) if n > 1 else NAN,
               t=NAN, df=n - 1 if n > 1 else NAN, p=NAN)
    if corrected and test_train_ratio is None:
        raise ValueError("corrected t-test needs test_train_ratio = n_test/n_train")
    if n < 2 or not d.any():
        return res if n < 2 else {**res, "t": 0.0, "p": 1.0}
    r = sps.ttest_rel(x, y)
    t = r.statistic / (math.sqrt(1 + n * float(test_train_ratio)) if corrected else 1.0)
    p = 2 * sps.t.sf(abs(t), n - 1) if corrected else r.pvalue
    return {**res, "t": float(t), "p": float(p)}


def wilcoxon_signed_rank(x, y, zero_method="wilcox", method="auto", correction=False):
    """Two-sided Wilcoxon signed-rank test (scipy.stats.wilcoxon; Demšar §3.1.3): R+ / R- =
    rank sums of the positive / negative d = x - y, T = min(R+, R-); zero_method: wilcox,
    zsplit or pratt.  method: exact (ties or zeros: 2^n sign flips, scipy permutation_test,
    n <= 20), asymptotic (``correction``: continuity) or auto (<= 50 pairs: exact without
    ties/zeros, else flips up to 13 ranked differences; else asymptotic).  z = asymptotic -|z|
    without continuity correction.  Under 2 ranked differences there is no test (NaN)."""
    if method not in ("auto", "exact", "asymptotic"):
        raise ValueError(f"method must be auto, exact or asymptotic, not {method!r}")
    x, y = _pair(x, y)
    d = x - y
    dd = d[d != 0] if zero_method == "wilcox" else d        # the ranked differences
    a, b = (x.mean(), y.mean()) if d.size else (NAN, NAN)
    res = dict(n_pairs=d.size, mean_a=a, mean_b=b, mean_diff=a - b, n_nonzero=dd.size,
               r_plus=NAN, r_minus=NAN, T=NAN, z=NAN, p=NAN, p_method="")
    if dd.size < 2:             # SciPy tests need two differences
        return res
    r = sps.rankdata(np.abs(dd))
    half_zero = r[dd == 0].sum() / 2 if zero_method == "zsplit" else 0.0
    r_plus, r_minus = r[dd > 0].sum() + half_zero, r[dd < 0].sum() + half_zero
    res.update(r_plus=float(r_plus), r_minus=float(r_minus), T=float(min(r_plus, r_minus)))
    flips = np.unique(np.abs(dd)).size < dd.size or (dd == 0).any()     # ties or zeros
    if method == "auto":        # SciPy's rule, but zeros dropped by wilcox do not count
        method = ("exact" if d.size <= 50 and (dd.size <= 13 or not (flips or (d == 0).any()))
                  else "asymptotic")
    if method == "exact" and flips and dd.size > 20:
        raise ValueError("exact permutation test with ties is limited to n <= 20")
    kw = dict(zero_method=zero_method, method=method, correction=correction)
    with np.errstate(divide="ignore", invalid="ignore"):     # pratt, all zero: z = NaN
        z = sps.wilcoxon(dd, **{**kw, "method": "asymptotic", "correction": False}).zstatistic
        if method == "exact" and flips:     # R+ over all sign flips (the ranks stay fixed)
            p = sps.permutation_test((dd,), lambda s, axis: ((s > 0) * r).sum(axis=axis),
                                     permutation_type="samples", vectorized=True,
                                     n_resamples=np.inf).pvalue
        else:
            p = sps.wilcoxon(dd, **kw).pvalue if dd.any() else 1.0
    return {**res, "z": float(z), "p": float(p), "p_method": method}


def rank_sum(x, y, method="asymptotic", correction=False):
    """Two-sided Wilcoxon rank-sum (Mann-Whitney) test (scipy.stats.mannwhitneyu) reported as
    hydr-mi Tables 12-13 (SPSS): mean rank and rank sum per sample, W = rank sum of the smaller
    sample (``y`` at equal sizes), U of ``x``, z = normal deviate of the tie-corrected
    asymptotic p (``correction``: continuity) signed as W - E[W]; exact p only without ties."""
    if method not in ("asymptotic", "exact"):
        raise ValueError(f"method must be asymptotic or exact, not {method!r}")
    x, y = (np.asarray(v, dtype=float).ravel() for v in (x, y))
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    nx, ny = x.size, y.size
    res = dict(n_a=nx, n_b=ny, mean_a=x.mean() if nx else NAN, mean_b=y.mean() if ny else NAN)
    if not (nx and ny):
        return {**res, **dict.fromkeys(("mean_rank_a", "mean_rank_b", "rank_sum_a",
                                        "rank_sum_b", "W", "U", "z", "p"), NAN)}
    both = np.concatenate([x, y])
    r = sps.rankdata(both)
    rx, ry = r[:nx].sum(), r[nx:].sum()
    W, nW = (rx, nx) if nx < ny else (ry, ny)
    tied = not np.ptp(both)             # all values equal: no evidence, z undefined
    p = 1.0 if tied else sps.mannwhitneyu(x, y, use_continuity=correction,
                                          method="asymptotic").pvalue
    z = NAN if tied else math.copysign(sps.norm.isf(p / 2), W - nW * (nx + ny + 1) / 2.0)
    if method == "exact":
        if np.unique(both).size < both.size:
            raise ValueError("exact rank-sum p-values need data without ties")
        p = sps.mannwhitneyu(x, y, method="exact").pvalue
    return {**res, "mean_rank_a": rx / nx, "mean_rank_b": ry / ny, "rank_sum_a": rx,
            "rank_sum_b": ry, "W": W, "U": rx - nx * (nx + 1) / 2.0, "z": z, "p": float(p)}


def friedman_from_ranks(avg_ranks, N, tie_factor=1.0):
    """Friedman chi2_F and Iman-Davenport F_F from the average ranks R_j of k methods over N
    blocks (Demšar eqs. 1-2): chi2_F = 12 N / (k (k+1)) [sum R_j^2 - k (k+1)^2 / 4] /
    tie_factor, k-1 df; F_F = (N-1) chi2_F / (N (k-1) - chi2_F), (k-1, (k-1)(N-1)) df."""
    R = np.asarray(avg_ranks, dtype=float)
    k = R.size
    chi2 = 12.0 * N / (k * (k + 1)) * (np.sum(R ** 2) - k * (k + 1) ** 2 / 4.0)
    chi2 = float(max(chi2 / tie_factor if tie_factor > 0 else NAN, 0.0))
    df1, df2, denom = k - 1, (k - 1) * (N - 1), N * (k - 1) - chi2
    F = (NAN if N < 2 else np.inf if denom <= 1e-12 * max(1.0, N * (k - 1))
         else (N - 1) * chi2 / denom)
    return dict(N=N, k=k, avg_ranks=R, chi2=chi2, df=k - 1, p=float(sps.chi2.sf(chi2, k - 1)),
                F=float(F), df1=df1, df2=df2, p_F=float(sps.f.sf(F, df1, df2)))


def friedman(table, higher_is_better=True, tie_correction=False):
    """Friedman test of an N blocks x k methods ``table``: ranks per block (1 = best, ties
    averaged; key ``ranks``), then :func:`friedman_from_ranks`.  Demšar's chi2_F has no tie
    correction (it reproduces hydr-mi Table 6); ``tie_correction`` divides it by the mean
    scipy.stats.tiecorrect of the blocks, as scipy.stats.friedmanchisquare does."""
    a = np.asarray(table, dtype=float)
    if np.isnan(a).any():
        raise ValueError("friedman needs a complete table (drop incomplete blocks first)")
    ranks = sps.rankdata(-a if higher_is_better else a, axis=1)
    c = np.mean([sps.tiecorrect(row) for row in ranks]) if tie_correction else 1.0
    return {**friedman_from_ranks(ranks.mean(axis=0), a.shape[0], c), "ranks": ranks}


def critical_value(k, alpha=0.05, test="nemenyi"):
    """q_alpha of Demšar Table 5: Nemenyi = studentized range quantile (k, inf df) / sqrt 2;
    Bonferroni-Dunn = two-tailed normal quantile at alpha / (k-1)."""
    q = {"nemenyi": lambda: sps.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2),
         "bonferroni-dunn": lambda: sps.norm.ppf(1 - alpha / (2 * (k - 1)))}[test]
    return float(q()) if k > 1 else NAN


def critical_difference(k, N, alpha=0.05, test="nemenyi"):
    """CD = q_alpha sqrt(k (k+1) / (6 N)) (Demšar §3.2.2); test = nemenyi | bonferroni-dunn."""
    return float(critical_value(k, alpha, test) * math.sqrt(k * (k + 1) / (6.0 * N)))


def posthoc_vs_control(avg_ranks, N, control, alpha=0.05, correction="holm"):
    """z = (R_i - R_c) / sqrt(k (k+1) / (6 N)) of each method against ``control`` with
    two-sided normal p (Demšar §3.2.2), Holm-adjusted unless correction="none"."""
    R = pd.Series(avg_ranks, dtype=float)
    diff = R - R[control]
    z = (diff / math.sqrt(R.size * (R.size + 1) / (6.0 * N))).where(R.index != control)
    p = 2 * sps.norm.sf(np.abs(z))
    padj = holm(p) if correction == "holm" else p
    return pd.DataFrame({"rank_diff": diff, "z": z, "p": p, "p_adj": padj,
                         "significant": padj <= alpha}, index=R.index)


def nemenyi_cliques(avg_ranks, cd):
    """Maximal groups of methods with average ranks within ``cd`` (CD-diagram bars)."""
    R = pd.Series(avg_ranks, dtype=float).sort_values(kind="mergesort")
    ends = np.searchsorted(R.to_numpy(), R.to_numpy() + cd + 1e-12, side="right") - 1
    return [list(R.index[i: j + 1]) for i, j in enumerate(ends)
            if j > i and (i == 0 or j > ends[i - 1])]


def friedman_note(k, N, cd=None, reject=None, n_nemenyi_significant=None):
    """What a Friedman result over N blocks and k methods cannot say, in words ("" when
    nothing): Demšar (2006, §3.2.2) wants N > 10 and k > 5 for the chi2 / F approximations;
    a Nemenyi CD at least k - 1 (the largest possible rank difference) means no pair can ever
    differ; an omnibus rejection with no post-hoc pair beyond the CD means the methods are not
    all equal, but the less powerful post-hoc test cannot say which differ (§3.2.2)."""
    notes = []
    if N <= 10 or k <= 5:
        notes.append(f"N = {N} blocks and k = {k} methods: Demšar (2006) wants N > 10 and k > 5 "
                     "for the Friedman chi2 / Iman-Davenport F approximations, read p as rough")
    if cd is not None and cd >= k - 1:
        notes.append(f"Nemenyi CD {cd:.2f} >= k - 1 = {k - 1}, the largest possible rank "
                     f"difference: no pair can differ with N = {N}; add data sets")
    elif reject and n_nemenyi_significant == 0:
        notes.append("Iman-Davenport rejects 'all methods equal' but no pair differs by more "
                     "than the Nemenyi CD: the post-hoc test is less powerful than the omnibus "
                     "test, so the methods are not all equal, but these data do not say which "
                     "differ")
    return "; ".join(notes)


def pairwise_note(test, n_pairs, alpha=0.05, over="folds"):
    """What a two-method test on ``n_pairs`` matched pairs cannot say ("" when nothing): an
    exact Wilcoxon signed-rank p is at least 2 / 2^n, so n < log2(2 / alpha) pairs can never
    reject (Demšar 2006, §3.1.3); a t-test over data sets wants about 30 of them (§3.1.2)."""
    if test == "wilcoxon" and n_pairs >= 1 and 2.0 / 2 ** n_pairs > alpha:
        return (f"{n_pairs} pairs: the smallest possible Wilcoxon p is "
                f"{2.0 / 2 ** n_pairs:.3g} > alpha = {alpha:g}, so no difference can be found")
    if test == "paired-t" and over == "datasets" and n_pairs < 30:
        return (f"{n_pairs} data sets: Demšar (2006, §3.1.2) advises against a t-test over "
                "fewer than about 30 data sets (normality); prefer wilcoxon")
    return ""


# ----------------------------------------------------------------------------- tables
def natural_key(v):
    """Sort key ordering 'clf2' before 'clf10', for every method ordering (tables, figures)."""
    return [(0, float(t), "") if t[0].isdigit() else (1, 0.0, t)
            for t in re.findall(r"\d+(?:\.\d+)?|\D+", str(v))]


def _listify(v):
    return [] if v is None else [v] if isinstance(v, str) else list(v)


def _fmt_key(cols, key):
    return ", ".join(f"{c}={v}" for c, v in zip(cols, key if isinstance(key, tuple) else (key,)))


def _groups(df, group):  # (group values as a dict, rows) per group
    return ([(dict(zip(group, k if isinstance(k, tuple) else (k,))), g)
             for k, g in df.groupby(group, dropna=False, sort=True)] if group else [({}, df)])


def _synthetic(df):
    return ({"synthetic": bool(df["synthetic"].fillna(False).astype(bool).any())}
            if "synthetic" in df.columns else {})


def _wide(df, e):  # mean metric per block (rows) and treatment (columns), NaN = no result
    return (df.groupby(e["blocks"] + [e["compare"]], dropna=False, sort=True)[e["metric"]]
            .mean().unstack(e["compare"]).reindex(columns=e["methods"]))


def _pairwise_table(df, e):
    test, alpha, blocks, hib = e["test"], e["alpha"], e["blocks"], e["higher_is_better"]
    pairs = (list(itertools.combinations(e["methods"], 2)) if e["control"] is None
             else [(e["control"], m) for m in e["methods"] if m != e["control"]])
    how = dict(method=e.get("method", "auto" if test == "wilcoxon" else "asymptotic"),
               correction=bool(e.get("continuity", False)))
    rows = []
    for gd, gdf in _groups(df, e["group_by"]):
        wide = _wide(gdf, e)
        ratio = (float((gdf["n_test"] / gdf["n_train"]).mean()) if e.get("corrected")
                 and {"n_train", "n_test"} <= set(gdf) else None)
        family = []
        for a, b in pairs:
            xa, xb = wide[a].to_numpy(float), wide[b].to_numpy(float)
            absent = [m for m, v in ((a, xa), (b, xb)) if np.isnan(v).all()]
            miss = [f"all {len(wide)} block(s) ({', '.join(blocks)}): no result for {m} in "
                    "this group" for m in absent]
            for key, va, vb in zip(wide.index, xa, xb):
                lack = [m for m, v in ((a, va), (b, vb)) if np.isnan(v) and m not in absent]
                if lack:
                    miss.append(f"{_fmt_key(blocks, key)} (no result for {' and '.join(lack)})")
            row = {**gd, "metric": e["metric"], "test": test, "method_a": a, "method_b": b,
                   **_synthetic(gdf[gdf[e["compare"]].isin([a, b])])}
            if test == "ranksum":
                row.update(rank_sum(xa, xb, **how))
            elif test == "paired-t":
                row.update(paired_t(xa, xb, corrected=ratio is not None, test_train_ratio=ratio))
            else:
                row.update(wilcoxon_signed_rank(xa, xb, e.get("zero_method", "wilcox"), **how))
            diff = row.get("mean_diff", row["mean_a"] - row["mean_b"])
            row.update(n_missing=int((np.isnan(xa) | np.isnan(xb)).sum()), missing="; ".join(miss),
                       better=(a if (diff > 0) == hib else b) if diff == diff and diff else "",
                       note=pairwise_note(test, row.get("n_pairs", 0), alpha,
                                          "datasets" if blocks == ["dataset"] else "folds"))
            family.append(row)
        ps = np.array([r["p"] for r in family], dtype=float)
        for r, pa in zip(family, holm(ps) if e["correction"] == "holm" else ps):
            r.update(p_adj=pa, correction=e["correction"], alpha=alpha, significant=pa <= alpha)
        rows += family
    return pd.DataFrame(rows)


def _friedman_tables(df, e):
    """The summary, ranks, Nemenyi and excluded-blocks tables of a Friedman entry."""
    control, alpha, metric, blocks = e["control"], e["alpha"], e["metric"], e["blocks"]
    summ, rank_rows, nem_rows, excl_rows = [], [], [], []
    for gd, gdf in _groups(df, e["group_by"]):
        wide = _wide(gdf, e)
        missing = {key: ", ".join(map(str, row.index[row.isna()]))
                   for key, row in wide.iterrows() if row.isna().any()}
        excl_rows += [{**gd, "metric": metric, "block": _fmt_key(blocks, key),
                       "missing_methods": lack, "reason": f"no result for {lack} (Friedman "
                       "needs every method on every block)"} for key, lack in missing.items()]
        complete = wide.dropna(how="any")
        N, k = complete.shape
        row = {**gd, "metric": metric, "k": k, "N": N, "n_blocks_total": len(wide),
               "n_excluded": len(missing), "excluded": "; ".join(
                   f"{_fmt_key(blocks, key)} (lacks {lack})" for key, lack in missing.items()),
               "alpha": alpha, "control": "" if control is None else control,
               "higher_is_better": e["higher_is_better"], **_synthetic(gdf)}
        if N < 2 or k < 2:
            summ.append({**row, "note": f"not run: {N} complete block(s) and {k} method(s); "
                                        "need at least 2 of each"})
            continue
        fr = friedman(complete.to_numpy(), e["higher_is_better"], bool(e.get("tie_correction")))
        cdn, cdb = (critical_difference(k, N, alpha, t) for t in ("nemenyi", "bonferroni-dunn"))
        R = pd.Series(fr["avg_ranks"], index=complete.columns).sort_values(kind="mergesort")
        pairs = [{**gd, "metric": metric, "method_a": a, "method_b": b, "rank_a": R[a],
                  "rank_b": R[b], "rank_diff": R[b] - R[a], "cd_nemenyi": cdn,
                  "significant": bool(R[b] - R[a] > cdn)}
                 for a, b in itertools.combinations(R.index, 2)]
        reject = bool(fr["p_F"] <= alpha)
        summ.append({**row, "chi2": fr["chi2"], "df": fr["df"], "p": fr["p"], "F_ID": fr["F"],
                     "df1": fr["df1"], "df2": fr["df2"], "p_ID": fr["p_F"], "reject": reject,
                     "q_nemenyi": critical_value(k, alpha), "cd_nemenyi": cdn,
                     "q_bonferroni_dunn": critical_value(k, alpha, "bonferroni-dunn"),
                     "cd_bonferroni_dunn": cdb, "note": friedman_note(
                         k, N, cdn, reject, sum(p["significant"] for p in pairs))})
        post = (None if control is None
                else posthoc_vs_control(R, N, control, alpha, e["correction"]))
        for m in R.index:
            rank_rows.append({**gd, "metric": metric, "method": m, "mean_rank": R[m],
                              "mean_metric": float(complete[m].mean()), "N": N})
            if post is not None:
                rank_rows[-1].update(control=control, **post.loc[m].to_dict(),
                                     beyond_cd_bonferroni_dunn=bool(abs(R[m] - R[control]) > cdb))
        nem_rows += pairs
    return (pd.DataFrame(summ), pd.DataFrame(rank_rows), pd.DataFrame(nem_rows),
            pd.DataFrame(excl_rows, columns=[*e["group_by"], "metric", "block",
                                             "missing_methods", "reason"]))


def resolve_label(value, df, compare="method"):
    """The value of column ``compare`` meant by ``value``: itself when present, otherwise (for
    compare = method) the single method whose classifier or selector name is ``value``."""
    values = pd.unique(df[compare].dropna())
    if value in set(values):
        return value
    if compare == "method":
        hit = df[[c for c in ("classifier", "selector") if c in df.columns]].eq(value).any(axis=1)
        cands = sorted(pd.unique(df.loc[hit, "method"]), key=natural_key)
        if len(cands) == 1:
            return cands[0]
        if cands:
            raise ValueError(f"{value!r} matches several methods {cands}; give the full "
                             "method label")
    raise ValueError(f"{value!r} is not among the compared {compare} values "
                     f"{sorted(values, key=natural_key)}")


def _setup(entry, scores, metric_default):
    """(the entry with every default filled in, the scores it filters)."""
    e, df = {"correction": "holm", "compare": "method", "control": None, **entry}, scores
    for col, val in (e.get("filter") or {}).items():
        if col not in df.columns:
            raise KeyError(f"filter column {col!r} not in scores (columns: {list(df.columns)})")
        df = df[df[col].isin(list(val) if isinstance(val, (list, tuple, set)) else [val])]
    over = e.get("over") or ("folds" if e.get("test") == "paired-t" else "datasets")
    for key, value, ok in (("test", e.get("test"), TESTS), ("over", over, ("folds", "datasets")),
                           ("correction", e["correction"], ("holm", "none"))):
        if value not in ok:
            raise ValueError(f"stats entry: {key} must be one of {ok}, got {value!r}")
    blocks = e["blocks"] = (_listify(e.get("blocks"))
                            or (["repeat", "fold"] if over == "folds" else ["dataset"]))
    if e.get("group_by") is None:
        ratios = ("train_ratio" in df.columns and df["train_ratio"].nunique() > 1
                  and "train_ratio" not in blocks)
        e["group_by"] = (["dataset"] * (over == "folds" and "dataset" not in blocks)
                         + ["train_ratio"] * ratios)
    e["group_by"], e["metric"] = _listify(e["group_by"]), e.get("metric") or metric_default
    for col in [e["metric"], e["compare"], *blocks, *e["group_by"]]:
        if col not in df.columns:
            raise KeyError(f"stats entry {entry}: column {col!r} not in scores")
    if e.get("higher_is_better") is None:
        e["higher_is_better"] = not str(e["metric"]).endswith("_seconds")
    e["alpha"] = float(e.get("alpha", 0.05))
    e["methods"] = ([resolve_label(m, df, e["compare"]) for m in _listify(e.get("methods"))]
                    or sorted(df[e["compare"]].dropna().unique(), key=natural_key))
    if e["control"] is not None:
        try:
            e["control"] = resolve_label(e["control"], df, e["compare"])
        except ValueError as err:
            raise ValueError(f"stats entry: control: {err}") from None
        if e["control"] not in e["methods"]:
            raise ValueError(f"stats entry: control {e['control']!r} is not among the "
                             f"compared {e['compare']} values {e['methods']}")
    return e, df


def default_stats(scores: pd.DataFrame, metrics: str | Sequence[str] = ("accuracy", "auroc")
                  ) -> list[dict]:
    """The entries run when an experiment configures no ``stats:``: for each of ``metrics``
    (the experiment's ``metrics:``) a Friedman test over >= 2 data sets and >= 2 methods, and
    paired t-tests over matched folds between 2..12 methods inside each data set."""
    n_methods, n_sets = (scores[c].nunique() if c in scores.columns else 0
                         for c in ("method", "dataset"))
    tests = [t for t, ok in (("friedman", n_sets >= 2 and n_methods >= 2),
                             ("paired-t", 2 <= n_methods <= 12
                              and {"repeat", "fold"} <= set(scores.columns))) if ok]
    return [{"test": t, "metric": m} for m in dict.fromkeys(_listify(metrics))
            if m in scores.columns and scores[m].notna().any() for t in tests]


def run_stats(scores: pd.DataFrame, entries: Sequence[Mapping] | None,
              metrics: str | Sequence[str] = ("accuracy", "auroc"), defaults: bool = True
              ) -> dict[str, pd.DataFrame]:
    """{table name: DataFrame} of the configured tests (none and ``defaults``: those of
    :func:`default_stats` over ``metrics``, whose first is also an entry's default metric): ``<name>`` per pairwise test; per Friedman test ``<name>`` (chi2_F,
    Iman-Davenport F, Nemenyi and Bonferroni-Dunn q and CD per group), ``<name>_ranks`` (with
    z-tests vs the control), ``<name>_nemenyi`` and ``<name>_excluded``."""
    out: dict[str, pd.DataFrame] = {}
    metrics = _listify(metrics)
    for entry in (entries or (default_stats(scores, metrics) if defaults else [])):
        e, df = _setup(entry, scores, metrics[0])
        base = str(e.get("name") or f"{e['test']}_{e['metric']}")
        name = next(n for n in itertools.chain([base], (f"{base}_{i}" for i in itertools.count(2)))
                    if n not in out)
        if e["test"] == "friedman":
            out.update(zip((name + s for s in ("", "_ranks", "_nemenyi", "_excluded")),
                           _friedman_tables(df, e)))
        else:
            out[name] = _pairwise_table(df, e)
    return out
