"""Figures: every kind renders a valid PNG and SVG with the expected series."""
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from milbench.report import plots as P
from milbench.report import stats as S
from milbench.testing import synthetic_scores

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _valid(paths):
    assert len(paths) == 2
    png, svg = paths
    assert png.suffix == ".png" and svg.suffix == ".svg"
    data = png.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 5000
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")


def _texts(fig):
    out = [t.get_text() for ax in fig.axes for t in ax.texts]
    out += [ax.get_title() for ax in fig.axes] + [fig._suptitle.get_text()
                                                    if fig._suptitle else ""]
    return out


@pytest.fixture(scope="module")
def features_scores():
    return synthetic_scores(1, datasets=("musk1", "fox"), n_features=(10, 20, 40, 80),
                            repeats=1, folds=3)


@pytest.fixture(scope="module")
def ratio_scores():
    return synthetic_scores(2, datasets=("tiger", "faculty"),
                            train_ratios=(0.1, 0.2, 0.3, 0.5), repeats=3, folds=1,
                            methods=[("none", "miordm", 0.05), ("none", "citation-knn", 0.0),
                                     ("none", "emdd", -0.02)])


@pytest.fixture(scope="module")
def grid_scores():
    rng = np.random.default_rng(0)
    rows = []
    for d in ("tiger", "sival-cd"):
        for lam in [2.0 ** k for k in range(0, 11, 2)]:
            for th in (0.1, 0.5, 0.9):
                if d == "sival-cd" and lam == 1.0 and th == 0.1:
                    continue                                  # an empty cell
                for f in range(2):
                    rows.append(dict(experiment="miordm", dataset=d, selector="none",
                                     classifier="miordm", method=f"miordm(l={lam},t={th})",
                                     fold=f, repeat=0, synthetic=True,
                                     **{"clf.lambda": lam, "clf.theta": th},
                                     accuracy=0.6 + 0.02 * np.log2(lam) + rng.normal(0, .01)))
    return pd.DataFrame(rows)


def test_vs_features_one_line_and_band_per_series(features_scores, tmp_path):
    fig = P.plot_vs_features(features_scores, "accuracy")
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.lines]
    assert len(axes) == 2                                  # one panel per data set
    for ax in axes:
        assert len(ax.lines) == 4                          # 4 selector+classifier series
        assert len(ax.collections) == 4                    # ±std bands
        assert {ln.get_label() for ln in ax.lines} == {"none + milr", "pca + milr",
                                                       "relieff-mi + milr", "midr + milr"}
        xs = ax.lines[0].get_xdata()
        assert list(xs) == [10, 20, 40, 80]
        assert ax.get_xlabel() == "Number of selected features"
        assert ax.get_ylabel() == "Accuracy"
    # the plotted mean is the mean over folds
    ln = [ln for ln in axes[0].lines if ln.get_label() == "midr + milr"][0]
    sub = features_scores[(features_scores.dataset == "fox")
                          & (features_scores.selector == "midr")]
    assert ln.get_ydata() == pytest.approx(sub.groupby("n_features")["accuracy"].mean().values)
    assert fig.legends and "[synthetic data]" in fig._suptitle.get_text()
    _valid(P.save_figure(fig, tmp_path / "vsf"))


def test_vs_features_series_keep_varying_classifier_params():
    rows = []
    for sel, clf, params in [("pca", "milr", '{"alpha": 3.5, "combine": "softmax"}'),
                             ("pca", "milr", '{"alpha": 3.5, "combine": "noisy-or"}'),
                             ("none", "mi-simple", '{"statistic": "minmax"}')]:
        for nf in (10, 40):
            for fold in range(2):
                rows.append(dict(dataset="musk1", selector=sel, classifier=clf,
                                 classifier_params=params, method=f"{sel}({nf})+{params}",
                                 n_features=nf, fold=fold, accuracy=0.7 + 0.01 * fold))
    fig = P.plot_vs_features(pd.DataFrame(rows))
    labels = sorted(ln.get_label() for ln in fig.axes[0].lines)
    # the selector size is the x axis; only the varying classifier parameter (combine, not
    # alpha) separates the two MILR lines
    assert labels == ["none + mi-simple", "pca + milr(combine=noisy-or)",
                      "pca + milr(combine=softmax)"]


def test_vs_ratio_lines(ratio_scores, tmp_path):
    fig = P.plot_vs_ratio(ratio_scores, "auroc")
    axes = [ax for ax in fig.axes if ax.lines]
    assert len(axes) == 2 and all(len(ax.lines) == 3 for ax in axes)
    assert list(axes[0].lines[0].get_xdata()) == [0.1, 0.2, 0.3, 0.5]
    assert axes[0].get_xlabel() == "Training ratio" and axes[0].get_ylabel() == "AUROC"
    _valid(P.save_figure(fig, tmp_path / "vsr"))


def test_heatmap_annotated_cells(grid_scores, tmp_path):
    fig = P.plot_heatmap(grid_scores, "clf.lambda", "clf.theta", "accuracy")
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 2
    for ax in panels:
        assert len(ax.texts) == 6 * 3                     # one annotation per cell
        assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "4", "16", "64", "256",
                                                                "1024"]
    texts = {ax.get_title(): [t.get_text() for t in ax.texts] for ax in panels}
    assert texts["sival-cd"][0] == "n/a" and "n/a" not in texts["tiger"]
    tiger = grid_scores[(grid_scores.dataset == "tiger") & (grid_scores["clf.lambda"] == 1024)
                        & (grid_scores["clf.theta"] == 0.9)]["accuracy"].mean()
    assert f"{tiger:.3f}" in texts["tiger"]
    _valid(P.save_figure(fig, tmp_path / "hm"))


def test_heatmap_facets(grid_scores):
    g = grid_scores.copy()
    g["clf.mu"] = np.where(g["fold"] == 0, 0.6, 0.8)
    fig = P.plot_heatmap(g[g.dataset == "tiger"], "clf.lambda", "clf.theta",
                         by=["dataset", "clf.mu"])
    titles = [ax.get_title() for ax in fig.axes if ax.images]
    assert titles == ["tiger, clf.mu=0.6", "tiger, clf.mu=0.8"]


def test_runtime_bars(tmp_path):
    from matplotlib.container import BarContainer

    sc = synthetic_scores(3)
    fig = P.plot_runtime(sc)
    ax = fig.axes[0]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(bars) == 4 and all(len(b) == 5 for b in bars)    # 4 methods x 5 data sets
    names = P._method_names(sc)
    mean = sc.groupby("method")["fit_cpu_seconds"].mean().sort_values()
    assert [b.get_label() for b in bars] == [names[m] for m in mean.index]    # fastest left
    assert [b.get_label() for b in bars] != sorted(names.values(), key=S.natural_key)
    means = sc.groupby(["method", "dataset"])["fit_cpu_seconds"].mean()     # CPU by default
    midr = [b for b in bars if b.get_label() == "midr + milr"][0]     # the short label
    assert [p.get_height() for p in midr] == pytest.approx(means["midr+milr"].values)
    assert ax.get_ylabel() == "Training CPU time (s)"
    _valid(P.save_figure(fig, tmp_path / "rt"))
    # many methods: one panel per data set, one horizontal bar per method
    many = synthetic_scores(4, datasets=("musk1", "fox"), repeats=1, folds=2,
                            methods=[("none", f"clf{i}", 0.0) for i in range(14)])
    fig = P.plot_runtime(many)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 2
    labels = [t.get_text() for t in panels[0].get_yticklabels()]
    mean = many.groupby("classifier")["fit_cpu_seconds"].mean().sort_values()
    assert labels == list(mean.index)                  # by mean, fastest on top; "none" left out
    assert labels != sorted(labels, key=S.natural_key)
    assert [t.get_text() for t in panels[1].get_yticklabels()] == labels   # one order
    assert panels[0].get_xlim() == panels[1].get_xlim()                   # one x range
    assert "ordered by their mean over every fold and data set, fastest first" \
        in fig._suptitle.get_text()


def test_cd_diagram_nemenyi_and_bonferroni_dunn(tmp_path):
    R = pd.Series({"a": 1.2, "b": 2.0, "c": 3.1, "d": 3.7})
    fig = P.cd_diagram(R, 1.0, title="t")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    for m in R.index:
        assert any(lab.startswith(f"{m} (") for lab in labels)
    assert "CD = 1.000 (Nemenyi)" in labels
    thick = [ln for ln in ax.lines if ln.get_linewidth() >= 4]
    assert len(thick) == len(S.nemenyi_cliques(R, 1.0)) == 2
    _valid(P.save_figure(fig, tmp_path / "cd"))
    fig = P.cd_diagram(R, 1.5, control="a", test_label="Bonferroni-Dunn")
    ax = fig.axes[0]
    assert not [ln for ln in ax.lines if ln.get_linewidth() >= 4]
    assert len(ax.collections) == 1                   # the control's CD band
    bold = [t for t in ax.texts if t.get_fontweight() == "bold"]
    assert [t.get_text() for t in bold] == ["a (1.20)"]


def test_make_figures_every_kind(features_scores, grid_scores, tmp_path):
    cfg = [{"kind": "cd", "metric": "accuracy"},
           {"kind": "cd", "metric": "auroc", "control": "midr(n_features=40)+milr",
            "filter": {"n_features": 40}, "name": "cd_bd"},
           {"kind": "vs-features", "metric": "auroc"},
           {"kind": "vs-ratio"},
           {"kind": "runtime", "metric": "total_seconds"}]
    paths = P.make_figures(features_scores, cfg, tmp_path)
    assert [p.name for p in paths] == [
        "cd_accuracy.png", "cd_accuracy.svg", "cd_bd.png", "cd_bd.svg",
        "vs-features_auroc.png", "vs-features_auroc.svg", "vs-ratio_accuracy.png",
        "vs-ratio_accuracy.svg", "runtime_total_seconds.png", "runtime_total_seconds.svg"]
    for i in range(0, len(paths), 2):
        _valid(paths[i: i + 2])
    hm = P.make_figures(grid_scores[grid_scores.dataset == "tiger"],
                        [{"kind": "heatmap", "x": "clf.lambda", "y": "clf.theta"}], tmp_path)
    assert [p.name for p in hm] == ["heatmap_accuracy.png", "heatmap_accuracy.svg"]
    _valid(hm)
    # the pipeline adds the per-fold scores figure first when none is configured
    hm = P.make_figures(grid_scores[grid_scores.dataset == "tiger"],
                        [{"kind": "heatmap", "x": "clf.lambda", "y": "clf.theta"}], tmp_path,
                        add_scores=True)
    assert [p.name for p in hm] == ["scores.png", "scores.svg", "heatmap_accuracy.png",
                                    "heatmap_accuracy.svg"]
    # spellings used in config/paper/*.yaml: critical-difference with a control named by
    # its selector, ratio-curve, heatmap facets
    al = P.make_figures(features_scores, [
        {"kind": "critical-difference", "control": "midr", "filter": {"n_features": 40}},
        {"kind": "ratio-curve"}], tmp_path / "alias", metrics=["accuracy"])
    assert [p.name for p in al] == ["cd_accuracy.png", "cd_accuracy.svg",
                                    "vs-ratio_accuracy.png", "vs-ratio_accuracy.svg"]
    with pytest.raises(ValueError, match="needs x and y"):
        P.make_figures(grid_scores, [{"kind": "heatmap"}], tmp_path)
    with pytest.raises(ValueError, match="kind"):
        P.make_figures(grid_scores, [{"kind": "pie"}], tmp_path)


def test_default_figures_rules(features_scores, ratio_scores):
    # one data set: the per-fold scores and the runtime, no CD (Friedman needs data sets)
    one = synthetic_scores(5, datasets=("musk1",), methods=[("none", "milr", 0.0),
                                                             ("pca", "milr", 0.0)])
    assert P.default_figures(one) == [{"kind": "scores", "metrics": ["accuracy", "auroc"]},
                                      {"kind": "runtime", "metric": "fit_cpu_seconds"}]
    # the experiment's metrics, those with values
    assert P.default_figures(one, ["auroc", "balanced_accuracy"])[0] == {
        "kind": "scores", "metrics": ["auroc"]}
    kinds = [(f["kind"], f.get("metric")) for f in P.default_figures(features_scores)]
    assert kinds == [("scores", None), ("runtime", "fit_cpu_seconds"),
                     ("vs-features", "accuracy"), ("vs-features", "auroc"), ("cd", "accuracy"),
                     ("cd", "auroc")]
    kinds = [f["kind"] for f in P.default_figures(ratio_scores)]
    assert kinds == ["scores", "runtime", "vs-ratio", "vs-ratio", "cd", "cd"]


def test_make_figures_defaults_and_determinism(ratio_scores, tmp_path):
    a = P.make_figures(ratio_scores, None, tmp_path / "a")
    assert [p.name for p in a] == [
        "scores.png", "scores.svg",
        "runtime_fit_cpu_seconds.png", "runtime_fit_cpu_seconds.svg", "vs-ratio_accuracy.png",
        "vs-ratio_accuracy.svg", "vs-ratio_auroc.png", "vs-ratio_auroc.svg",
        "cd_accuracy.png", "cd_accuracy.svg", "cd_auroc.png", "cd_auroc.svg"]
    b = P.make_figures(ratio_scores, [{"kind": "cd", "metric": "auroc"}], tmp_path / "b")
    assert a[-2].read_bytes() == b[0].read_bytes()    # byte-identical PNG
    assert a[-1].read_bytes() == b[1].read_bytes()    # and SVG


def test_cd_with_too_few_blocks_draws_explanation(tmp_path):
    sc = synthetic_scores(6, datasets=("musk1",))
    paths = P.make_figures(sc, [{"kind": "cd"}], tmp_path)
    _valid(paths)


def test_cd_labels_drop_tune_grids_and_a_constant_none_selector():
    from milbench.report.plots import _short_method_labels
    df = pd.DataFrame({
        "method": ['none + miordm(tune={"lam": [1, 2]})', "none + emdd",
                   'none + milr(C=1.0)', 'none + milr(C=10.0)'],
        "selector": ["none"] * 4, "selector_params": ["{}"] * 4,
        "classifier": ["miordm", "emdd", "milr", "milr"],
        "classifier_params": ['{"tune": {"lam": [1, 2]}}', "{}", '{"C": 1.0}', '{"C": 10.0}']})
    assert list(_short_method_labels(df).values()) == ["miordm", "emdd", "milr(C=1)",
                                                       "milr(C=10)"]
    # a config's `label:` (the method column no longer the automatic label) is kept
    df.loc[3, "method"] = "none + MILR-10"
    assert list(_short_method_labels(df).values())[2:] == ["milr(C=1)", "MILR-10"]


# ----------------------------------------------------------------------------- layout checks
def _drawn_ticklabels(axis):
    """The tick labels matplotlib draws: those of ticks inside the view interval."""
    lo, hi = sorted(axis.get_view_interval())
    eps = 1e-9 * max(1.0, abs(hi - lo))
    return [lab for locs, labs in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                                   (axis.get_minorticklocs(), axis.get_minorticklabels()))
            for loc, lab in zip(locs, labs) if lo - eps <= loc <= hi + eps]


def _labels_overlap(fig):
    """Pairs of drawn, non-empty texts of ``fig`` (tick labels, titles, axis labels, legend
    and free texts) whose rendered bounding boxes overlap by more than a pixel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()                                    # runs the constrained layout
    renderer = canvas.get_renderer()
    texts = list(fig.texts) + [t for t in (fig._suptitle, fig._supxlabel, fig._supylabel) if t]
    for leg in fig.legends:
        texts += list(leg.get_texts()) + [leg.get_title()]
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        if ax.axison:                                # an axis("off") draws no ticks
            texts += _drawn_ticklabels(ax.xaxis) + _drawn_ticklabels(ax.yaxis)
        texts += list(ax.texts)
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        if ax.get_legend():
            texts += list(ax.get_legend().get_texts())
    texts = [t for t in dict.fromkeys(texts) if t.get_visible() and t.get_text().strip()]
    boxes = [(t, t.get_window_extent(renderer).padded(-1.0)) for t in texts]
    return [(a.get_text(), b.get_text()) for i, (a, ba) in enumerate(boxes)
            for b, bb in boxes[i + 1:] if ba.overlaps(bb)]


def test_labels_overlap_finds_crowded_labels():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.set_xticks(range(12), [f"a rather long label {i}" for i in range(12)])
    assert _labels_overlap(fig)
    ax.set_xticks(range(12), [f"a rather long label {i}" for i in range(12)], rotation=90)
    assert not _labels_overlap(fig)


def _ticklabels(ax, axis="y"):
    return [t.get_text() for t in (ax.get_yticklabels() if axis == "y" else ax.get_xticklabels())]


LONG = [("hydr-mi", 'milr(alpha=3.5, combine=softmax, tune={"C": [0.1, 1.0]}, seed=%d)' % i,
         0.02 * i) for i in range(5)]


@pytest.fixture(scope="module")
def fold_scores():
    return synthetic_scores(7, datasets=("musk1", "fox", "tiger"), repeats=2, folds=5,
                            methods=[("none", "milr", 0.0), ("pca", "milr", 0.004),
                                     ("relieff-mi", "milr", 0.03), ("midr", "milr", 0.06)])


def _oracle_marks(wide, alpha=0.05):
    """Independent: scipy.stats.ttest_rel of the best-mean method against each other one,
    statsmodels' Holm over that family; the methods significantly worse than the best."""
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    best = wide.mean().idxmax()
    others = [m for m in wide.columns if m != best]
    p = [ttest_rel(wide[best], wide[m]).pvalue for m in others]
    reject = multipletests(p, alpha=alpha, method="holm")[0]
    return best, {m for m, r in zip(others, reject) if r and wide[best].mean() > wide[m].mean()}


def test_scores_boxes_sorted_and_paired_marks(fold_scores):
    fig = P.plot_scores(fold_scores, ["accuracy", "auroc"])
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.patches]
    assert len(panels) == 3 * 2                      # data set x metric
    names = P._method_names(fold_scores)
    n_marked = n_unmarked = 0
    for ax, (d, metric) in zip(panels, [(d, m) for d in ("fox", "musk1", "tiger")
                                        for m in ("accuracy", "auroc")]):
        assert ax.get_title() == d and ax.get_xlabel() == P._label(metric)
        assert len(ax.patches) == 4                  # one box per method
        sub = fold_scores[fold_scores.dataset == d]
        wide = sub.pivot_table(index=["repeat", "fold"], columns="method", values=metric)
        wide.columns = [names[m] for m in wide.columns]
        order = list(wide.mean().sort_values(ascending=False).index)
        best, worse = _oracle_marks(wide)
        assert _ticklabels(ax) == [m + (" *" if m in worse else "") for m in order]
        assert order[0] == best and ax.get_yticklabels()[0].get_fontweight() == "bold"
        # the dots are the 10 fold scores of each method
        dots = [c for c in ax.collections if len(c.get_offsets())]
        assert sorted(len(c.get_offsets()) for c in dots) == [10] * 4
        n_marked += len(worse)
        n_unmarked += 3 - len(worse)
    assert n_marked and n_unmarked                   # the test data exercise both outcomes
    assert "Holm-adjusted paired t-test" in fig._supxlabel.get_text()
    assert not _labels_overlap(fig)


def test_scores_average_seeds_and_one_data_set():
    one = synthetic_scores(8, datasets=("musk1",), repeats=1, folds=4)
    seeds = pd.concat([one.assign(seed=0, accuracy=one.accuracy - 0.1),
                       one.assign(seed=1, accuracy=one.accuracy + 0.1)])
    fig = P.plot_scores(seeds, ["accuracy"])
    ax = fig.axes[0]
    dots = [c for c in ax.collections if len(c.get_offsets())]
    assert [len(c.get_offsets()) for c in dots] == [4] * 4   # per fold, not per seed
    best = dots[0].get_offsets()[:, 0]
    assert sorted(best) == pytest.approx(sorted(one[one.method == "midr+milr"].accuracy))
    # a single method or unmatched folds: boxes, but no test and no mark
    fig = P.plot_scores(one[one.method == "none+milr"], ["accuracy"])
    assert _ticklabels(fig.axes[0]) == ["milr"]
    assert "paired t-test" not in fig._supxlabel.get_text()


def test_long_labels_become_codes_without_overlap(tmp_path):
    sc = synthetic_scores(9, datasets=("musk1", "fox"), repeats=1, folds=4, methods=LONG)
    full = sorted(P._method_names(sc).values(), key=S.natural_key)
    assert max(map(len, full)) > P.MAX_LABEL
    fig = P.plot_scores(sc, ["accuracy"])
    assert {t.removesuffix(" *") for t in _ticklabels(fig.axes[0])} == {f"M{i}"
                                                                         for i in range(1, 6)}
    key = " ".join(t.get_text() for ax in fig.axes for t in ax.texts).replace("\n", " ")
    for i, lab in enumerate(full, 1):                # the key lists every full label
        assert f"M{i}: " in key
    assert not _labels_overlap(fig)
    # runtime: grouped bars with a wrapped legend, and one panel per data set (> 12 methods)
    assert not _labels_overlap(P.plot_runtime(sc))
    many = synthetic_scores(10, datasets=("musk1", "fox"), repeats=1, folds=2,
                            methods=[(s, c.replace("seed", "k") + f"-{j}", 0.0)
                                     for j in range(3) for s, c, _ in LONG])
    fig = P.plot_runtime(many)
    assert set(_ticklabels(fig.axes[0])) == {f"M{i}" for i in range(1, 16)}
    assert not _labels_overlap(fig)
    # the CD diagram: codes, key and the note on too few data sets under it
    paths = P.make_figures(sc, [{"kind": "cd"}], tmp_path)
    _valid(paths)
    fig = P._cd_figure(sc, {}, "accuracy", "t")
    texts = " ".join(t.get_text() for t in fig.texts + fig.axes[0].texts).replace("\n", " ")
    assert "M1 (" in texts and "M5: " in texts
    assert S.friedman_note(5, 2, S.critical_difference(5, 2))[:20] in texts
    assert not _labels_overlap(fig)


def test_hydr_settings_are_separate_series():
    rows = []
    for fitness in ("cv", "train"):
        for pct, nf in ((0.3, 50), (0.5, 80)):
            for fold in range(3):
                rows.append(dict(dataset="musk1", selector="hydr-mi", classifier="milr",
                                 selector_params=f'{{"fitness": "{fitness}", "percent": {pct}}}',
                                 classifier_params="{}", method=f"hydr({fitness},{pct})+milr",
                                 n_features=nf + fold, fold=fold, accuracy=0.7 + 0.01 * fold))
    df = pd.DataFrame(rows)
    fig = P.plot_vs_features(df)
    labels = sorted(ln.get_label() for ln in fig.axes[0].lines)
    # the size parameter (percent) is the x axis, fitness separates the series
    assert labels == ["hydr-mi(fitness=cv) + milr", "hydr-mi(fitness=train) + milr"]
    # two settings at the same size are never merged into one point
    same = df.assign(selector_params=df.selector_params.str.replace('"percent": 0.5',
                                                                    '"percent": 0.3'),
                     n_features=50)
    same["selector_params"] = same["selector_params"].str.replace('"fitness"', '"m": 1, "f"')
    same.loc[same.method.str.contains("0.5"), "selector_params"] = \
        same.loc[same.method.str.contains("0.5"), "selector_params"].str.replace('"m": 1',
                                                                                 '"m": 2')
    fig = P.plot_vs_features(same)
    handles = fig.legends[0].get_texts()
    assert len(handles) == 4                         # one series per method


def test_vs_features_single_points_say_so(features_scores):
    one = features_scores[features_scores.n_features == 40]
    fig = P.plot_vs_features(one)
    title = fig.legends[0].get_title().get_text()
    assert "band" not in title and "error bars" in title
    ax = fig.axes[0]
    # the four series all ran at 40 features: spread sideways around 40, and said so
    xs = sorted(float(ln.get_xdata()[0]) for ln in ax.lines if len(ln.get_xdata()) == 1)
    assert len(set(xs)) == 4 and np.mean(xs) == pytest.approx(40.0)
    assert "spread sideways" in title
    assert not [c for c in ax.collections if type(c).__name__ == "FillBetweenPolyCollection"
                or type(c).__name__ == "PolyCollection"]
    assert "lines: mean over folds; bands: ±1 std" == \
        P.plot_vs_features(features_scores).legends[0].get_title().get_text()


def test_heatmap_one_row_is_points(grid_scores):
    g = grid_scores[grid_scores["clf.theta"] == 0.5]
    g = g[g["clf.lambda"].isin([4.0, 16.0])]          # a 1 x 2 grid
    fig = P.plot_heatmap(g, "clf.lambda", "clf.theta")
    assert not [ax for ax in fig.axes if ax.images]
    assert "1 × 2 grid" in fig._suptitle.get_text() and "not a heat map" in \
        fig._suptitle.get_text()
    ax = [ax for ax in fig.axes if ax.get_title() == "tiger"][0]
    assert _ticklabels(ax, "x") == ["4", "16"]
    tiger = g[g.dataset == "tiger"].groupby("clf.lambda")["accuracy"].mean()
    line = [ln for ln in ax.lines if len(ln.get_xdata()) == 2][0]
    assert list(line.get_ydata()) == pytest.approx(tiger.to_numpy())


def test_schema_lists_every_figure_kind():
    import yaml
    from pathlib import Path

    schema = yaml.safe_load((Path(P.__file__).parents[2] / "schemas/config.schema.yaml")
                            .read_text())
    kind = schema["$defs"]["experiment"]["properties"]["figures"]["items"]["properties"]["kind"]
    canonical, aliases = (set(k["enum"]) for k in kind["anyOf"])
    assert canonical == set(P.KINDS) and aliases == set(P.KIND_ALIASES)
    from jsonschema import ValidationError, validate
    validate("ratio-curve", kind)
    with pytest.raises(ValidationError):
        validate("pie", kind)


def test_make_figures_scores_kind_takes_the_experiments_metrics(fold_scores, tmp_path):
    one = fold_scores[fold_scores.dataset == "fox"]
    paths = P.make_figures(one, [{"kind": "scores"}, {"kind": "boxplot", "metric": "auroc"}],
                           tmp_path, metrics=["auroc"], add_scores=True)   # not drawn twice
    assert [p.name for p in paths] == ["scores.png", "scores.svg", "scores_auroc.png",
                                       "scores_auroc.svg"]
    _valid(paths[:2])
    assert paths[0].read_bytes() == paths[2].read_bytes()    # the same figure, deterministic


def test_report_front_page_lists_the_experiments():
    """workflow/report/workflow.rst, rendered as `snakemake --report` does (Jinja with the
    config and the result categories, then reStructuredText), opens on what to look at first,
    then lists every experiment with its description, linking those with results."""
    from pathlib import Path
    from types import SimpleNamespace

    import yaml
    from docutils.core import publish_parts
    from jinja2 import Environment

    root = Path(P.__file__).parents[3]
    cfg = yaml.safe_load((root / "config/config.yaml").read_text())
    text = (root / "workflow/report/workflow.rst").read_text()
    from collections import namedtuple

    cats = {namedtuple("Category", "name")("quickstart"): {}}
    links = "\n\n.. _quickstart: javascript:app.showCategory('quickstart')\n"
    rst = Environment(trim_blocks=True, lstrip_blocks=True).from_string(text + links).render(
        snakemake=SimpleNamespace(config=cfg), categories=cats, files=[])
    html = publish_parts(rst, writer="html",
                         settings_overrides={"halt_level": 2, "report_level": 5})["html_body"]
    assert "system-message" not in html
    assert "showCategory(&#x27;quickstart&#x27;)" in html or "showCategory('quickstart')" in html
    for name, exp in cfg["experiments"].items():
        assert name in html
        assert " ".join(exp["description"].split())[:40] in " ".join(html.split())
    assert "(no results in this report)" in html          # zoo etc. are not in `cats`
    assert html.index("What to look at first") < html.index("quickstart")


def _panel_inches(fig):
    """(width, height) in inches of every visible panel with data, after layout."""
    fig.draw_without_rendering()
    w, h = fig.get_size_inches()
    return [(ax.get_position().width * w, ax.get_position().height * h)
            for ax in fig.axes if ax.get_visible() and ax.axison]


def test_panels_of_a_metric_share_one_range():
    sc = synthetic_scores(11, datasets=("musk1", "fox", "tiger"), repeats=1, folds=5)
    sc.loc[sc.dataset == "fox", ["accuracy", "auroc"]] -= 0.25    # far apart per data set
    fig = P.plot_scores(sc, ["accuracy", "auroc"])
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.patches]
    for metric in ("accuracy", "auroc"):
        axs = [ax for ax in panels if ax.get_xlabel() == P._label(metric)]
        assert len(axs) == 3 and len({ax.get_xlim() for ax in axs}) == 1
        lo, hi = axs[0].get_xlim()
        assert lo < sc[metric].min() and hi > sc[metric].max()   # every fold of every set
        assert hi - lo < 1.3 * (sc[metric].max() - sc[metric].min())   # and no wider
    acc = {ax.get_xlim() for ax in panels if ax.get_xlabel() == "Accuracy"}
    assert acc != {ax.get_xlim() for ax in panels if ax.get_xlabel() == "AUROC"}
    # metric curves: one y range over the data sets' panels
    feats = synthetic_scores(12, datasets=("musk1", "fox"), n_features=(10, 40), repeats=1,
                             folds=3)
    feats.loc[feats.dataset == "fox", "accuracy"] -= 0.25
    fig = P.plot_vs_features(feats, "accuracy")
    axs = [ax for ax in fig.axes if ax.get_visible() and ax.lines]
    assert len(axs) == 2 and axs[0].get_ylim() == axs[1].get_ylim()


def test_scores_text_stays_readable_at_any_panel_count():
    """Fonts are fixed in points and panels wrap onto rows of at most MAX_COLS, so a figure of
    many panels is no wider than three panels and no panel is smaller than MIN_PANEL: shown
    at a page's width, its text is as large as a one-panel figure's."""
    one = synthetic_scores(13, datasets=("musk1",), repeats=1, folds=4,
                           methods=[("none", "milr", 0.0), ("none", "mi-simple", 0.05)])
    many = synthetic_scores(13, datasets=[f"d{i}" for i in range(5)], repeats=1, folds=4,
                            methods=[("none", "milr", 0.0), ("none", "mi-simple", 0.05)])
    for df in (one, many):
        df["balanced_accuracy"] = df["accuracy"]
        df["f1"] = df["auroc"]
    four = ["balanced_accuracy", "f1", "auroc", "accuracy"]
    strip = P.plot_scores(one, four)                 # 1 data set x 4 metrics: 2 x 2, no strip
    sizes = _panel_inches(strip)
    assert len(sizes) == 4
    w, h = strip.get_size_inches()
    assert w / h < 2.5 and w < 2 * 6.0 + 1.0
    small = P.plot_scores(one, ["accuracy"])
    big = P.plot_scores(many, ["accuracy", "auroc"])     # 10 panels
    assert len(_panel_inches(big)) == 10
    fonts = [sorted({t.get_fontsize() for ax in f.axes if ax.get_visible()
                     for t in ax.get_yticklabels() + [ax.title, ax.xaxis.label]})
             for f in (small, strip, big)]
    assert fonts[0] == fonts[1] == fonts[2]
    for fig in (small, strip, big):
        assert fig.get_figwidth() <= P.MAX_COLS * 6.0 + 1.0
        for pw, ph in _panel_inches(fig):            # the plotting area, inches
            assert pw >= 2.5 and ph >= 1.2
    assert big.get_figheight() > 2 * small.get_figheight()    # grows downwards instead
    assert not _labels_overlap(big) and not _labels_overlap(strip)
    # the runtime figure: many data sets wrap into panels the same way
    runtime = P.plot_runtime(many.assign(dataset=many.dataset + "-" + "x" * 30))
    assert runtime.get_figwidth() <= P.MAX_COLS * 6.0 + 1.0
    assert P._grid(4) == (2, 2) and P._grid(10) == (4, 3) and P._grid(1) == (1, 1)
