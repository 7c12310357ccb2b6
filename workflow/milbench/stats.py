"""Significance tests for comparing MIL methods.

Two layers:

* array-level tests with the exact conventions of the papers and of Demšar (2006),
  "Statistical comparisons of classifiers over multiple data sets", JMLR 7:1-30:
  :func:`paired_t` (cvfs-mil Table 1), :func:`wilcoxon_signed_rank`, :func:`rank_sum`
  (hydr-mi Tables 12-13), :func:`holm`, :func:`friedman` (average ranks, Demšar eq. 1,
  Iman-Davenport F, eq. 2), :func:`critical_difference` (Nemenyi and Bonferroni-Dunn,
  Demšar §3.2.2) and :func:`posthoc_vs_control` (z-tests of rank differences + Holm);
* :func:`run_stats`, which turns a ``scores.parquet`` DataFrame and the ``stats:`` entries
  of an experiment config into named tables (``results/<exp>/stats/<name>.csv``).

Configuration of one ``stats`` entry (all keys optional except ``test``)::

    name:        table name (default "<test>_<metric>", made unique)
    test:        paired-t | wilcoxon | ranksum | friedman
    metric:      accuracy | auroc | any numeric score column (default: metric_default)
    control:     method (value of the `compare` column) every other one is compared with;
                 null = all pairs (pairwise tests) / no control (friedman)
    alpha:       0.05
    correction:  holm | none          (family = all comparisons inside one group)
    compare:     column whose values are the compared treatments (default "method";
                 e.g. "selector" for hydr-mi's HyDR-MI vs ReliefF-MI vs all features)
    blocks:      columns that define the matched units.  Defaults: paired-t -> repeat, fold
                 (matched folds); wilcoxon/ranksum/friedman -> dataset (Demšar's setting:
                 one value per method and data set).  Scores are averaged over all other
                 rows inside a (group, block, treatment) cell.
    over:        folds | datasets  -- shorthand for the blocks of paired-t / wilcoxon
    group_by:    columns; one independent analysis per group.  Default: dataset for
                 fold-level tests, nothing for data-set-level tests; train_ratio is added
                 when the scores hold more than one training ratio.
    filter:      {column: value or [values]} applied to the scores first
    methods:     list of treatments to keep (default: all after filtering)
    post_hoc:    accepted for readability; Friedman tables always report both Nemenyi and
                 Bonferroni-Dunn critical differences (and Holm z-tests vs the control)

``control`` and ``methods`` may name a method by its full label or, when unique, by its
classifier or selector name (``control: miordm``).
    higher_is_better: default true (false for metrics ending in "_seconds")
    tie_correction:   friedman only, default false (Demšar's chi2_F; true = scipy's)
    zero_method:      wilcoxon only: wilcox (drop zero differences, default) | zsplit
                      (Demšar: split the ranks of zero differences evenly) | pratt
    method:           wilcoxon/ranksum p-value: auto | exact | asymptotic
    corrected:        paired-t only: Nadeau & Bengio (2003) corrected resampled t-test
                      (variance inflated by n_test/n_train), default false

Missing results are never dropped silently: pairwise tables carry ``n_missing`` and
``missing`` (the blocks left out and which method lacks them); every Friedman analysis
writes ``<name>_excluded`` (each block left out of the rank test and the methods it lacks)
and repeats the count/list in its summary row.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as _st

__all__ = [
    "holm", "paired_t", "wilcoxon_signed_rank", "rank_sum", "rank_matrix", "friedman",
    "friedman_from_ranks", "natural_key", "synthetic_scores",
    "nemenyi_q", "bonferroni_dunn_q", "critical_difference", "posthoc_vs_control",
    "nemenyi_cliques", "run_stats", "default_stats", "resolve_label", "TESTS",
]

TESTS = ("paired-t", "wilcoxon", "ranksum", "friedman")


# ----------------------------------------------------------------------------- basics
def holm(pvalues, alpha=None):
    """Holm (1979) step-down adjusted p-values.

    ``p_adj(i) = max_{j<=i} min(1, (m - j + 1) p_(j))`` over the ascending order; NaN
    entries are ignored (and stay NaN) and do not count in m.  With ``alpha`` given,
    returns ``(p_adj, reject)`` where ``reject = p_adj <= alpha`` (equivalent to Holm's
    sequential procedure).
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    pv = p[ok]
    m = pv.size
    if m:
        order = np.argsort(pv, kind="mergesort")
        adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * pv[order]))
        tmp = np.empty(m)
        tmp[order] = adj
        out[ok] = tmp
    if alpha is None:
        return out
    return out, np.where(ok, out <= alpha, False)


def _as_pair(x, y):
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def paired_t(x, y, corrected=False, test_train_ratio=None):
    """Two-sided paired t-test on matched results (e.g. the same CV folds).

    t = mean(d) / sqrt(var(d) / n), df = n - 1, d = x - y (cvfs-mil Table 1 reports its
    p-value).  With ``corrected=True`` the Nadeau & Bengio (2003) corrected resampled
    t-test is used: var(d) * (1/n + n_test/n_train) replaces var(d)/n
    (``test_train_ratio`` = n_test/n_train is then required).  Pairs with a NaN are
    dropped.  Returns a dict (t, df, p, n, mean_diff, sd_diff).
    """
    x, y = _as_pair(x, y)
    d = x - y
    n = d.size
    res = dict(n=n, mean_diff=float(d.mean()) if n else np.nan,
               sd_diff=float(d.std(ddof=1)) if n > 1 else np.nan,
               t=np.nan, df=n - 1 if n > 1 else np.nan, p=np.nan)
    if n < 2:
        return res
    var = d.var(ddof=1)
    if corrected:
        if test_train_ratio is None:
            raise ValueError("corrected t-test needs test_train_ratio = n_test/n_train")
        se2 = var * (1.0 / n + float(test_train_ratio))
    else:
        se2 = var / n
    if se2 == 0:
        # identical results on every pair: no evidence of a difference unless the
        # (constant) difference is non-zero
        t = 0.0 if res["mean_diff"] == 0 else math.copysign(np.inf, res["mean_diff"])
    else:
        t = res["mean_diff"] / math.sqrt(se2)
    res["t"] = float(t)
    res["p"] = float(2 * _st.t.sf(abs(t), n - 1))
    return res


def _signed_rank_exact_counts(n):
    """Number of sign assignments of ranks 1..n giving each R+ value (0..n(n+1)/2)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return counts


def wilcoxon_signed_rank(x, y=None, zero_method="wilcox", method="auto", correction=False):
    """Wilcoxon signed-rank test for paired samples (two-sided), Demšar §3.1.3.

    Differences d = x - y are ranked by |d| (ties get average ranks); R+ / R- are the
    rank sums of positive / negative differences and T = min(R+, R-).

    zero_method: "wilcox" drops zero differences; "zsplit" (Demšar's recommendation)
    ranks them with the rest and splits their ranks evenly between R+ and R-;
    "pratt" ranks them and drops their ranks.
    method: "exact" = exact null distribution (no ties/zeros: the classical table;
    otherwise the exact permutation distribution over all 2^n sign flips, n <= 20);
    "asymptotic" = normal approximation with tie correction (and optional continuity
    correction); "auto" = exact if n <= 50 without ties/zeros, permutation if ties or
    zeros and n <= 13, else asymptotic -- the same rule as scipy.stats.wilcoxon.
    Returns a dict (r_plus, r_minus, T, z, p, n, method).
    """
    if y is None:
        d = np.asarray(x, dtype=float).ravel()
        d = d[~np.isnan(d)]
    else:
        a, b = _as_pair(x, y)
        d = a - b
    if zero_method not in ("wilcox", "zsplit", "pratt"):
        raise ValueError(f"zero_method must be wilcox, zsplit or pratt, not {zero_method!r}")
    n_zero = int(np.sum(d == 0))
    n_all = d.size
    if zero_method == "wilcox":
        d = d[d != 0]
    n = d.size
    res = dict(n=n, n_zero=n_zero, r_plus=np.nan, r_minus=np.nan, T=np.nan, z=np.nan,
               p=np.nan, method="")
    if n == 0:
        return res
    ranks = _st.rankdata(np.abs(d))
    zeros = d == 0
    r_plus = ranks[d > 0].sum()
    r_minus = ranks[d < 0].sum()
    if zero_method == "zsplit":
        r_plus += ranks[zeros].sum() / 2
        r_minus += ranks[zeros].sum() / 2
    # normal approximation (always reported as z)
    mn = n * (n + 1) / 4.0
    se = n * (n + 1) * (2 * n + 1)
    _, tie_counts = np.unique(np.abs(d), return_counts=True)
    tie_term = np.sum(tie_counts.astype(float) ** 3 - tie_counts)
    if zero_method == "pratt":
        nz = int(zeros.sum())
        mn -= nz * (nz + 1) / 4.0
        se -= nz * (nz + 1) * (2 * nz + 1)
        if nz:
            tie_term -= nz ** 3 - nz
    se = math.sqrt(max((se - tie_term / 2) / 24.0, 0.0))
    z = (r_plus - mn) / se if se > 0 else np.nan
    has_ties = bool(np.any(tie_counts > 1))
    has_zeros = bool(zeros.any()) or (zero_method == "wilcox" and n_zero > 0)
    if method == "auto":
        if n_all <= 50 and not (has_ties or has_zeros):
            method = "exact"
        elif n_all <= 50 and n <= 13:
            method = "exact"
        else:
            method = "asymptotic"
    if method == "asymptotic":
        zc = z
        if correction and not np.isnan(z):
            zc = z - np.sign(z) * 0.5 / se
        p = float(2 * _st.norm.sf(abs(zc))) if not np.isnan(zc) else 1.0
    elif method == "exact":
        if not (has_ties or zeros.any()):
            counts = _signed_rank_exact_counts(n)
            total = counts.sum()
            k = int(round(r_plus))
            p = 2 * min(counts[: k + 1].sum(), counts[k:].sum()) / total
        else:
            if n > 20:
                raise ValueError("exact permutation test with ties is limited to n <= 20")
            # every sign assignment of the observed |d| ranks; zero differences carry a
            # zero sign (their contribution is fixed), as in scipy's permutation test
            signs = 1 - 2 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)
            sgn_d = np.sign(d)
            stat = ((signs * np.abs(sgn_d)) > 0) @ ranks
            if zero_method == "zsplit":
                stat = stat + ranks[zeros].sum() / 2
            tol = 1e-12 * max(abs(r_plus), 1.0)
            p = 2 * min(np.mean(stat <= r_plus + tol), np.mean(stat >= r_plus - tol))
        p = float(min(1.0, p))
    else:
        raise ValueError(f"method must be auto, exact or asymptotic, not {method!r}")
    res.update(r_plus=float(r_plus), r_minus=float(r_minus),
               T=float(min(r_plus, r_minus)), z=float(-abs(z)) if not np.isnan(z) else z,
               p=p, method=method)
    return res


def _ranksum_exact_counts(m, n):
    """Counts of the Mann-Whitney U of the first sample (size m) under H0, U=0..m*n."""
    # f[i][j] = counts for sizes (i, j); recursion f(i,j,u) = f(i-1,j,u-j) + f(i,j-1,u)
    prev = [np.ones(1) for _ in range(n + 1)]       # i = 0: U = 0 only
    for i in range(1, m + 1):
        cur = [np.ones(1)]                            # j = 0: U = 0 only
        for j in range(1, n + 1):
            c = np.zeros(i * j + 1)
            a = prev[j]                               # f(i-1, j): shift by j
            c[j: j + a.size] += a
            b = cur[j - 1]                            # f(i, j-1)
            c[: b.size] += b
            cur.append(c)
        prev = cur
    return prev[n]


def rank_sum(x, y, method="asymptotic", correction=False):
    """Wilcoxon rank-sum (Mann-Whitney) test for two independent samples, two-sided.

    All values are ranked together (lowest = rank 1, ties averaged).  Reported as in
    hydr-mi Tables 12-13 (SPSS conventions): mean rank and sum of ranks of each
    sample; Wilcoxon W = rank sum of the smaller sample (of ``y`` when the sizes are
    equal); z = (W - n_W (N+1)/2) / sigma with the tie-corrected sigma
    sqrt(n_x n_y / 12 ((N+1) - sum(t^3 - t) / (N (N-1)))), no continuity correction
    unless ``correction``; "Asymp. sig. (2-tailed)" p = 2 Phi(-|z|).
    ``method="exact"`` gives the exact p of U (only without ties).
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    nx, ny = x.size, y.size
    res = dict(n_x=nx, n_y=ny, rank_sum_x=np.nan, rank_sum_y=np.nan, mean_rank_x=np.nan,
               mean_rank_y=np.nan, U=np.nan, W=np.nan, z=np.nan, p=np.nan, method=method)
    if nx == 0 or ny == 0:
        return res
    allv = np.concatenate([x, y])
    r = _st.rankdata(allv)
    rx, ry = r[:nx].sum(), r[nx:].sum()
    N = nx + ny
    _, t = np.unique(allv, return_counts=True)
    t = t.astype(float)
    var = nx * ny / 12.0 * ((N + 1) - np.sum(t ** 3 - t) / (N * (N - 1) if N > 1 else 1))
    if nx < ny:
        W, nW = rx, nx
    else:
        W, nW = ry, ny
    diff = W - nW * (N + 1) / 2.0
    if correction and diff != 0:
        diff -= math.copysign(0.5, diff)
    z = diff / math.sqrt(var) if var > 0 else np.nan
    U = rx - nx * (nx + 1) / 2.0
    if method == "asymptotic":
        p = float(2 * _st.norm.sf(abs(z))) if not np.isnan(z) else 1.0
    elif method == "exact":
        if np.any(t > 1):
            raise ValueError("exact rank-sum p-values need data without ties")
        counts = _ranksum_exact_counts(nx, ny)
        k = int(round(U))
        p = float(min(1.0, 2 * min(counts[: k + 1].sum(), counts[k:].sum()) / counts.sum()))
    else:
        raise ValueError(f"method must be asymptotic or exact, not {method!r}")
    res.update(rank_sum_x=float(rx), rank_sum_y=float(ry), mean_rank_x=float(rx / nx),
               mean_rank_y=float(ry / ny), U=float(U), W=float(W), z=float(z), p=p)
    return res


# ----------------------------------------------------------------------------- ranks
def rank_matrix(table, higher_is_better=True):
    """Ranks of the k methods (columns) inside each block (row); rank 1 = best,
    ties get the average of the ranks they span (Demšar §3.2.2)."""
    a = np.asarray(table, dtype=float)
    if np.isnan(a).any():
        raise ValueError("rank_matrix needs a complete table (drop incomplete blocks first)")
    return _st.rankdata(-a if higher_is_better else a, axis=1)


def friedman_from_ranks(avg_ranks, N):
    """Friedman chi2_F and Iman-Davenport F_F from the average ranks R_j of k methods
    over N blocks (Demšar 2006, eqs. 1-2):
    chi2_F = 12 N / (k (k+1)) [sum_j R_j^2 - k (k+1)^2 / 4] (k-1 df);
    F_F = (N-1) chi2_F / (N (k-1) - chi2_F) ((k-1, (k-1)(N-1)) df).
    Returns a dict (N, k, avg_ranks, chi2, df, p, F, df1, df2, p_F)."""
    R = np.asarray(avg_ranks, dtype=float)
    k = R.size
    chi2 = 12.0 * N / (k * (k + 1)) * (np.sum(R ** 2) - k * (k + 1) ** 2 / 4.0)
    return _friedman_result(R, N, chi2)


def _friedman_result(R, N, chi2):
    k = R.size
    chi2 = float(max(chi2, 0.0))
    df1, df2 = k - 1, (k - 1) * (N - 1)
    denom = N * (k - 1) - chi2
    if N < 2:
        F, pF = np.nan, np.nan
    elif denom <= 1e-12 * max(1.0, N * (k - 1)):
        F, pF = np.inf, 0.0     # perfect agreement of all blocks
    else:
        F = (N - 1) * chi2 / denom
        pF = float(_st.f.sf(F, df1, df2))
    return dict(N=N, k=k, avg_ranks=R, chi2=chi2, df=k - 1,
                p=float(_st.chi2.sf(chi2, k - 1)), F=float(F), df1=df1, df2=df2, p_F=pF)


def friedman(table, higher_is_better=True, tie_correction=False):
    """Friedman test with Iman-Davenport correction (Demšar 2006, eqs. 1-2).

    ``table``: N blocks (data sets) x k methods; ranks inside each block (1 = best, ties
    averaged), R_j = average rank of method j, then :func:`friedman_from_ranks`.
    ``tie_correction=True`` divides chi2_F by 1 - sum(t^3 - t) / (N (k^3 - k)) as
    scipy.stats.friedmanchisquare does (Demšar's formula, the default here, has none; it
    reproduces hydr-mi Table 6).  The result also holds the rank matrix (``ranks``).
    """
    a = np.asarray(table, dtype=float)
    N, k = a.shape
    ranks = rank_matrix(a, higher_is_better)
    R = ranks.mean(axis=0)
    chi2 = 12.0 * N / (k * (k + 1)) * (np.sum(R ** 2) - k * (k + 1) ** 2 / 4.0)
    if tie_correction:
        ties = 0.0
        for row in ranks:
            _, t = np.unique(row, return_counts=True)
            ties += np.sum(t.astype(float) ** 3 - t)
        c = 1.0 - ties / (N * (k ** 3 - k))
        chi2 = chi2 / c if c > 0 else np.nan
    res = _friedman_result(R, N, chi2)
    res["ranks"] = ranks
    return res


def nemenyi_q(k, alpha=0.05):
    """Nemenyi critical value q_alpha = studentized range quantile (k, inf df) / sqrt(2)
    (Demšar Table 5a: 1.960, 2.344, 2.569, ... for alpha = 0.05)."""
    if k < 2:
        return np.nan
    return float(_st.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2))


def bonferroni_dunn_q(k, alpha=0.05):
    """Bonferroni-Dunn critical value: two-tailed normal quantile at alpha / (k-1)
    (Demšar Table 5b: 1.960, 2.241, 2.394, ... for alpha = 0.05)."""
    if k < 2:
        return np.nan
    return float(_st.norm.ppf(1 - alpha / (2 * (k - 1))))


def critical_difference(k, N, alpha=0.05, test="nemenyi"):
    """CD = q_alpha sqrt(k (k+1) / (6 N)) (Demšar §3.2.2); test = nemenyi | bonferroni-dunn."""
    q = {"nemenyi": nemenyi_q, "bonferroni-dunn": bonferroni_dunn_q}[test](k, alpha)
    return float(q * math.sqrt(k * (k + 1) / (6.0 * N)))


def posthoc_vs_control(avg_ranks, N, control, alpha=0.05, correction="holm"):
    """Compare every method with a control by z = (R_i - R_c) / sqrt(k(k+1)/(6N))
    (Demšar §3.2.2) and two-sided normal p-values, Holm-adjusted by default.
    Returns a DataFrame indexed like ``avg_ranks`` (a Series); the control row is NaN."""
    R = pd.Series(avg_ranks, dtype=float)
    k = R.size
    se = math.sqrt(k * (k + 1) / (6.0 * N))
    z = (R - R[control]) / se
    p = pd.Series(2 * _st.norm.sf(np.abs(z.to_numpy())), index=R.index)
    z[control] = np.nan
    p[control] = np.nan
    padj = pd.Series(holm(p.to_numpy()) if correction == "holm" else p.to_numpy(),
                     index=R.index)
    return pd.DataFrame({"rank_diff": R - R[control], "z": z, "p": p, "p_adj": padj,
                         "significant": padj <= alpha})


def nemenyi_cliques(avg_ranks, cd):
    """Maximal groups of methods whose average ranks lie within ``cd`` of each other
    (the thick bars of a critical-difference diagram).  Returns lists of labels in rank
    order; singletons are omitted."""
    R = pd.Series(avg_ranks, dtype=float).sort_values(kind="mergesort")
    labels, vals = list(R.index), R.to_numpy()
    cliques, last_end = [], -1
    for i in range(len(vals)):
        j = i
        while j + 1 < len(vals) and vals[j + 1] - vals[i] <= cd + 1e-12:
            j += 1
        if j > i and j > last_end:
            cliques.append(labels[i: j + 1])
            last_end = j
    return cliques


# ----------------------------------------------------------------------------- tables
_PAIRWISE = ("paired-t", "wilcoxon", "ranksum")


def natural_key(v):
    """Sort key that orders 'clf2' before 'clf10' (numbers inside labels compared as
    numbers); used for every method ordering in tables and figures."""
    import re

    return [(0, float(t), "") if t and t[0].isdigit() else (1, 0.0, t)
            for t in re.findall(r"\d+(?:\.\d+)?|\D+", str(v))]


def _listify(v):
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return list(v)


def _apply_filter(df, flt):
    for col, val in (flt or {}).items():
        if col not in df.columns:
            raise KeyError(f"filter column {col!r} not in scores (columns: {list(df.columns)})")
        vals = list(val) if isinstance(val, (list, tuple, set)) else [val]
        df = df[df[col].isin(vals)]
    return df


def _fmt_key(cols, key):
    if not isinstance(key, tuple):
        key = (key,)
    return ", ".join(f"{c}={v}" for c, v in zip(cols, key))


def _defaults(entry, df):
    test = entry.get("test")
    if test not in TESTS:
        raise ValueError(f"stats entry: test must be one of {TESTS}, got {test!r}")
    over = entry.get("over")
    if over is None:
        over = "folds" if test == "paired-t" else "datasets"
    if entry.get("correction", "holm") not in ("holm", "none"):
        raise ValueError(f"stats entry: correction must be holm or none, got "
                         f"{entry.get('correction')!r}")
    if over not in ("folds", "datasets"):
        raise ValueError(f"stats entry: over must be folds or datasets, got {over!r}")
    if "blocks" in entry and entry["blocks"] is not None:
        blocks = _listify(entry["blocks"])
    else:
        blocks = ["repeat", "fold"] if over == "folds" else ["dataset"]
    if "group_by" in entry and entry["group_by"] is not None:
        group = _listify(entry["group_by"])
    else:
        group = ["dataset"] if over == "folds" and "dataset" not in blocks else []
        if ("train_ratio" in df.columns and df["train_ratio"].nunique(dropna=True) > 1
                and "train_ratio" not in blocks):
            group.append("train_ratio")
    return test, blocks, group


def _cell_means(df, keys, compare, metric):
    """Mean metric per (keys..., treatment), as a wide table (one column per treatment).
    Cells whose rows all have a NaN metric stay NaN (reported as missing)."""
    g = df.groupby(keys + [compare], dropna=False, sort=True)[metric].mean()
    wide = g.unstack(compare)
    return wide


def _missing_blocks(wide, methods):
    """{block key: [methods lacking it]} for the rows of ``wide`` with NaNs."""
    out = {}
    for key, row in wide[methods].iterrows():
        lack = [m for m in methods if pd.isna(row[m])]
        if lack:
            out[key] = lack
    return out


def _pairwise_table(df, entry, test, blocks, group, compare, metric, methods, hib):
    control = entry.get("control")
    alpha = float(entry.get("alpha", 0.05))
    correction = entry.get("correction", "holm")
    rows = []
    groups = [((), df)] if not group else df.groupby(group, dropna=False, sort=True)
    for gkey, gdf in groups:
        if not isinstance(gkey, tuple):
            gkey = (gkey,)
        wide = _cell_means(gdf, blocks, compare, metric).reindex(columns=methods)
        if control is not None:
            pairs = [(control, m) for m in methods if m != control]
        else:
            pairs = list(itertools.combinations(methods, 2))
        ratio = None
        if test == "paired-t" and entry.get("corrected"):
            if {"n_train", "n_test"} <= set(gdf.columns):
                ratio = float((gdf["n_test"] / gdf["n_train"]).mean())
        start = len(rows)
        for a, b in pairs:
            xa, xb = wide[a].to_numpy(float), wide[b].to_numpy(float)
            miss = []
            absent = [m for m, v in ((a, xa), (b, xb)) if np.isnan(v).all()]
            for m in absent:
                miss.append(f"all {len(wide)} block(s) ({', '.join(blocks)}): no result for "
                            f"{m} in this group")
            for key, va, vb in zip(wide.index, xa, xb):
                lack = [m for m, v in ((a, va), (b, vb)) if np.isnan(v) and m not in absent]
                if lack:
                    miss.append(f"{_fmt_key(blocks, key)} (no result for {' and '.join(lack)})")
            row = dict(zip(group, gkey))
            row.update(metric=metric, test=test, method_a=a, method_b=b)
            if "synthetic" in gdf.columns:
                row["synthetic"] = bool(gdf.loc[gdf[compare].isin([a, b]), "synthetic"]
                                        .fillna(False).astype(bool).any())
            if test == "ranksum":
                r = rank_sum(xa, xb, method=entry.get("method", "asymptotic"),
                             correction=bool(entry.get("continuity", False)))
                row.update(n_a=r["n_x"], n_b=r["n_y"],
                           mean_a=np.nanmean(xa) if r["n_x"] else np.nan,
                           mean_b=np.nanmean(xb) if r["n_y"] else np.nan,
                           mean_rank_a=r["mean_rank_x"], mean_rank_b=r["mean_rank_y"],
                           rank_sum_a=r["rank_sum_x"], rank_sum_b=r["rank_sum_y"],
                           W=r["W"], U=r["U"], z=r["z"], p=r["p"])
                diff = row["mean_a"] - row["mean_b"]
            else:
                ok = ~(np.isnan(xa) | np.isnan(xb))
                row.update(n_pairs=int(ok.sum()),
                           mean_a=float(xa[ok].mean()) if ok.any() else np.nan,
                           mean_b=float(xb[ok].mean()) if ok.any() else np.nan)
                if test == "paired-t":
                    r = paired_t(xa, xb, corrected=ratio is not None, test_train_ratio=ratio)
                    row.update(mean_diff=r["mean_diff"], sd_diff=r["sd_diff"], t=r["t"],
                               df=r["df"], p=r["p"])
                else:
                    r = wilcoxon_signed_rank(xa, xb,
                                             zero_method=entry.get("zero_method", "wilcox"),
                                             method=entry.get("method", "auto"),
                                             correction=bool(entry.get("continuity", False)))
                    row.update(mean_diff=row["mean_a"] - row["mean_b"], n_nonzero=r["n"],
                               r_plus=r["r_plus"], r_minus=r["r_minus"], T=r["T"],
                               z=r["z"], p=r["p"], p_method=r["method"])
                diff = row["mean_diff"]
            row["n_missing"] = int((np.isnan(xa) | np.isnan(xb)).sum())
            row["missing"] = "; ".join(miss)
            if not np.isnan(diff) and diff != 0:
                row["better"] = a if (diff > 0) == hib else b
            else:
                row["better"] = ""
            rows.append(row)
        ps = np.array([r["p"] for r in rows[start:]], dtype=float)
        padj = holm(ps) if correction == "holm" else ps
        for r, pa in zip(rows[start:], padj):
            r.update(p_adj=pa, correction=correction, alpha=alpha,
                     significant=bool(pa <= alpha) if not np.isnan(pa) else False)
    return pd.DataFrame(rows)


def _friedman_tables(df, entry, blocks, group, compare, metric, methods, hib):
    control = entry.get("control")
    alpha = float(entry.get("alpha", 0.05))
    correction = entry.get("correction", "holm")
    summ, rank_rows, excl_rows, nem_rows = [], [], [], []
    groups = [((), df)] if not group else df.groupby(group, dropna=False, sort=True)
    for gkey, gdf in groups:
        if not isinstance(gkey, tuple):
            gkey = (gkey,)
        gd = dict(zip(group, gkey))
        wide = _cell_means(gdf, blocks, compare, metric).reindex(columns=methods)
        missing = _missing_blocks(wide, methods)
        for key, lack in missing.items():
            excl_rows.append({**gd, "metric": metric, "block": _fmt_key(blocks, key),
                              "missing_methods": ", ".join(map(str, lack)),
                              "reason": "no result for " + ", ".join(map(str, lack))
                              + " (Friedman needs every method on every block)"})
        complete = wide.dropna(how="any")
        N, k = complete.shape
        row = {**gd, "metric": metric, "k": k, "N": N, "n_blocks_total": len(wide),
               "n_excluded": len(missing),
               "excluded": "; ".join(f"{_fmt_key(blocks, key)} (lacks {', '.join(map(str, l))})"
                                     for key, l in missing.items()),
               "alpha": alpha, "control": control if control is not None else "",
               "higher_is_better": hib}
        if "synthetic" in gdf.columns:
            row["synthetic"] = bool(gdf["synthetic"].fillna(False).astype(bool).any())
        if N < 2 or k < 2:
            row["note"] = (f"not run: {N} complete block(s) and {k} method(s); "
                           "need at least 2 of each")
            summ.append(row)
            continue
        fr = friedman(complete.to_numpy(), higher_is_better=hib,
                      tie_correction=bool(entry.get("tie_correction", False)))
        qn, qb = nemenyi_q(k, alpha), bonferroni_dunn_q(k, alpha)
        cdn = critical_difference(k, N, alpha, "nemenyi")
        cdb = critical_difference(k, N, alpha, "bonferroni-dunn")
        row.update(chi2=fr["chi2"], df=fr["df"], p=fr["p"], F_ID=fr["F"], df1=fr["df1"],
                   df2=fr["df2"], p_ID=fr["p_F"], reject=bool(fr["p_F"] <= alpha),
                   q_nemenyi=qn, cd_nemenyi=cdn, q_bonferroni_dunn=qb,
                   cd_bonferroni_dunn=cdb, note="")
        summ.append(row)
        R = pd.Series(fr["avg_ranks"], index=complete.columns)
        post = (posthoc_vs_control(R, N, control, alpha, correction)
                if control is not None and control in R.index else None)
        order = R.sort_values(kind="mergesort").index
        for m in order:
            rr = {**gd, "metric": metric, "method": m, "mean_rank": R[m],
                  "mean_metric": float(complete[m].mean()), "N": N}
            if post is not None:
                rr.update(control=control, rank_diff=post.loc[m, "rank_diff"],
                          z=post.loc[m, "z"], p=post.loc[m, "p"], p_adj=post.loc[m, "p_adj"],
                          significant=bool(post.loc[m, "significant"]),
                          beyond_cd_bonferroni_dunn=bool(abs(post.loc[m, "rank_diff"]) > cdb)
                          if m != control else False)
            rank_rows.append(rr)
        for a, b in itertools.combinations(order, 2):
            diff = R[b] - R[a]
            nem_rows.append({**gd, "metric": metric, "method_a": a, "method_b": b,
                             "rank_a": R[a], "rank_b": R[b], "rank_diff": diff,
                             "cd_nemenyi": cdn, "significant": bool(diff > cdn)})
    return (pd.DataFrame(summ), pd.DataFrame(rank_rows), pd.DataFrame(nem_rows),
            pd.DataFrame(excl_rows, columns=group + ["metric", "block", "missing_methods",
                                                     "reason"]))


def resolve_label(value, df, compare="method"):
    """The value of column ``compare`` meant by ``value``: itself when present, otherwise
    (for compare = method) the single method whose classifier or selector name is
    ``value`` -- so a config can say ``control: miordm`` instead of the full label."""
    values = pd.unique(df[compare].dropna())
    if value in set(values):
        return value
    if compare == "method":
        hit = np.zeros(len(df), dtype=bool)
        for col in ("classifier", "selector"):
            if col in df.columns:
                hit |= (df[col] == value).to_numpy()
        cands = sorted(pd.unique(df.loc[hit, "method"]), key=natural_key)
        if len(cands) == 1:
            return cands[0]
        if len(cands) > 1:
            raise ValueError(f"{value!r} matches several methods {cands}; give the full "
                             "method label")
    raise ValueError(f"{value!r} is not among the compared {compare} values "
                     f"{sorted(values, key=natural_key)}")


def _unique_name(name, taken):
    base, i = name, 2
    while name in taken:
        name = f"{base}_{i}"
        i += 1
    return name


def default_stats(scores: pd.DataFrame, metric_default: str = "accuracy") -> list[dict]:
    """The entries used when an experiment configures no ``stats:``: for accuracy and
    AUROC (whichever are present, ``metric_default`` first) a Friedman test over the data
    sets (with Nemenyi / Bonferroni-Dunn CDs) when there are >= 2 data sets and >= 2
    methods, and paired t-tests over matched folds between all pairs of methods inside each
    data set when there are 2..12 methods."""
    metrics = [metric_default] + [m for m in ("accuracy", "auroc") if m != metric_default]
    metrics = [m for m in metrics if m in scores.columns and scores[m].notna().any()]
    n_methods = scores["method"].nunique() if "method" in scores.columns else 0
    n_sets = scores["dataset"].nunique() if "dataset" in scores.columns else 0
    out = []
    for m in metrics:
        if n_sets >= 2 and n_methods >= 2:
            out.append({"test": "friedman", "metric": m})
        if 2 <= n_methods <= 12 and {"repeat", "fold"} <= set(scores.columns):
            out.append({"test": "paired-t", "metric": m})
    return out


def run_stats(scores: pd.DataFrame, entries: Sequence[Mapping] | None,
              metric_default: str = "accuracy", defaults: bool = True
              ) -> dict[str, pd.DataFrame]:
    """Run the configured tests on a scores table; returns {table name: DataFrame}.

    See the module docstring for the entry keys.  With no entries (None or empty) and
    ``defaults`` the set from :func:`default_stats` is run.  Table names: ``<name>`` for
    pairwise tests (paired-t, wilcoxon, ranksum); for friedman ``<name>`` (one summary
    row per group: chi2_F, p, Iman-Davenport F and p, q and CD of Nemenyi and
    Bonferroni-Dunn, blocks left out), ``<name>_ranks`` (average rank per method, post-hoc
    z/p vs the control), ``<name>_nemenyi`` (all pairs, rank difference vs CD) and
    ``<name>_excluded``.  Tables carry ``synthetic`` when the scores do.
    """
    out: dict[str, pd.DataFrame] = {}
    if not entries and defaults:
        entries = default_stats(scores, metric_default)
    for entry in entries or []:
        entry = dict(entry)
        df = _apply_filter(scores, entry.get("filter"))
        test, blocks, group = _defaults(entry, df)
        metric = entry.get("metric") or metric_default
        compare = entry.get("compare", "method")
        for col in [metric, compare, *blocks, *group]:
            if col not in df.columns:
                raise KeyError(f"stats entry {entry}: column {col!r} not in scores")
        hib = entry.get("higher_is_better")
        if hib is None:
            hib = not str(metric).endswith("_seconds")
        methods = ([resolve_label(m, df, compare) for m in _listify(entry.get("methods"))]
                   or sorted(df[compare].dropna().unique(), key=natural_key))
        control = entry.get("control")
        if control is not None:
            try:
                control = resolve_label(control, df, compare)
            except ValueError as e:
                raise ValueError(f"stats entry: control: {e}") from None
            if control not in methods:
                raise ValueError(f"stats entry: control {control!r} is not among the "
                                 f"compared {compare} values {methods}")
            entry["control"] = control
        name = _unique_name(str(entry.get("name") or f"{test}_{metric}"), out)
        if test in _PAIRWISE:
            out[name] = _pairwise_table(df, entry, test, blocks, group, compare, metric,
                                        methods, hib)
        else:
            summ, ranks, nem, excl = _friedman_tables(df, entry, blocks, group, compare,
                                                      metric, methods, hib)
            out[name] = summ
            out[f"{name}_ranks"] = ranks
            out[f"{name}_nemenyi"] = nem
            out[f"{name}_excluded"] = excl
    return out


# ----------------------------------------------------------------------------- demo data
def synthetic_scores(seed=0, datasets=("musk1", "musk2", "elephant", "fox", "tiger"),
                     methods=None, repeats=2, folds=5, n_features=(None,),
                     train_ratios=(np.nan,), experiment="demo"):
    """A generated scores table in the ``scores.parquet`` schema (synthetic=True), used by
    the tests and for trying the statistics/figures without running the pipeline.

    ``methods``: list of (selector, classifier, effect) -- ``effect`` is added to the
    accuracy/AUROC of that method (default: four methods of increasing strength).
    ``n_features``: feature counts per selector run (None = all 100 features).
    """
    rng = np.random.default_rng(seed)
    if methods is None:
        methods = [("none", "milr", 0.0), ("pca", "milr", 0.01), ("relieff-mi", "milr", 0.03),
                   ("midr", "milr", 0.06)]
    rows = []
    base = {d: 0.65 + 0.25 * rng.random() for d in datasets}
    for d in datasets:
        for ratio in train_ratios:
            for sel, clf, eff in methods:
                for nf in n_features:
                    nfeat = 100 if nf is None else int(nf)
                    label = f"{sel}" + ("" if nf is None else f"(n_features={nfeat})") + f"+{clf}"
                    for rep in range(repeats):
                        for fold in range(folds):
                            r_eff = 0.0 if np.isnan(ratio) else 0.15 * (ratio - 0.3)
                            f_eff = 0.0 if nf is None else -0.02 * abs(np.log(nfeat / 40.0))
                            acc = base[d] + eff + r_eff + f_eff + rng.normal(0, 0.03)
                            rows.append(dict(
                                experiment=experiment, dataset=d, selector=sel,
                                selector_params="{}" if nf is None else
                                f'{{"n_features": {nfeat}}}',
                                classifier=clf, classifier_params="{}", method=label,
                                repeat=rep, fold=fold, train_ratio=ratio,
                                accuracy=float(np.clip(acc, 0, 1)),
                                auroc=float(np.clip(acc + 0.05 + rng.normal(0, 0.02), 0, 1)),
                                fit_seconds=float((0.2 + 0.1 * len(sel)) * (1 + nfeat / 100)
                                                  * rng.lognormal(0, 0.1)),
                                predict_seconds=float(0.01 * rng.lognormal(0, 0.1)),
                                n_features=nfeat, n_train=80, n_test=20, diagnostics="{}",
                                synthetic=True, **{"sel.n_features": nfeat}))
    return pd.DataFrame(rows)
