"""Figures of a benchmark run: critical-difference diagrams, metric vs number
of selected features, metric vs training ratio, parameter heat maps, runtime bars.

Every plotting function takes a scores DataFrame (the ``scores.parquet`` schema) or
pre-computed ranks and returns a :class:`matplotlib.figure.Figure`; :func:`save_figure`
writes it as PNG and SVG; :func:`make_figures` runs the ``figures:`` entries of an
experiment config (or a default set) and returns the written paths.

Figures are built with ``matplotlib.figure.Figure`` directly (rendered by the Agg/SVG
backends on save), so no pyplot state or GUI backend is involved.

Figure entry keys (``figures:`` list in the experiment config)::

    kind:    cd | vs-features | vs-ratio | heatmap | runtime  (also accepted:
             critical-difference, ratio-curve, features-curve, time)
    name:    file stem (default "<kind>_<metric>", made unique)
    metric:  accuracy | auroc | ... (runtime: fit_cpu_seconds, the default | predict_cpu_seconds |
             fit_seconds | predict_seconds (wall) | total_seconds)
    filter:  {column: value or [values]}
    x, y:    heatmap: the two parameter columns (e.g. clf.lam, clf.theta);
    facet:   heatmap: further column(s) giving one panel per value (e.g. clf.mu);
             vs-features: x column (default n_features); vs-ratio: default train_ratio
    hue:     column naming the series (default: method; vs-features: selector+classifier)
    test:    cd only: nemenyi (default) | bonferroni-dunn (needs control)
    control: cd only: method label of the control for Bonferroni-Dunn
    alpha:   cd only (default 0.05)
    title:   figure title (default derived from kind, metric and experiment)
"""
from __future__ import annotations

import itertools
import json
import logging
import math
import textwrap
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from milbench.experiment.grid import method_label
from milbench.report.stats import (
    critical_difference,
    friedman,
    friedman_note,
    holm,
    natural_key,
    nemenyi_cliques,
    paired_t,
    resolve_label,
)

__all__ = ["cd_diagram", "plot_scores", "paired_vs_best", "plot_vs_features", "plot_vs_ratio", "plot_heatmap",
           "plot_runtime", "plot_feature_coverage", "save_figure", "make_figures",
           "default_figures", "KINDS"]

log = logging.getLogger(__name__)
KINDS = ("scores", "cd", "vs-features", "vs-ratio", "heatmap", "runtime")
#: other spellings accepted in configs
KIND_ALIASES = {"critical-difference": "cd", "cd-diagram": "cd", "ratio-curve": "vs-ratio",
                "training-ratio": "vs-ratio", "features-curve": "vs-features",
                "vs-dims": "vs-features", "time": "runtime", "runtime-bars": "runtime",
                "heat-map": "heatmap", "boxplot": "scores", "per-fold": "scores"}
#: labels longer than this are shown as codes (M1, M2, ...) with a key beside the figure
MAX_LABEL = 40
_METRIC_LABEL = {"accuracy": "Accuracy", "auroc": "AUROC", "balanced_accuracy": "Balanced accuracy",
                 "f1": "F1 score", "precision": "Precision", "recall": "Recall",
                 "matthews_corrcoef": "Matthews correlation (MCC)",
                 "average_precision": "Average precision", "fit_seconds": "Training time (s)",
                 "predict_seconds": "Prediction time (s)", "total_seconds": "Total time (s)",
                 "fit_cpu_seconds": "Training CPU time (s)",
                 "predict_cpu_seconds": "Prediction CPU time (s)",
                 "n_features": "Number of selected features", "train_ratio": "Training ratio"}


def _label(col):
    if col in _METRIC_LABEL:
        return _METRIC_LABEL[col]
    if col.startswith(("sel.", "clf.")):
        return ("selector " if col.startswith("sel.") else "classifier ") + col[4:]
    if col.startswith("diag."):                 # diag.select.sparsity_loss
        step, _, key = col[5:].partition(".")
        return f"{key.replace('_', ' ')} ({'selector' if step == 'select' else 'classifier'})"
    return col.replace("_", " ")


def _figure(nrows=1, ncols=1, panel=(5.0, 3.8), extra_w=0.0, key=(), extra_h=0.0):
    """A figure of nrows x ncols panels (``extra_h`` inches more for a title and footnote);
    with ``key`` lines (code -> full label), a column right of the panels holds them as a
    table and the figure is tall enough for it."""
    if not key:
        fig = Figure(figsize=(panel[0] * ncols + extra_w, panel[1] * nrows + extra_h),
                     layout="constrained")
        return fig, fig.subplots(nrows, ncols, squeeze=False)
    lines = [wrapped for line in key
             for wrapped in textwrap.wrap(line, 72, subsequent_indent="      ",
                                          break_on_hyphens=False)]
    key_w = 0.058 * max(len(line) for line in lines) + 0.4
    height = max(panel[1] * nrows + extra_h, 0.16 * len(lines) + 0.9)
    fig = Figure(figsize=(panel[0] * ncols + extra_w + key_w, height), layout="constrained")
    gs = fig.add_gridspec(nrows, ncols + 1, width_ratios=[panel[0]] * ncols + [key_w])
    axes = np.array([[fig.add_subplot(gs[r, c]) for c in range(ncols)] for r in range(nrows)])
    kax = fig.add_subplot(gs[:, ncols])
    kax.axis("off")
    # 14 pt clear of the panels' last tick label
    kax.annotate("\n".join(["methods"] + lines), (0.0, 1.0), xycoords="axes fraction",
                 xytext=(14, 0), textcoords="offset points", ha="left", va="top",
                 fontsize=7.5, linespacing=1.35)
    return fig, axes


#: panels per row at most: a figure grows downwards beyond, so its width (and the size its
#: text is shown at when fitted to a page or screen) stays bounded at any panel count
MAX_COLS = 3
#: the smallest panel drawn, inches (width, height); fonts are fixed in points
MIN_PANEL = (3.0, 2.2)


def _grid(n, max_cols=MAX_COLS):
    """(rows, columns) for ``n`` panels: at most ``max_cols`` columns, rows balanced
    (4 panels: 2 x 2, not 3 + 1)."""
    n = max(1, n)
    ncols = math.ceil(n / math.ceil(n / max_cols))
    return math.ceil(n / ncols), ncols


def _share_limits(axes, values, axis="x", log=False, pad=0.05):
    """One range over ``axes`` for ``axis``: the extent of ``values`` (arrays of every value
    any of the panels shows) with ``pad`` of it either side (a factor on a log axis), so that
    equal gaps look equal in every panel of a figure."""
    v = np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in values] or [[]])
    v = v[np.isfinite(v) & (v > 0)] if log else v[np.isfinite(v)]
    if not axes or not v.size:
        return
    lo, hi = float(v.min()), float(v.max())
    if log:
        span = (hi / lo) ** pad if hi > lo else 2.0
        lo, hi = lo / span, hi * span
    else:
        span = (hi - lo) * pad or max(abs(hi) * pad, 0.01)
        lo, hi = lo - span, hi + span
    for ax in axes:
        (ax.set_xlim if axis == "x" else ax.set_ylim)(lo, hi)


def _colors(labels):
    labels = list(labels)
    n = len(labels)
    if n <= 10:
        cols = colormaps["tab10"].colors[:n]
    elif n <= 20:
        cols = colormaps["tab20"].colors[:n]
    else:
        cols = [colormaps["turbo"](i / max(n - 1, 1)) for i in range(n)]
    return dict(zip(labels, cols))


def _synthetic_note(df):
    if "synthetic" in df.columns and df["synthetic"].fillna(False).astype(bool).any():
        return " [synthetic data]"
    return ""


def _fmt(v):
    if isinstance(v, float):
        if np.isnan(v):
            return "n/a"
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.4g}"
    return str(v)


def _group_keys(df, by):
    """Sorted distinct value tuples of the columns ``by`` ([()] when ``by`` is empty)."""
    if not by:
        return [()]
    keys = df[list(by)].drop_duplicates().itertuples(index=False, name=None)
    return sorted(keys, key=lambda t: [natural_key(v) for v in t])


def _hide_unused(axes, used):
    for ax in axes.ravel()[used:]:
        ax.set_visible(False)


def _display_labels(labels, max_len=MAX_LABEL, prefix="M"):
    """({label: text shown}, key lines): the labels themselves when every one fits in
    ``max_len`` characters, else codes M1, M2, ... (natural order of the labels) and the key
    "M1: <full label>" to print beside the figure, so long labels never overlap or clip."""
    labels = sorted(dict.fromkeys(map(str, labels)), key=natural_key)
    if not labels or max(map(len, labels)) <= max_len:
        return {lab: lab for lab in labels}, []
    codes = {lab: f"{prefix}{i}" for i, lab in enumerate(labels, 1)}
    return codes, [f"{codes[lab]}: {lab}" for lab in labels]


def _wrap(text, width=64):
    """Wrap a long label (method strings have few spaces) with a hanging indent."""
    return "\n      ".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text


def _method_names(df):
    """{method: label}: the short labels (only varying parameters) when they stay unique."""
    short = _short_method_labels(df)
    return {m: short.get(m, str(m)) for m in df["method"].unique()}


def _footnote(fig, text, width=None):
    if text:
        width = width or max(60, int(fig.get_figwidth() * 13))
        fig.supxlabel("\n".join(textwrap.wrap(text, width)), fontsize=8, ha="left", x=0.01)


def save_figure(fig, outbase):
    """Write ``<outbase>.png`` (150 dpi) and ``<outbase>.svg`` deterministically
    (no timestamps, fixed SVG id salt); returns the two paths."""
    outbase = Path(outbase)
    outbase.parent.mkdir(parents=True, exist_ok=True)
    png, svg = outbase.with_suffix(".png"), outbase.with_suffix(".svg")
    with matplotlib.rc_context({"svg.hashsalt": "milbench"}):
        fig.savefig(png, dpi=150, bbox_inches="tight", metadata={"Software": None})
        fig.savefig(svg, bbox_inches="tight", metadata={"Date": None, "Creator": None})
    return [png, svg]


# ----------------------------------------------------------------------------- CD diagram
def cd_diagram(avg_ranks, cd, *, cliques=None, control=None, title=None, ax=None,
               test_label="Nemenyi", note="", key=()):
    """Critical-difference diagram (Demšar 2006, Figs. 1-2).

    ``avg_ranks``: Series method -> average rank (1 = best).  The rank axis runs from 1
    (left) to k; each method is connected to its label (better half on the left).
    Without ``control``: thick bars join groups of methods whose ranks differ by at most
    ``cd`` (Nemenyi; ``cliques`` overrides the computed groups).  With ``control``: the
    interval control rank +/- cd is shaded (Bonferroni-Dunn) and methods outside it are
    significantly different from the control.  ``note`` (what the test cannot say,
    :func:`milbench.report.stats.friedman_note`) and ``key`` (code -> full method label lines)
    are printed under the diagram.
    """
    R = pd.Series(avg_ranks, dtype=float).sort_values(kind="mergesort")
    k = R.size
    names = [str(m) for m in R.index]
    half = math.ceil(k / 2)
    lo, hi = 1, max(k, 2)
    step = 0.7
    # physical layout (inches): labels | gap | rank axis | gap | labels
    axis_w = max(4.0, 0.55 * (hi - lo))
    label_w = 0.07 * (max(len(n) for n in names) + 7) + 0.1
    gap = 0.3
    u = (hi - lo) / axis_w                        # rank units per inch
    width = axis_w + 2 * (gap + label_w) + 0.3
    below = []
    if note:
        below += textwrap.wrap("Note: " + note, int(width * 14))
    for line in key:
        below += textwrap.wrap(line, int(width * 14), subsequent_indent="      ",
                               break_on_hyphens=False)
    if ax is None:
        n_title = 0 if not title else title.count("\n") + 1
        foot = 0.16 * len(below) + (0.1 if below else 0.0)
        height = 1.3 + 0.33 * half + 0.25 * n_title + foot
        fig = Figure(figsize=(width, height))
        ax = fig.add_axes((0.0, (0.02 + foot) / height, 1.0,
                           1.0 - (0.14 + foot + 0.25 * n_title) / height))
        if below:
            fig.text(0.02, (0.02 + foot - 0.05) / height, "\n".join(below), ha="left",
                     va="top", fontsize=8, linespacing=1.25)
    else:
        fig = ax.figure
    ax.set_xlim(lo - (gap + label_w + 0.15) * u, hi + (gap + label_w + 0.15) * u)
    ax.set_ylim(-(half + 1.2) * step, 1.6)
    ax.axis("off")
    # rank axis
    ax.plot([lo, hi], [0, 0], color="black", lw=1.2, zorder=3)
    for r in range(lo, hi + 1):
        ax.plot([r, r], [0, 0.12], color="black", lw=1, zorder=3)
        ax.text(r, 0.2, str(r), ha="center", va="bottom", fontsize=9)
    for r in np.arange(lo + 0.5, hi, 1.0):
        ax.plot([r, r], [0, 0.07], color="black", lw=0.7, zorder=3)
    # critical difference bar
    if cd is not None and np.isfinite(cd):
        end = min(lo + cd, hi)                   # a CD beyond the axis ends in an arrow
        ax.plot([lo, end], [1.05, 1.05], color="black", lw=1.5)
        for xx in (lo, end) if end == lo + cd else (lo,):
            ax.plot([xx, xx], [0.97, 1.13], color="black", lw=1)
        if end < lo + cd:
            ax.plot([end], [1.05], marker=">", color="black", ms=6)
        ax.text((lo + end) / 2, 1.2, f"CD = {cd:.3f} ({test_label})"
                + (" > the whole rank axis" if end < lo + cd else ""), ha="center",
                va="bottom", fontsize=9)
    left_x, right_x = lo - gap * u, hi + gap * u
    for i, (m, r) in enumerate(zip(names, R.to_numpy())):
        if i < half:
            y = -(i + 1) * step
            xs, ha, xt = [r, r, left_x], "right", left_x - 0.05 * u
        else:
            y = -(k - i) * step
            xs, ha, xt = [r, r, right_x], "left", right_x + 0.05 * u
        bold = control is not None and str(control) == m
        ax.plot(xs, [0, y, y], color="0.25", lw=1.0)
        ax.text(xt, y, f"{m} ({r:.2f})", ha=ha, va="center", fontsize=9,
                fontweight="bold" if bold else "normal")
    if control is not None and str(control) in names and cd is not None:
        rc = float(R[R.index.map(str) == str(control)].iloc[0])
        a, b = max(rc - cd, lo), min(rc + cd, hi)
        ax.fill_between([a, b], -0.22, -0.08, color="tab:orange", alpha=0.45, lw=0, zorder=2)
        ax.text((lo + hi) / 2, -(half + 0.9) * step,
                f"orange band: average rank within CD of the control {control} "
                "(not significantly different)", ha="center", va="center", fontsize=8,
                color="tab:orange")
    else:
        groups = cliques if cliques is not None else nemenyi_cliques(R, cd)
        for j, grp in enumerate(groups):
            rr = R[[g for g in R.index if str(g) in set(map(str, grp))]]
            y = -0.18 - 0.16 * j
            ax.plot([rr.min() - 0.05, rr.max() + 0.05], [y, y], color="black", lw=4,
                    solid_capstyle="round", zorder=4)
    if title:
        ax.set_title(title, fontsize=11)
    return fig


# ----------------------------------------------------------------------------- per-fold scores
def _blocks(df):
    """The columns that match one fold result of a method with another's (same split)."""
    return [c for c in ("train_ratio", "repeat", "fold") if c in df.columns and df[c].notna().any()]


def paired_vs_best(wide, higher_is_better=True, alpha=0.05):
    """Paired t-tests (:func:`milbench.report.stats.paired_t` over the matched rows of
    ``wide``: blocks x methods) of the method with the best mean against every other, Holm
    (1979) adjusted over that family.  Returns (best, DataFrame method -> n_pairs, mean_diff
    (best - other), p, p_adj, worse) where ``worse`` = significantly worse than the best."""
    means = wide.mean()
    best = means.idxmax() if higher_is_better else means.idxmin()
    rows = {m: paired_t(wide[best], wide[m]) for m in wide.columns if m != best}
    tab = pd.DataFrame({m: {"n_pairs": r["n_pairs"], "mean_diff": r["mean_diff"], "p": r["p"]}
                        for m, r in rows.items()}).T
    if tab.empty:
        return best, tab.assign(p_adj=[], worse=[])
    tab["p_adj"] = holm(tab["p"].to_numpy(float))
    better_sign = 1 if higher_is_better else -1
    tab["worse"] = (tab["p_adj"] <= alpha) & (better_sign * tab["mean_diff"].astype(float) > 0)
    return best, tab


def plot_scores(scores, metrics=("accuracy", "auroc"), by="dataset", alpha=0.05, title=None,
                seed=0):
    """Which method is better, per data set: one row of panels per data set, one panel per
    metric; each method's per-fold scores (one value per repeat x fold, per-seed rows averaged
    first) as a horizontal box (quartiles, whiskers 1.5 IQR) with the folds as dots over it and
    the mean as a diamond, methods sorted by mean with the best on top (bold).  A ``*`` marks a
    method significantly worse than the best: paired t-test over matched folds (cvfs-mil
    Table 1), Holm-adjusted over the comparisons with the best of that panel (Holm 1979;
    Demšar 2006 §3.1 on the caveats of fold-level tests).  Long labels become codes M1, M2...
    with a key beside the panels.  Every panel of a metric has the same x range; more
    metrics than :data:`MAX_COLS` wrap onto further rows of the data set."""
    metrics = [m for m in (metrics or ()) if _has(scores, m)]
    title = title or f"Scores per fold{_synthetic_note(scores)}"
    if not metrics:
        return _message_figure(title, "No metric with values in the scores.")
    df = scores.copy()
    names = _method_names(df)
    df["_m"] = df["method"].map(names)
    shown, key = _display_labels(df["_m"].unique())
    colors = _colors(sorted(df["_m"].unique(), key=natural_key))
    # the ratio protocol: one row per data set and training ratio (scores of different
    # ratios are not replicates of one another)
    rows_by = [by] + (["train_ratio"] if _has(df, "train_ratio")
                      and df["train_ratio"].nunique() > 1 else [])
    blocks = [b for b in _blocks(df) if b not in rows_by]
    keys = _group_keys(df, rows_by)
    n_max = int(df.groupby(rows_by)["_m"].nunique().max())
    longest = max(len(v) for v in shown.values())
    # each data set's metrics wrap onto rows of at most MAX_COLS panels
    per_key, ncols = _grid(len(metrics))
    panel = (max(MIN_PANEL[0], 3.2 + 0.065 * longest), max(MIN_PANEL[1], 1.3 + 0.3 * n_max))
    # the title and the footnote (up to ~430 characters, wrapped as _footnote does)
    foot = math.ceil(430 / max(60, int(panel[0] * ncols * 13)))
    fig, axes = _figure(len(keys) * per_key, ncols, panel=panel, key=key,
                        extra_h=0.45 + 0.14 * foot)
    _hide_unused(axes, 0)                             # shown as they are drawn
    rng = np.random.default_rng(seed)
    tested = untested = 0
    n_pairs = set()
    drawn = {m: ([], []) for m in metrics}              # metric -> (axes, values shown)
    for row, key_v in enumerate(keys):
        rowdf = df
        for b, v in zip(rows_by, key_v):
            rowdf = rowdf[rowdf[b] == v]
        head = ", ".join([str(key_v[0])] + [f"{_label(b).lower()} {_fmt(v)}"
                                            for b, v in zip(rows_by[1:], key_v[1:])])
        for j, metric in enumerate(metrics):
            ax = axes[row * per_key + j // ncols, j % ncols]
            ax.set_visible(True)
            drawn[metric][0].append(ax)
            sub = rowdf[rowdf[metric].notna()]
            ax.set_title(head, fontsize=10)
            if sub.empty:
                ax.text(0.5, 0.5, f"no {_label(metric)} values", ha="center", va="center",
                        transform=ax.transAxes, fontsize=8)
                ax.set_yticks([])
                continue
            hib = not metric.endswith("_seconds")
            # one value per method and matched fold: per-seed rows (and any other replicate
            # of the same split) averaged first
            wide = (sub.groupby(["_m"] + blocks, dropna=False)[metric].mean().unstack("_m")
                    if blocks else sub.groupby("_m")[metric].mean().to_frame().T)
            order = list(wide.mean().sort_values(ascending=not hib, kind="mergesort").index)
            worse = set()
            if len(order) >= 2 and len(wide.dropna(how="any")) >= 2:
                best, tab = paired_vs_best(wide[order], hib, alpha)
                worse = set(tab.index[tab["worse"].astype(bool)])
                tested += 1
                n_pairs.update(tab["n_pairs"].astype(int))
            elif len(order) >= 2:
                untested += 1
            ys = np.arange(len(order))
            data = [wide[m].dropna().to_numpy(float) for m in order]
            drawn[metric][1].extend(data)
            bp = ax.boxplot(data, positions=ys, orientation="horizontal", widths=0.6,
                            patch_artist=True, showfliers=False,
                            medianprops={"color": "black", "lw": 1.2})
            for patch, m in zip(bp["boxes"], order):
                patch.set_facecolor(colors[m])
                patch.set_alpha(0.35)
            for y, m, vals in zip(ys, order, data):
                ax.scatter(vals, y + rng.uniform(-0.17, 0.17, vals.size), s=10,
                           color=colors[m], edgecolors="black", linewidths=0.3, zorder=3)
                ax.plot([vals.mean()], [y], marker="D", ms=4.5, mfc="white", mec="black",
                        zorder=4, ls="none")
            ax.set_yticks(ys, [shown[m] + (" *" if m in worse else "") for m in order],
                          fontsize=8)
            ax.get_yticklabels()[0].set_fontweight("bold")
            ax.set_ylim(len(order) - 0.5, -0.5)               # best on top
            ax.set_xlabel(_label(metric), fontsize=9)
            ax.grid(True, axis="x", alpha=0.3)
    for axs, values in drawn.values():                 # one x range per metric
        _share_limits(axs, values)
    unit = " x ".join(blocks) or "run"
    note = (f"Box: quartiles over folds ({unit}; per-seed rows averaged), whiskers 1.5 "
            "IQR, dots: folds, diamond: mean; sorted by mean, best on top in bold.")
    if tested:
        note += (f" *: worse than the best, Holm-adjusted paired t-test vs the best over "
                 f"matched folds ({'-'.join(map(str, sorted({min(n_pairs), max(n_pairs)})))} "
                 f"pairs), alpha {alpha:g} (fold-level tests are optimistic: folds share "
                 "training bags).")
    if untested:
        note += " No test where fewer than 2 folds are matched."
    _footnote(fig, note)
    fig.suptitle(title, fontsize=12)
    return fig


# ----------------------------------------------------------------------------- lines
def _apply_filter(df, flt):
    for col, val in (flt or {}).items():
        if col not in df.columns:
            raise KeyError(f"figure filter column {col!r} not in scores")
        vals = list(val) if isinstance(val, (list, tuple, set)) else [val]
        df = df[df[col].isin(vals)]
    return df


def _varying_params_label(df, name_col, params_col, skip=()):
    """name(p=v, ...) with only the parameters that vary between the runs of that name
    (leaving out the keys in ``skip``)."""
    if params_col not in df.columns:
        return df[name_col].astype(str)
    parsed = df[params_col].fillna("{}").map(lambda s: json.loads(s) if isinstance(s, str)
                                             else dict(s))
    labels = pd.Series(df[name_col].astype(str).to_numpy(), index=df.index)
    for name, idx in df.groupby(name_col, sort=False).groups.items():
        dicts = parsed.loc[idx]
        keys = sorted({k for d in dicts for k in d}, key=str)
        vary = [k for k in keys if k not in skip and len({json.dumps(d.get(k), sort_keys=True)
                                                          for d in dicts}) > 1]
        if vary:
            labels.loc[idx] = [f"{name}(" + ", ".join(f"{k}={_fmt(d.get(k))}" for k in vary)
                               + ")" for d in dicts]
    return labels


def _short_method_labels(df):
    """{method: label} with the selector and classifier showing only their varying parameters
    (no tune grids), the selector left out when it is "none" throughout; the full method
    strings are kept if the short labels would collide."""
    if not {"method", "selector", "classifier"} <= set(df.columns):
        return {}
    clf = _varying_params_label(df, "classifier", "classifier_params")
    no_selector = (df["selector"] == "none").all()
    if no_selector:
        short = clf
    else:
        short = _varying_params_label(df, "selector", "selector_params") + " + " + clf
    if {"selector_params", "classifier_params"} <= set(df.columns):  # a config's `label:` wins
        auto = [method_label({"name": s, **json.loads(sp)}, {"name": c, **json.loads(cp)})
                for s, sp, c, cp in zip(df["selector"], df["selector_params"],
                                        df["classifier"], df["classifier_params"])]
        # spaces aside, as hand-made tables (milbench.testing) write "none+milr"
        named = (df["method"].str.replace(" ", "").to_numpy()
                 != np.array([a.replace(" ", "") for a in auto], dtype=object))
        short = short.where(~named, df["method"].str.removeprefix("none + ") if no_selector
                            else df["method"])
    labels = dict(zip(df["method"], short))
    return labels if len(set(labels.values())) == len(labels) else {}


#: selector parameters that set the number of kept features / dimensions (the x axis of
#: vs-features, so they do not split its lines)
SIZE_PARAMS = ("n_features", "dims", "percent", "m", "n_components")


def _series_column(df, hue, x=None, by=()):
    """Series labels: a column's values, or for the default "selector+classifier" the
    selector and classifier with their parameters that vary, except the selector's size
    parameter (it becomes the x axis instead of splitting the lines).  Two methods never
    share a series point: when two runs of different methods would fall on the same
    (panel, series, x), every series is its method instead."""
    if hue in (None, "selector+classifier"):
        if {"selector", "classifier"} <= set(df.columns):
            lab = (_varying_params_label(df, "selector", "selector_params", skip=SIZE_PARAMS)
                   + " + " + _varying_params_label(df, "classifier", "classifier_params"))
            if "method" not in df.columns or x is None:
                return lab
            cols = [c for c in by if c in df.columns] + [x]
            merged = df.assign(_s=lab).groupby(cols + ["_s"], dropna=False)["method"].nunique()
            if (merged <= 1).all():
                return lab
            return df["method"].map(_method_names(df))
        hue = "method"
    if hue == "method":
        return df["method"].map(_method_names(df))
    return df[hue].astype(str)


def _legend(fig, handles, labels, title=None):
    """Figure legend below the panels, in as many columns as the label length allows."""
    if not labels:
        return
    labels = [_wrap(str(lab), 48) for lab in labels]
    longest = max(len(line) for lab in labels for line in lab.split("\n"))
    width_chars = fig.get_figwidth() * 11
    ncol = int(max(1, min(len(labels), width_chars // (longest + 6))))
    fig.legend(handles, labels, loc="outside lower center", ncols=ncol, fontsize=8,
               title=title, title_fontsize=8, frameon=False)


def _line_panels(df, metric, x, hue, by, title, xlabel=None, logx=False):
    if x not in df.columns:
        return _message_figure(title, f"No column {x!r} in the scores.")
    df = df[df[x].notna() & df[metric].notna()].copy()
    if df.empty:
        return _message_figure(title, f"No runs with a value of {x!r} and {metric!r}.")
    by = [b for b in (by or []) if b in df.columns]
    df["_series"] = _series_column(df, hue, x, by)
    keys = _group_keys(df, by)
    nrows, ncols = _grid(len(keys))
    series = sorted(df["_series"].unique(), key=natural_key)
    colors = _colors(series)
    fig, axes = _figure(nrows, ncols)
    drawn = set()                                       # "line" and/or "point"
    shown_y = []                                        # every y value drawn, for one y range
    for ax, key in zip(axes.ravel(), keys):
        sub = df
        if by:
            for b, v in zip(by, key):
                sub = sub[sub[b] == v]
            ax.set_title(", ".join(_fmt(v) for v in key), fontsize=10)
        aggs = {s: sub[sub["_series"] == s].groupby(x, sort=True)[metric].agg(["mean", "std"])
                for s in series}
        aggs = {s: a for s, a in aggs.items() if len(a)}
        # single points at the same x are spread sideways (by 1.5 % of the x range each)
        singles = [(s, float(a.index[0])) for s, a in aggs.items() if len(a) == 1]
        xs_all = sub[x].astype(float)
        step = 0.015 * (xs_all.max() - xs_all.min() or abs(xs_all.max()) or 1.0)
        shift = {}
        for xval in {v for _, v in singles}:
            same = [s for s, v in singles if v == xval]
            if len(same) > 1:
                shift.update({s: (j - (len(same) - 1) / 2) * step for j, s in enumerate(same)})
                drawn.add("dodged")
        for s, agg in aggs.items():
            xv = agg.index.to_numpy(dtype=float) + shift.get(s, 0.0)
            mu, sd = agg["mean"].to_numpy(float), agg["std"].fillna(0).to_numpy(float)
            shown_y += [mu - sd, mu + sd]
            if xv.size > 1:                             # a line with its ±1 std band
                ax.plot(xv, mu, marker="o", ms=3.5, lw=1.5, color=colors[s], label=s)
                ax.fill_between(xv, mu - sd, mu + sd, color=colors[s], alpha=0.18, lw=0)
                drawn.add("line")
            else:                                       # one setting: a point, ±1 std bar
                ax.errorbar(xv, mu, yerr=sd, fmt="o", ms=5, color=colors[s], capsize=3,
                            lw=1.2, label=s)
                drawn.add("point")
        ax.set_xlabel(xlabel or _label(x))
        ax.set_ylabel(_label(metric))
        if logx:
            ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
    _hide_unused(axes, len(keys))
    _share_limits(list(axes.ravel()[: len(keys)]), shown_y, axis="y")
    h_all = {}
    for ax in axes.ravel()[: len(keys)]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            h_all.setdefault(lab, h)
    shown = [s for s in series if s in h_all]
    what = {frozenset({"line"}): "lines: mean over folds; bands: ±1 std",
            frozenset({"point"}): "points: mean over folds; error bars: ±1 std "
                                  "(one setting per series)",
            frozenset({"line", "point"}): "lines / points: mean over folds; bands / error "
                                          "bars: ±1 std"}[frozenset(drawn - {"dodged"})]
    if "dodged" in drawn:
        what += "; points at the same x spread sideways"
    _legend(fig, [h_all[s] for s in shown], shown, title=what)
    fig.suptitle(title, fontsize=12)
    return fig


def plot_vs_features(scores, metric="accuracy", x="n_features", hue=None, by=("dataset",),
                     title=None):
    """Metric against the number of selected features: one line per series (default
    selector+classifier, i.e. the method without its size parameter), mean over
    repeats/folds with a band of ±1 std; one panel per data set."""
    title = title or f"{_label(metric)} vs {_label(x).lower()}{_synthetic_note(scores)}"
    if x == "n_features" and "method" in scores:
        # one point per configured method: a selector whose size varies by fold (HyDR-MI's GA)
        # sits at its mean size instead of one point per fold joined like a size sweep
        scores = scores.assign(n_features=scores.groupby(["dataset", "method"])["n_features"]
                               .transform("mean"))
    return _line_panels(scores, metric, x, hue, list(by or []), title)


def plot_vs_ratio(scores, metric="accuracy", x="train_ratio", hue="method", by=("dataset",),
                  title=None):
    """Metric against the training ratio (milsd Fig. 1, miordm Fig. 4): one line per
    method, mean ± std over the repeated random splits; one panel per data set."""
    title = title or f"{_label(metric)} vs training ratio{_synthetic_note(scores)}"
    return _line_panels(scores, metric, x, hue, list(by or []), title)


# ----------------------------------------------------------------------------- heat map
def plot_heatmap(scores, x, y, metric="accuracy", by=None, title=None, fmt="{:.3f}"):
    """Mean metric over a grid of two parameters (miordm Fig. 5: lambda x theta), one
    annotated panel per data set (and per selector/classifier name when several remain
    after filtering).  Empty cells are marked 'n/a'.  A grid with a single row or column
    (1 x n) is no heat map: it is drawn as mean ± std points over the varying parameter."""
    df = scores
    for col in (x, y, metric):
        if col not in df.columns:
            raise KeyError(f"heatmap: column {col!r} not in scores")
    if by is None:
        by = [c for c in ("dataset", "selector", "classifier")
              if c in df.columns and (c == "dataset" or df[c].nunique() > 1)]
    keys = _group_keys(df, by)
    xs = sorted(df[x].dropna().unique())
    ys = sorted(df[y].dropna().unique())
    if min(len(xs), len(ys)) <= 1:
        return _grid_points(df, x, y, xs, ys, metric, by, keys, title)
    panel = (max(4.0, 0.55 * len(xs) + 2.2), max(3.2, 0.4 * len(ys) + 1.6))
    ncols = max(1, min(len(keys), 3, int(18 // panel[0])))
    nrows = math.ceil(len(keys) / ncols)
    fig, axes = _figure(nrows, ncols, panel=panel)
    grids, titles = [], []
    for key in keys:
        sub = df
        for b, v in zip(by, key):
            sub = sub[sub[b] == v]
        titles.append(", ".join((f"{b}={_fmt(v)}" if b.startswith(("sel.", "clf.")) else _fmt(v))
                                for b, v in zip(by, key)))
        grids.append(sub.groupby([y, x])[metric].mean().unstack(x)
                     .reindex(index=ys, columns=xs).to_numpy(float))
    allv = np.concatenate([g.ravel() for g in grids])
    allv = allv[~np.isnan(allv)]
    vmin, vmax = (allv.min(), allv.max()) if allv.size else (0.0, 1.0)
    for ax, title_k, vals in zip(axes.ravel(), titles, grids):
        if title_k:
            ax.set_title(title_k, fontsize=10)
        im = ax.imshow(np.ma.masked_invalid(vals), aspect="auto", origin="lower",
                       cmap="viridis", vmin=vmin, vmax=vmax)
        mid = (vmin + vmax) / 2 if np.isfinite(vmin) and np.isfinite(vmax) else 0
        for i in range(vals.shape[0]):
            for j in range(vals.shape[1]):
                v = vals[i, j]
                ax.text(j, i, "n/a" if np.isnan(v) else fmt.format(v), ha="center",
                        va="center", fontsize=7,
                        color="black" if (np.isnan(v) or v > mid) else "white")
        ax.set_xticks(range(len(xs)), [_fmt(v) for v in xs], rotation=45 if len(xs) > 6 else 0,
                      fontsize=8)
        ax.set_yticks(range(len(ys)), [_fmt(v) for v in ys], fontsize=8)
        ax.set_xlabel(_label(x))
        ax.set_ylabel(_label(y))
        fig.colorbar(im, ax=ax, label=_label(metric), shrink=0.9)
    _hide_unused(axes, len(keys))
    fig.suptitle(title or f"{_label(metric)} over {_label(x)} × {_label(y)} (mean over folds)"
                 f"{_synthetic_note(scores)}", fontsize=12)
    return fig


def _grid_points(df, x, y, xs, ys, metric, by, keys, title):
    """A 1 x n (or n x 1) "grid": the metric against the one varying parameter, mean ± std
    over folds as points with error bars, one panel per key (the fixed parameter named in the
    title)."""
    vary, fixed = (x, y) if len(xs) >= len(ys) else (y, x)
    levels = xs if vary == x else ys
    fixed_v = (ys if vary == x else xs)
    nrows, ncols = _grid(len(keys))
    fig, axes = _figure(nrows, ncols, panel=(max(3.5, 0.6 * len(levels) + 2.0), 3.2))
    shown_y = []                                        # every y value drawn, for one y range
    for ax, key in zip(axes.ravel(), keys):
        sub = df
        for b, v in zip(by, key):
            sub = sub[sub[b] == v]
        agg = (sub.groupby(vary)[metric].agg(["mean", "std"]).reindex(levels))
        shown_y += [agg["mean"] - agg["std"].fillna(0), agg["mean"] + agg["std"].fillna(0)]
        pos = np.arange(len(levels))
        ax.errorbar(pos, agg["mean"].to_numpy(float), yerr=agg["std"].fillna(0).to_numpy(float),
                    fmt="o", ms=6, capsize=4, color="tab:blue")
        for p_, v in zip(pos, agg["mean"].to_numpy(float)):
            if np.isnan(v):
                ax.text(p_, 0.5, "n/a", transform=ax.get_xaxis_transform(), ha="center")
        ax.set_xticks(pos, [_fmt(v) for v in levels], fontsize=8)
        ax.set_xlim(-0.6, len(levels) - 0.4)
        ax.set_xlabel(_label(vary))
        ax.set_ylabel(_label(metric))
        ax.set_title(", ".join(_fmt(v) for v in key), fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    _hide_unused(axes, len(keys))
    _share_limits(list(axes.ravel()[: len(keys)]), shown_y, axis="y")
    fixed_txt = (f"{_label(fixed)} = {_fmt(fixed_v[0])}" if len(fixed_v) == 1
                 else f"{_label(fixed)}: no value")
    fig.suptitle((title or f"{_label(metric)} over {_label(vary)}{_synthetic_note(df)}")
                 + f"\n{len(ys)} × {len(xs)} grid ({fixed_txt}): mean ± std over folds, "
                 "not a heat map", fontsize=11)
    return fig


# ----------------------------------------------------------------------------- runtime
def _seconds(df, metric):
    if metric == "total_seconds" and "total_seconds" not in df.columns:
        return df["fit_seconds"] + df["predict_seconds"]
    return df[metric]


def plot_runtime(scores, metric="fit_cpu_seconds", hue="method", by="dataset", title=None,
                 log=None):
    """Mean runtime per method and data set with ±1 std error bars (cvfs Fig. 9,
    midr Table 2, miordm Table 5), methods ordered by their mean runtime over every fold
    and data set, fastest first (ties in natural order of their labels).  Up to 12 methods
    while the figure stays narrow: grouped vertical bars (data sets on the x axis, one colour
    per method, fastest on the left); else one panel per data set (at most :data:`MAX_COLS`
    a row, one x range for all) with a horizontal bar per method, fastest on top.  Log scale
    when the means span more than two decades (or ``log``)."""
    df = scores.copy()
    df["_t"] = _seconds(df, metric)
    df["_series"] = (df["method"].map(_method_names(df)) if hue == "method"
                     else df[hue].astype(str))
    agg = df.groupby([by, "_series"], sort=True)["_t"].agg(["mean", "std"]).fillna(0.0)
    datasets = sorted(df[by].unique(), key=natural_key)
    named = sorted(df["_series"].unique(), key=natural_key)
    mean = df.groupby("_series")["_t"].mean()
    series = sorted(named, key=lambda s: (np.nan_to_num(mean[s], nan=np.inf), named.index(s)))
    pos = agg["mean"][agg["mean"] > 0]
    if log is None:
        log = len(pos) > 0 and pos.max() / pos.min() > 100
    title = ((title or f"{_label(metric)}: mean ± std over folds{_synthetic_note(scores)}")
             + "\nmethods ordered by their mean over every fold and data set, fastest first")
    colors = _colors(named)                             # a method's colour: its name, not rank
    bars_w = 1.1 * len(datasets) * max(1, len(series) / 3)
    if len(series) <= 12 and bars_w <= 16.0:
        width = 0.8 / len(series)
        fig, axes = _figure(1, 1, panel=(max(7.0, bars_w), 4.0))
        ax = axes[0, 0]
        xs = np.arange(len(datasets))
        for i, s in enumerate(series):
            mu = np.array([agg["mean"].get((d, s), np.nan) for d in datasets])
            sd = np.array([agg["std"].get((d, s), np.nan) for d in datasets])
            ax.bar(xs + (i - (len(series) - 1) / 2) * width, mu, width, yerr=sd,
                   color=colors[s], label=s, capsize=2, error_kw={"lw": 0.8})
        # rotate the data set names when they would not fit side by side
        rotate = sum(len(str(d)) + 2 for d in datasets) * 0.075 > 0.9 * fig.get_figwidth()
        ax.set_xticks(xs, [str(d) for d in datasets], rotation=35 if rotate else 0,
                      ha="right" if rotate else "center")
        ax.set_xlabel(_label(by))
        ax.set_ylabel(_label(metric))
        if log:
            ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
        _legend(fig, *ax.get_legend_handles_labels())
    else:
        nrows, ncols = _grid(len(datasets))
        shown, key = _display_labels(series)
        longest = max(len(v) for v in shown.values())
        fig, axes = _figure(nrows, ncols, panel=(max(MIN_PANEL[0], 3.5 + 0.06 * longest),
                                                 max(MIN_PANEL[1], 0.9 + 0.22 * len(series))),
                            key=key)
        ends = []
        for ax, d in zip(axes.ravel(), datasets):
            mu = np.array([agg["mean"].get((d, s), np.nan) for s in series])
            sd = np.array([agg["std"].get((d, s), np.nan) for s in series])
            ends += [mu, mu + sd]
            ax.barh(np.arange(len(series)), mu, xerr=sd, color=[colors[s] for s in series],
                    capsize=2, error_kw={"lw": 0.8})
            ax.set_yticks(np.arange(len(series)), [shown[s] for s in series], fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel(_label(metric))
            ax.set_title(str(d), fontsize=10)
            if log:
                ax.set_xscale("log")
            ax.grid(True, axis="x", alpha=0.3)
        _hide_unused(axes, len(datasets))
        panels = list(axes.ravel()[: len(datasets)])
        if log:
            _share_limits(panels, ends, log=True)
        else:                                           # bars start at zero
            _share_limits(panels, ends + [[0.0]])
            for ax in panels:
                ax.set_xlim(0.0, None)
    fig.suptitle(title, fontsize=12)
    return fig


# ----------------------------------------------------------------------------- coverage
_CLASS_COLORS = {"negative": "tab:blue", "positive": "tab:orange",   # Wu et al. 2014, Fig. 8
                 "none": "tab:gray"}
_VIEW_HATCHES = ("", "//", "..", "xx", "\\\\", "++")


def plot_feature_coverage(table, title=None):
    """Bag-coverage ratio of a selector's top-ranked features (Wu et al. 2014, Fig. 8): one
    horizontal bar per feature, rank 1 on top, blue when the feature's majority class is
    negative and orange when positive (the paper's colours; grey when both classes are
    covered alike), hatched by the view it comes from.  ``table`` is
    :func:`milbench.report.coverage.top_feature_coverage`'s output."""
    views = list(dict.fromkeys(table["view"]))
    hatch = {v: _VIEW_HATCHES[i % len(_VIEW_HATCHES)] for i, v in enumerate(views)}
    fig, axes = _figure(1, 1, panel=(6.5, 1.0 + 0.28 * len(table)))
    ax = axes[0, 0]
    ys = np.arange(len(table))
    ratio = table["coverage_ratio"].fillna(0.0).to_numpy()
    ax.barh(ys, ratio, color=[_CLASS_COLORS[m] for m in table["majority"]],
            hatch=[hatch[v] for v in table["view"]], edgecolor="black", linewidth=0.5)
    labels = [f"{r}. {n} [{v}]" + (" (≥)" if z else "")
              for r, n, v, z in zip(table["rank"], table["name"], table["view"],
                                    table["minority_zero"])]
    ax.set_yticks(ys, labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("bag coverage ratio (majority class rate / minority class rate)")
    ax.grid(True, axis="x", alpha=0.3)
    handles = [Patch(facecolor=c, edgecolor="black",
                     label="both classes alike" if k == "none" else f"majority {k}")
               for k, c in _CLASS_COLORS.items() if k in set(table["majority"])]
    handles += [Patch(facecolor="white", edgecolor="black", hatch=hatch[v], label=f"view {v}")
                for v in views]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(title or "Bag coverage of the top-ranked features", fontsize=11)
    return fig


# ----------------------------------------------------------------------------- driver
def _has(df, col):
    return col in df.columns and df[col].notna().any()


def default_figures(scores, metrics=None):
    """The automatic figure set used when an experiment configures none: the per-fold scores
    of every method (box + folds, paired tests vs the best) over the experiment's ``metrics``
    that have values (default accuracy and AUROC) and runtime bars always; metric vs
    #features when some selector+classifier was run with more than one feature count; vs
    training ratio when several training ratios were run; CD diagrams when there are >= 2
    data sets and >= 2 methods (Friedman needs several data sets; nothing replaces it for
    one)."""
    metrics = [m for m in (metrics or ("accuracy", "auroc")) if _has(scores, m)]
    figs = [{"kind": "scores", "metrics": metrics}] if metrics else []
    figs.append({"kind": "runtime", "metric": "fit_cpu_seconds"})
    keys = [c for c in ("dataset", "selector", "classifier") if c in scores.columns]
    if _has(scores, "n_features") and keys:
        if (scores.groupby(keys)["n_features"].nunique() > 1).any():
            figs += [{"kind": "vs-features", "metric": m} for m in metrics]
    if _has(scores, "train_ratio") and scores["train_ratio"].nunique() > 1:
        figs += [{"kind": "vs-ratio", "metric": m} for m in metrics]
    if scores["dataset"].nunique() >= 2 and scores["method"].nunique() >= 2:
        figs += [{"kind": "cd", "metric": m} for m in metrics]
    return figs


def _message_figure(title, message):
    fig = Figure(figsize=(6, 2.2), layout="constrained")
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=10)
    ax.set_title(title, fontsize=11)
    return fig


def _cd_figure(df, entry, metric, title):
    compare = entry.get("compare", "method")
    blocks = entry.get("blocks") or ["dataset"]
    blocks = [blocks] if isinstance(blocks, str) else list(blocks)
    alpha = float(entry.get("alpha", 0.05))
    control = entry.get("control")
    if control is not None:
        control = resolve_label(control, df, compare)
    test = entry.get("test") or ("bonferroni-dunn" if control is not None else "nemenyi")
    hib = entry.get("higher_is_better", not metric.endswith("_seconds"))
    wide = df.groupby(blocks + [compare], sort=True)[metric].mean().unstack(compare)
    incomplete = wide[wide.isna().any(axis=1)]
    complete = wide.dropna(how="any")
    N, k = complete.shape
    if N < 2 or k < 2:
        return _message_figure(title, f"Critical-difference diagram not drawn: {N} complete "
                               f"block(s) ({', '.join(blocks)}) and {k} method(s); "
                               "need at least 2 of each.")
    fr = friedman(complete.to_numpy(), higher_is_better=hib)
    R = pd.Series(fr["avg_ranks"], index=complete.columns)
    cd = critical_difference(k, N, alpha, test)
    cd_nemenyi = critical_difference(k, N, alpha, "nemenyi")
    n_sig = sum(abs(a - b) > cd_nemenyi for a, b in itertools.combinations(R.to_numpy(), 2))
    caveat = friedman_note(k, N, cd_nemenyi, bool(fr["p_F"] <= alpha), n_sig)
    key = []
    if compare == "method":
        names = _method_names(df)
        shown, key = _display_labels(names[m] for m in R.index)
        R.index = [shown[names[m]] for m in R.index]
        control = shown[names[control]] if control in names else control
    stat = (f"Friedman p = {fr['p']:.3g}, Iman-Davenport p = {fr['p_F']:.3g}, N = {N}"
            + (f"; left out: {len(incomplete)} incomplete block(s)" if len(incomplete) else ""))
    fig = cd_diagram(R, cd, control=control if test == "bonferroni-dunn" else None,
                     title=f"{title}\n{stat}", note=caveat, key=key,
                     test_label="Bonferroni-Dunn" if test == "bonferroni-dunn" else "Nemenyi")
    return fig


def make_figures(scores: pd.DataFrame, figures_cfg=None, outdir="figures",
                 metrics=None, add_scores=False) -> list[Path]:
    """Render the configured figures (or :func:`default_figures` over the experiment's
    ``metrics``) into ``outdir``; ``add_scores`` (the pipeline's figures rule) puts the
    ``scores`` figure first when no entry draws one.  Each figure is written as
    ``<name>.png`` and ``<name>.svg``.  Returns all written paths."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    metrics = list(metrics or ("accuracy", "auroc"))
    entries = list(figures_cfg) if figures_cfg else default_figures(scores, metrics)
    if add_scores and any(_has(scores, m) for m in metrics) and not any(
            KIND_ALIASES.get(e.get("kind"), e.get("kind")) == "scores" for e in entries):
        # every experiment shows its per-fold scores, configured figures or not
        entries.insert(0, {"kind": "scores", "metrics": [m for m in metrics if _has(scores, m)]})
    exp = ""
    if "experiment" in scores.columns and scores["experiment"].nunique() == 1:
        exp = f"{scores['experiment'].iloc[0]}: "
    paths, taken = [], set()
    for entry in entries:
        entry = dict(entry)
        kind = KIND_ALIASES.get(entry.get("kind"), entry.get("kind"))
        if kind not in KINDS:
            raise ValueError(f"figure kind must be one of {KINDS}, got {kind!r}")
        metric = entry.get("metric") or ("fit_cpu_seconds" if kind == "runtime" else metrics[0])
        df = _apply_filter(scores, entry.get("filter"))
        if kind == "scores":
            panels = entry.get("metrics") or ([entry["metric"]] if entry.get("metric") else metrics)
            panels = [panels] if isinstance(panels, str) else list(panels)
        name = str(entry.get("name") or (kind if kind == "scores" and not entry.get("metric")
                                         else f"{kind}_{metric}"))
        base, i = name, 2
        while name in taken:
            name, i = f"{base}_{i}", i + 1
        taken.add(name)
        syn = _synthetic_note(df)
        if df.empty:
            fig = _message_figure(name, "No scores left after the figure's filter.")
        elif kind == "scores":
            fig = plot_scores(df, panels, alpha=float(entry.get("alpha", 0.05)),
                              title=entry.get("title") or f"{exp}scores per fold{syn}")
        elif kind == "cd":
            fig = _cd_figure(df, entry, metric, entry.get("title")
                             or f"{exp}average ranks by {_label(metric)}{syn}")
        elif kind == "vs-features":
            fig = plot_vs_features(df, metric, x=entry.get("x", "n_features"),
                                   hue=entry.get("hue"), title=entry.get("title") or
                                   f"{exp}{_label(metric)} vs number of selected features{syn}")
        elif kind == "vs-ratio":
            fig = plot_vs_ratio(df, metric, x=entry.get("x", "train_ratio"),
                                hue=entry.get("hue", "method"), title=entry.get("title") or
                                f"{exp}{_label(metric)} vs training ratio{syn}")
        elif kind == "heatmap":
            if not entry.get("x") or not entry.get("y"):
                raise ValueError("heatmap figure needs x and y parameter columns")
            facet = entry.get("facet") or []
            facet = [facet] if isinstance(facet, str) else list(facet)
            by = None
            if facet:
                by = [c for c in ("dataset", "selector", "classifier")
                      if c in df.columns and (c == "dataset" or df[c].nunique() > 1)] + facet
            fig = plot_heatmap(df, entry["x"], entry["y"], metric, by=by,
                               title=entry.get("title") or
                               f"{exp}{_label(metric)} over {_label(entry['x'])} × "
                               f"{_label(entry['y'])} (mean over folds){syn}")
        else:
            fig = plot_runtime(df, metric, hue=entry.get("hue", "method"),
                               title=entry.get("title") or
                               f"{exp}{_label(metric)} (mean ± std over folds){syn}")
        paths += save_figure(fig, outdir / name)
        log.info("figure %s written", name)
    return paths
