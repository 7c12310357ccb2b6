"""Statistics: every test against its library oracle (SciPy, scikit-posthocs, statsmodels),
Demšar (2006)'s published critical values and worked example, small hand-computed cases, and
hydr-mi's own Tables 6 and 12-13 recomputed from its Tables 2-11."""
import itertools
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
import scikit_posthocs as sp
from matplotlib.figure import Figure
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from milbench.report import stats as S
from milbench.report.targets import targets
from milbench.testing import synthetic_scores

matplotlib.use("Agg")

# Demšar (2006) Table 5, alpha = 0.05, k = 2..10
NEMENYI_005 = [1.960, 2.344, 2.569, 2.728, 2.850, 2.948, 3.031, 3.102, 3.164]
BONFERRONI_DUNN_005 = [1.960, 2.241, 2.394, 2.498, 2.576, 2.638, 2.690, 2.734, 2.773]
# Demšar §3.2.4: average ranks of C4.5, C4.5+m, C4.5+cf, C4.5+m+cf over N = 14 data sets
DEMSAR_RANKS = pd.Series({"C4.5": 3.143, "C4.5+m": 2.000, "C4.5+cf": 2.893, "C4.5+m+cf": 1.964})


# ----------------------------------------------------------------------------- published
@pytest.mark.parametrize("k", range(2, 11))
def test_critical_values_match_demsar_table5(k):
    assert round(S.critical_value(k, 0.05, "nemenyi"), 3) == NEMENYI_005[k - 2]
    assert round(S.critical_value(k, 0.05, "bonferroni-dunn"), 3) == BONFERRONI_DUNN_005[k - 2]


def test_demsar_worked_example():
    # chi2_F = 9.28, F_F = 3.69 > F(3, 39)_0.05 = 2.85: the four C4.5 variants differ
    r = S.friedman_from_ranks(DEMSAR_RANKS, 14)
    assert r["chi2"] == pytest.approx(9.28, abs=0.01) and r["F"] == pytest.approx(3.69, abs=0.01)
    assert (r["df1"], r["df2"]) == (3, 39)
    assert round(sps.f.ppf(0.95, 3, 39), 2) == 2.85 and r["p_F"] < 0.05
    # Nemenyi CD(0.05) = 2.569 sqrt(20/84) = 1.253 (exact q: 1.25356); Bonferroni-Dunn 2.394
    cdn = S.critical_difference(4, 14, 0.05, "nemenyi")
    cdb = S.critical_difference(4, 14, 0.05, "bonferroni-dunn")
    assert cdn == pytest.approx(1.253, abs=1e-3)
    assert cdb == pytest.approx(2.394 * math.sqrt(20 / 84), abs=1e-3)
    # no pair exceeds the Nemenyi CD (largest difference 3.143 - 1.964 = 1.179): one clique;
    # against the control C4.5 only C4.5+m+cf is beyond the Bonferroni-Dunn CD
    assert S.nemenyi_cliques(DEMSAR_RANKS, cdn) == [["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]]
    post = S.posthoc_vs_control(DEMSAR_RANKS, 14, "C4.5")
    beyond = post.index[post["rank_diff"].abs() > cdb].tolist()
    assert beyond == ["C4.5+m+cf"]
    assert post.loc["C4.5+m+cf", "p"] == pytest.approx(2 * sps.norm.sf(1.179 / math.sqrt(20 / 84)))


# ----------------------------------------------------------------------------- oracles
def _pairs(rng, sizes=(5, 9, 16, 30, 60)):
    """Paired samples with and without ties (rounding) and zero differences."""
    for n in sizes:
        for rep in range(6):
            x = rng.normal(size=n)
            y = x + rng.normal(0.3, 1.0, size=n)
            if rep % 2:
                x, y = np.round(x, 1), np.round(y, 1)
            if rep % 3 == 1:
                y[:2] = x[:2]
            yield x, y


@pytest.mark.parametrize("zero_method", ["wilcox", "zsplit", "pratt"])
def test_wilcoxon_matches_scipy(zero_method):
    rng = np.random.default_rng(42)
    flips = sps.PermutationMethod(n_resamples=np.inf)
    n_cmp = 0
    for x, y in _pairs(rng):
        d = x - y
        ranked = d[d != 0] if zero_method == "wilcox" else d
        ties_or_zeros = np.unique(np.abs(d)).size < d.size
        for method in ("auto", "asymptotic", "exact"):
            how = method
            if method == "auto":    # auto counts the ranked differences (scipy: all pairs)
                how = ("exact" if d.size <= 50 and (ranked.size <= 13 or not ties_or_zeros)
                       else "asymptotic")
            if how == "exact" and ties_or_zeros:
                if d.size > 9:
                    continue        # scipy's sign-flip enumeration takes seconds there
                how = flips
            for cc in (False, True):
                ours = S.wilcoxon_signed_rank(x, y, zero_method, method, correction=cc)
                ref = sps.wilcoxon(x, y, zero_method=zero_method, method=how, correction=cc)
                assert ours["p"] == pytest.approx(ref.pvalue, abs=1e-12)
                assert ours["T"] == ref.statistic
                n_cmp += 1
        # R+ (what alternative="greater" reports), R- and z of the normal approximation
        ours = S.wilcoxon_signed_rank(x, y, zero_method, "exact" if d.size <= 9 else "auto")
        rp = sps.wilcoxon(x, y, zero_method=zero_method, alternative="greater",
                          method="asymptotic").statistic
        asym = sps.wilcoxon(x, y, zero_method=zero_method, method="asymptotic")
        assert (ours["r_plus"], ours["z"]) == (rp, pytest.approx(asym.zstatistic, abs=1e-12))
        assert ours["T"] == min(ours["r_plus"], ours["r_minus"])
    assert n_cmp > 100


def test_wilcoxon_auto_small_ties_is_scipys_permutation_test():
    rng = np.random.default_rng(5)
    # scipy switches at 13 pairs, zeros included (its own sign flips take seconds at 13)
    for n, zms in ((6, ("wilcox", "zsplit", "pratt")), (13, ("wilcox",)), (14, ("pratt",))):
        x, y = np.round(rng.normal(size=n), 1), np.round(rng.normal(0.4, size=n), 1)
        y[0] = x[0]
        for zm in zms:
            ours = S.wilcoxon_signed_rank(x, y, zm)
            assert ours["p_method"] == ("exact" if n <= 13 else "asymptotic")
            assert ours["p"] == pytest.approx(sps.wilcoxon(x, y, zm).pvalue, abs=1e-12)


def test_wilcoxon_auto_counts_ranked_differences_and_needs_two():
    # 15 pairs, 2 zero differences dropped (wilcox): 13 ranked differences without ties get
    # the exact p of the 13; scipy.stats.wilcoxon counts the zeros and goes asymptotic
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=15), rng.normal(0.5, size=15)
    y[:2] = x[:2]
    ours = S.wilcoxon_signed_rank(x, y)
    assert ours["p_method"] == "exact" and ours["n_nonzero"] == 13
    assert ours["p"] == pytest.approx(sps.wilcoxon(x[2:], y[2:], method="exact").pvalue)
    one = S.wilcoxon_signed_rank([1, 2, 3], [1, 2, 4])       # a single non-zero difference
    assert one["n_nonzero"] == 1 and np.isnan(one["p"]) and one["p_method"] == ""


def test_rank_sum_and_paired_t_match_scipy():
    rng = np.random.default_rng(3)
    for m, n in ((3, 4), (5, 5), (8, 6), (17, 17), (30, 25)):
        for rep in range(4):
            x, y = rng.normal(size=m), rng.normal(0.5, size=n)
            if rep % 2:
                x, y = np.round(x, 1), np.round(y, 1)
            for cc in (False, True):
                ref = sps.mannwhitneyu(x, y, method="asymptotic", use_continuity=cc)
                ours = S.rank_sum(x, y, correction=cc)
                assert ours["p"] == pytest.approx(ref.pvalue, abs=1e-12)
                assert ours["U"] == ref.statistic
                assert 2 * sps.norm.sf(abs(ours["z"])) == pytest.approx(ref.pvalue, abs=1e-12)
            if rep % 2 == 0:        # no ties: exact p, and z is scipy's rank-sum z of W
                ref = sps.mannwhitneyu(x, y, method="exact")
                assert S.rank_sum(x, y, method="exact")["p"] == pytest.approx(ref.pvalue,
                                                                             abs=1e-12)
                small, big = (x, y) if m < n else (y, x)
                ours = S.rank_sum(x, y)
                assert ours["z"] == pytest.approx(sps.ranksums(small, big).statistic, rel=1e-9)
                assert ours["W"] == sps.rankdata(np.r_[small, big])[:small.size].sum()
            if m == n:
                ref = sps.ttest_rel(x, y)
                r = S.paired_t(x, y)
                assert (r["t"], r["p"]) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))


def test_friedman_matches_scipy():
    rng = np.random.default_rng(7)
    for N, k, ties in itertools.product((3, 5, 14, 40), (3, 4, 7), (False, True)):
        X = rng.normal(size=(N, k))
        if ties:
            X = np.round(X)
        ref = sps.friedmanchisquare(*X.T)
        ours = S.friedman(X, tie_correction=True)
        assert ours["chi2"] == pytest.approx(ref.statistic, rel=1e-10)
        assert ours["p"] == pytest.approx(ref.pvalue, abs=1e-12)
        demsar = S.friedman(X)
        if not ties:                # without ties Demšar's chi2_F is scipy's
            assert demsar["p"] == pytest.approx(ref.pvalue, abs=1e-12)
        # Iman-Davenport F_F (Demšar eq. 2) on top of chi2_F, and its F(k-1, (k-1)(N-1)) p
        c = demsar["chi2"]
        if N * (k - 1) - c < 1e-9:      # all blocks agree
            assert demsar["F"] == np.inf and demsar["p_F"] == 0
            continue
        F = (N - 1) * c / (N * (k - 1) - c)
        assert demsar["F"] == pytest.approx(F) and demsar["p_F"] == pytest.approx(
            sps.f.sf(F, k - 1, (k - 1) * (N - 1)))
        # ranks: scikit-posthocs ranks ascending, so the negated table gives rank 1 = best
        assert demsar["ranks"] == pytest.approx(sps.rankdata(-X, axis=1))


def _tables(rng):
    for N, k in ((5, 4), (10, 6), (14, 4), (30, 8), (8, 10)):
        for rep in range(4):
            X = rng.normal(size=(N, k)) + np.linspace(0, 1.5 * rep, k)
            yield np.round(X, 1) if rep % 2 else X


def test_nemenyi_and_cd_cliques_match_scikit_posthocs():
    rng = np.random.default_rng(11)
    n_bars = 0
    for X in _tables(rng):
        N, k = X.shape
        labels = [f"m{i}" for i in range(k)]
        R = pd.Series(S.friedman(X)["avg_ranks"], index=labels)
        cd = S.critical_difference(k, N, 0.05, "nemenyi")
        nem = sp.posthoc_nemenyi_friedman(-X)                       # rank 1 = best
        nem.index = nem.columns = labels
        for a, b in itertools.combinations(labels, 2):
            assert (abs(R[a] - R[b]) > cd) == (nem.loc[a, b] < 0.05)
        # cliques = the crossbars scikit-posthocs draws from its Nemenyi p-values
        ax = Figure().add_subplot()
        bars = sp.critical_difference_diagram(R, nem, ax=ax)["crossbars"]
        theirs = sorted((float(min(ln[0].get_xdata())), float(max(ln[0].get_xdata())))
                        for ln in bars)
        ours = sorted((float(R[c].min()), float(R[c].max())) for c in S.nemenyi_cliques(R, cd))
        assert ours == theirs
        n_bars += len(ours)
    assert n_bars > 20


def test_posthoc_vs_control_matches_scikit_posthocs_and_statsmodels():
    rng = np.random.default_rng(12)
    for X in _tables(rng):
        N, k = X.shape
        labels = [f"m{i}" for i in range(k)]
        R = pd.Series(S.friedman(X)["avg_ranks"], index=labels)
        siegel = sp.posthoc_siegel_friedman(-X)                     # Demšar's z-test, all pairs
        siegel.index = siegel.columns = labels
        post = S.posthoc_vs_control(R, N, "m0")
        others = labels[1:]
        assert post.loc[others, "p"].to_numpy() == pytest.approx(siegel.loc["m0", others], abs=1e-12)
        holm = multipletests(siegel.loc["m0", others].to_numpy(), method="holm")[1]
        assert post.loc[others, "p_adj"].to_numpy() == pytest.approx(holm, abs=1e-12)
        assert np.isnan(post.loc["m0", "p"]) and not post.loc["m0", "significant"]


def test_holm_matches_statsmodels():
    rng = np.random.default_rng(1)
    for m in (1, 2, 5, 17):
        p = rng.random(m) ** 3
        assert S.holm(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-15)
    p = np.array([0.01, np.nan, 0.2, 0.04])
    adj = S.holm(p)
    assert np.isnan(adj[1])
    assert adj[[0, 2, 3]] == pytest.approx(multipletests(p[[0, 2, 3]], method="holm")[1])


# ----------------------------------------------------------------------------- by hand
def test_holm_by_hand():
    # sorted: .005*4 = .02, .01*3 = .03, .03*2 = .06, .04*1 = .04 -> monotone .06
    assert S.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_paired_t_by_hand():
    r = S.paired_t([2, 4, 6], [1, 2, 3])            # d = 1, 2, 3
    t = 2 / (1 / math.sqrt(3))
    assert r["t"] == pytest.approx(t) and r["df"] == 2
    assert r["p"] == pytest.approx(1 - t / math.sqrt(2 + t * t))   # closed form, df = 2
    # Nadeau-Bengio correction with n_test/n_train = 1/9 inflates the variance
    rc = S.paired_t([2, 4, 6], [1, 2, 3], corrected=True, test_train_ratio=1 / 9)
    tc = 2 / math.sqrt(1 * (1 / 3 + 1 / 9))
    assert rc["t"] == pytest.approx(tc) and rc["p"] == pytest.approx(2 * sps.t.sf(tc, 2))
    same = S.paired_t([1, 2, 3], [1, 2, 3])
    assert (same["t"], same["p"]) == (0.0, 1.0)
    with pytest.raises(ValueError, match="test_train_ratio"):
        S.paired_t([1, 2], [2, 3], corrected=True)


def test_wilcoxon_signed_rank_by_hand():
    r = S.wilcoxon_signed_rank([1, -2, 3, 4, 5], np.zeros(5), method="exact")
    assert (r["r_plus"], r["r_minus"], r["T"]) == (13, 2, 2)
    # P(R- <= 2) over 2^5 sign patterns: {}, {1}, {2} -> 3/32, two-sided 6/32
    assert r["p"] == pytest.approx(6 / 32)
    # zsplit: the zero difference takes rank 1 and gives half to each side
    z = S.wilcoxon_signed_rank([0, 1, -2, 3], np.zeros(4), "zsplit", "asymptotic")
    assert (z["r_plus"], z["r_minus"]) == (0.5 + 2 + 4, 0.5 + 3)
    with pytest.raises(ValueError, match="limited to n <= 20"):
        S.wilcoxon_signed_rank(np.arange(25) % 5 + 1, np.zeros(25), method="exact")


def test_rank_sum_by_hand():
    r = S.rank_sum([1, 2, 3], [4, 5, 6], method="exact")
    assert (r["rank_sum_a"], r["rank_sum_b"], r["U"], r["W"]) == (6, 15, 0, 15)
    assert r["p"] == pytest.approx(2 / 20)          # 1 of C(6,3) = 20 orderings per tail
    ra = S.rank_sum([1, 2, 3], [4, 5, 6])
    assert ra["z"] == pytest.approx((15 - 3 * 7 / 2) / math.sqrt(9 / 12 * 7))
    with pytest.raises(ValueError, match="without ties"):
        S.rank_sum([1, 2, 2], [3, 4], method="exact")
    same = S.rank_sum([0.5, 0.5], [0.5, 0.5, 0.5])          # all tied: no evidence
    assert same["p"] == 1.0 and np.isnan(same["z"]) and same["W"] == 2 * 3


def test_friedman_by_hand():
    # ranks per block: [1,2,3], [1,2,3], [2,1,3] -> R = 4/3, 5/3, 3
    table = [[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.7, 0.8, 0.1]]
    r = S.friedman(table)
    assert r["avg_ranks"] == pytest.approx([4 / 3, 5 / 3, 3])
    chi2 = 12 * 3 / 12 * (16 / 9 + 25 / 9 + 81 / 9 - 12)
    assert r["chi2"] == pytest.approx(chi2)
    assert r["F"] == pytest.approx(2 * chi2 / (3 * 2 - chi2))
    assert r["p_F"] == pytest.approx((1 + 2 * r["F"] / 4) ** -2)   # F(2, 4) survival
    # lower-is-better metric (seconds) reverses the ranks; ties share the average rank
    assert S.friedman([[1.0, 1.0, 3.0], [1, 2, 3]], higher_is_better=False)["ranks"][0].tolist() \
        == [1.5, 1.5, 3]
    # perfect agreement: F is infinite, p_F = 0
    assert S.friedman([[3, 2, 1]] * 4)["p_F"] == 0.0


def test_posthoc_vs_control_and_cliques_by_hand():
    R = pd.Series({"a": 1.2, "b": 2.0, "c": 3.1, "d": 3.7})
    post = S.posthoc_vs_control(R, N=20, control="a")
    se = math.sqrt(4 * 5 / (6 * 20))
    assert post.loc["d", "z"] == pytest.approx(2.5 / se)
    assert post.loc["d", "p"] == pytest.approx(2 * sps.norm.sf(2.5 / se))
    assert S.nemenyi_cliques(R, 1.0) == [["a", "b"], ["c", "d"]]        # b-c: 1.1 > CD
    assert S.nemenyi_cliques(R, 2.0) == [["a", "b", "c"], ["b", "c", "d"]]
    assert S.nemenyi_cliques(R, 0.5) == []


# ----------------------------------------------------------------------------- hydr-mi
def _hydr_scores(kind_prefix):
    t = targets("hydr")
    t = t[(t["metric"] == "accuracy") & t["paper_method"].str.startswith(kind_prefix)]
    return t


def test_hydr_table13_rank_sum_recomputed_from_tables_7_to_11():
    """run_stats(ranksum) on the paper's own accuracies (Tables 7-11, 17 classifiers per
    data set) reproduces its Table 13 (Wilcoxon W, z, 2-tailed p) and Table 12 mean ranks."""
    t = targets("hydr")
    t = t[(t["metric"] == "accuracy") & t["source"].isin(
        ["Table 7", "Table 8", "Table 9", "Table 10", "Table 11"])]
    scores = pd.DataFrame({"dataset": t["dataset"], "selector": t["selector"],
                           "classifier": t["paper_method"].str.split(" \\+ ").str[1],
                           "method": t["paper_method"], "accuracy": t["target"]})
    out = S.run_stats(scores, [{"test": "ranksum", "compare": "selector",
                                "blocks": ["classifier"], "group_by": ["dataset"],
                                "control": "hydr-mi", "name": "t13"}])["t13"]
    assert len(out) == 10 and (out["n_a"] == 17).all() and (out["n_b"] == 17).all()
    paper = targets("hydr")
    paper = paper[paper["source"] == "Table 13"]
    names = {"relieff-mi": "HyDR-MI vs ReliefF-MI", "none": "HyDR-MI vs Full Features"}
    checked = 0
    for _, r in out.iterrows():
        pm = paper[(paper["dataset"] == r["dataset"])
                   & (paper["paper_method"] == names[r["method_b"]])]
        W, z, p = (pm.set_index("metric").loc[m, "target"]
                   for m in ("ranksum_W", "ranksum_z", "ranksum_p"))
        if (r["dataset"], r["method_b"]) == ("tiger", "relieff-mi"):
            # the paper prints W = 196.00, z = -3.485, but its own mean rank 11.56
            # (Table 12) means W = 11.56 * 17 = 196.5: a typo in Table 13
            assert r["W"] == 196.5 and r["mean_rank_b"] == pytest.approx(11.56, abs=5e-3)
            assert r["z"] == pytest.approx(z, abs=5e-3) and round(r["p"], 3) == p
            continue
        assert r["W"] == pytest.approx(W, abs=1e-9)
        assert round(r["z"], 3) == pytest.approx(z, abs=1e-9)
        assert round(r["p"], 3) == pytest.approx(p, abs=1e-9)
        assert r["significant"] or r["p_adj"] > 0.05
        checked += 1
    assert checked == 9
    # Table 12 mean ranks (HyDR-MI / other) for fox
    fox = out[(out["dataset"] == "fox")].set_index("method_b")
    assert fox.loc["relieff-mi", "mean_rank_a"] == pytest.approx(22.56, abs=5e-3)
    assert fox.loc["relieff-mi", "mean_rank_b"] == pytest.approx(12.44, abs=5e-3)
    assert fox.loc["none", "mean_rank_a"] == pytest.approx(22.50, abs=5e-3)


def test_hydr_table6_friedman_recomputed_from_tables_2_to_5():
    """Friedman chi2 over the four ReliefF-MI metrics with 17 classifiers x 5 data sets
    as blocks (Demšar's formula, rank 1 = highest accuracy, ties averaged) reproduces
    hydr-mi Table 6 at 20-60 % of the features to 3 decimals."""
    t = targets("hydr")
    t = t[t["source"].isin(["Table 2", "Table 3", "Table 4", "Table 5"])].copy()
    info = t["paper_method"].str.extract(r"ReliefF-MI \((\w+), (\d+) %\) \+ (.*)")
    scores = pd.DataFrame({"dataset": t["dataset"].to_numpy(), "sel.metric": info[0].to_numpy(),
                           "pct": info[1].astype(int).to_numpy(),
                           "classifier": info[2].to_numpy(), "accuracy": t["target"].to_numpy()})
    assert len(scores) == 4 * 6 * 17 * 5
    res = S.run_stats(scores, [{"test": "friedman", "compare": "sel.metric",
                                "blocks": ["dataset", "classifier"], "group_by": ["pct"],
                                "name": "t6"}])
    summ = res["t6"].set_index("pct")
    assert (summ["N"] == 85).all() and (summ["k"] == 4).all() and (summ["n_excluded"] == 0).all()
    paper = dict(zip([10, 20, 30, 40, 50, 60], [10.091, 5.636, 5.506, 3.822, 1.172, 0.618]))
    for pct in (20, 30, 40, 50, 60):
        assert round(summ.loc[pct, "chi2"], 3) == paper[pct]
        assert not summ.loc[pct, "p"] < 0.05          # "accept null hypothesis"
    # at 10 % the printed tables give 9.801 (paper: 10.091); both reject H0 at 7.815
    assert summ.loc[10, "chi2"] == pytest.approx(9.801, abs=1e-3)
    assert summ.loc[10, "chi2"] > sps.chi2.ppf(0.95, 3) == pytest.approx(7.815, abs=1e-3)
    # adapted Hausdorff has the best (lowest) average rank at 10 % (paper, Fig. 4)
    ranks = res["t6_ranks"]
    assert ranks[ranks["pct"] == 10].iloc[0]["method"] == "adapted"


# ----------------------------------------------------------------------------- run_stats
@pytest.fixture(scope="module")
def scores():
    sc = synthetic_scores(0)
    # pca never ran on fox: must be reported, not dropped
    return sc[~((sc["dataset"] == "fox") & (sc["method"] == "pca+milr"))].reset_index(drop=True)


def test_run_stats_paired_t_matches_folds(scores):
    out = S.run_stats(scores.sample(frac=1.0, random_state=1),      # row order irrelevant
                      [{"test": "paired-t", "control": "midr+milr"}])["paired-t_accuracy"]
    assert len(out) == 5 * 3 and set(out["method_a"]) == {"midr+milr"}
    r = out[(out["dataset"] == "musk1") & (out["method_b"] == "none+milr")].iloc[0]
    a = scores[(scores.dataset == "musk1") & (scores.method == "midr+milr")].sort_values(
        ["repeat", "fold"])
    b = scores[(scores.dataset == "musk1") & (scores.method == "none+milr")].sort_values(
        ["repeat", "fold"])
    ref = sps.ttest_rel(a["accuracy"], b["accuracy"])
    assert r["t"] == pytest.approx(ref.statistic) and r["p"] == pytest.approx(ref.pvalue)
    assert r["n_pairs"] == 10 and r["n_missing"] == 0 and r["better"] == "midr+milr"
    # Holm inside each data set's family of 3 comparisons
    g = out[out["dataset"] == "musk1"]
    assert g["p_adj"].to_numpy() == pytest.approx(S.holm(g["p"].to_numpy()))
    fox = out[(out["dataset"] == "fox") & (out["method_b"] == "pca+milr")].iloc[0]
    assert fox["n_pairs"] == 0 and fox["n_missing"] == 10 and np.isnan(fox["p"])
    assert "no result for pca+milr" in fox["missing"] and not fox["significant"]


def test_run_stats_friedman_reports_excluded_blocks(scores):
    res = S.run_stats(scores, [{"test": "friedman", "metric": "auroc",
                                "control": "midr+milr", "name": "fr"}])
    assert set(res) == {"fr", "fr_ranks", "fr_nemenyi", "fr_excluded"}
    summ = res["fr"].iloc[0]
    assert (summ["k"], summ["N"], summ["n_blocks_total"], summ["n_excluded"]) == (4, 4, 5, 1)
    assert "dataset=fox" in summ["excluded"] and "pca+milr" in summ["excluded"]
    ex = res["fr_excluded"]
    assert ex[["block", "missing_methods"]].values.tolist() == [["dataset=fox", "pca+milr"]]
    # the summary agrees with the array-level test on the complete blocks
    wide = (scores[scores.dataset != "fox"].groupby(["dataset", "method"])["auroc"].mean()
            .unstack("method"))
    ref = S.friedman(wide.to_numpy())
    assert summ["chi2"] == pytest.approx(ref["chi2"]) and summ["p_ID"] == pytest.approx(ref["p_F"])
    assert summ["cd_nemenyi"] == pytest.approx(S.critical_difference(4, 4))
    ranks = res["fr_ranks"]
    assert ranks["mean_rank"].is_monotonic_increasing
    assert ranks["mean_rank"].sum() == pytest.approx(4 * 5 / 2)
    assert len(res["fr_nemenyi"]) == 6


def test_run_stats_wilcoxon_and_ranksum_over_datasets(scores):
    res = S.run_stats(scores, [{"test": "wilcoxon", "control": "midr+milr"},
                               {"test": "ranksum", "control": "midr+milr"},
                               {"test": "wilcoxon", "control": "midr+milr", "over": "folds"}])
    w = res["wilcoxon_accuracy"].set_index("method_b")
    assert w.loc["none+milr", "n_pairs"] == 5 and w.loc["pca+milr", "n_pairs"] == 4
    assert w.loc["pca+milr", "n_missing"] == 1
    assert w.loc["pca+milr", "missing"] == "dataset=fox (no result for pca+milr)"
    means = scores.groupby(["dataset", "method"])["accuracy"].mean().unstack()
    ref = sps.wilcoxon(means["midr+milr"], means["none+milr"])
    assert w.loc["none+milr", "p"] == pytest.approx(ref.pvalue)
    rs = res["ranksum_accuracy"].set_index("method_b")
    assert (rs.loc["pca+milr", "n_a"], rs.loc["pca+milr", "n_b"]) == (5, 4)
    assert "wilcoxon_accuracy_2" in res and "dataset" in res["wilcoxon_accuracy_2"].columns


def test_run_stats_all_pairs_filter_groups_and_errors(scores):
    sc = scores.copy()
    sc["train_ratio"] = np.where(sc["fold"] % 2 == 0, 0.2, 0.5)
    res = S.run_stats(sc, [{"test": "paired-t", "filter": {"dataset": ["musk1", "musk2"]},
                            "methods": ["none+milr", "pca+milr", "midr+milr"],
                            "correction": "none"}])["paired-t_accuracy"]
    # two data sets x two training ratios (added to the groups automatically) x 3 pairs
    assert len(res) == 2 * 2 * 3 and {"dataset", "train_ratio"} <= set(res.columns)
    assert (res["p_adj"] == res["p"]).all()
    with pytest.raises(ValueError, match="control"):
        S.run_stats(scores, [{"test": "friedman", "control": "nope"}])
    with pytest.raises(ValueError, match="test must be"):
        S.run_stats(scores, [{"test": "anova"}])
    with pytest.raises(KeyError):
        S.run_stats(scores, [{"test": "friedman", "metric": "f1"}])
    # deterministic
    a = S.run_stats(scores, [{"test": "friedman"}, {"test": "paired-t"}])
    b = S.run_stats(scores, [{"test": "friedman"}, {"test": "paired-t"}])
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k])


def test_run_stats_too_few_blocks_is_reported():
    sc = synthetic_scores(1, datasets=("musk1",))
    res = S.run_stats(sc, [{"test": "friedman"}])
    assert res["friedman_accuracy"].iloc[0]["note"].startswith("not run: 1 complete block")
    assert res["friedman_accuracy_ranks"].empty


def test_default_stats_when_nothing_configured(scores):
    entries = S.default_stats(scores, ["auroc", "accuracy"])
    assert entries == [{"test": "friedman", "metric": "auroc"},
                       {"test": "paired-t", "metric": "auroc"},
                       {"test": "friedman", "metric": "accuracy"},
                       {"test": "paired-t", "metric": "accuracy"}]
    res = S.run_stats(scores, [], metrics=["auroc", "accuracy"])
    assert list(res) == ["friedman_auroc", "friedman_auroc_ranks", "friedman_auroc_nemenyi",
                         "friedman_auroc_excluded", "paired-t_auroc", "friedman_accuracy",
                         "friedman_accuracy_ranks", "friedman_accuracy_nemenyi",
                         "friedman_accuracy_excluded", "paired-t_accuracy"]
    # all pairs of 4 methods in each of 5 data sets; generated data are labelled synthetic
    assert len(res["paired-t_auroc"]) == 5 * 6 and res["paired-t_auroc"]["synthetic"].all()
    assert res["friedman_auroc"]["synthetic"].all()
    assert S.run_stats(scores, None, defaults=False) == {}


def test_control_by_classifier_or_selector_name(scores):
    res = S.run_stats(scores, [{"test": "friedman", "control": "midr", "name": "f",
                                "post_hoc": "bonferroni-dunn"}])
    assert res["f"].iloc[0]["control"] == "midr+milr"
    assert res["f_ranks"]["control"].eq("midr+milr").all()
    with pytest.raises(ValueError, match="several methods"):
        S.run_stats(scores, [{"test": "friedman", "control": "milr"}])
    with pytest.raises(ValueError, match="correction"):
        S.run_stats(scores, [{"test": "paired-t", "correction": "bonferroni"}])


def test_friedman_note_says_when_it_cannot_say_much():
    """N = 2 data sets and k = 14 methods: CD 14.03 exceeds any rank gap."""
    cd = S.critical_difference(14, 2)
    assert cd == pytest.approx(14.03, abs=0.01)
    note = S.friedman_note(14, 2, cd, reject=True, n_nemenyi_significant=0)
    assert "N = 2 blocks and k = 14 methods: Demšar (2006) wants N > 10 and k > 5" in note
    assert "Nemenyi CD 14.03 >= k - 1 = 13" in note
    # enough blocks, omnibus rejects, no pair beyond the CD: explained
    cd = S.critical_difference(6, 12)
    assert cd < 5
    assert S.friedman_note(6, 12, cd, True, 0).startswith("Iman-Davenport rejects")
    assert S.friedman_note(6, 12, cd, True, 2) == "" == S.friedman_note(6, 12, cd, False, 0)


def test_pairwise_note_on_too_few_pairs():
    assert S.pairwise_note("wilcoxon", 5).startswith("5 pairs: the smallest possible Wilcoxon "
                                                     "p is 0.0625 > alpha = 0.05")
    assert S.pairwise_note("wilcoxon", 6) == ""      # 2 / 64 = 0.031
    # the bound is SciPy's exact p of the most extreme sample
    assert sps.wilcoxon(np.arange(1.0, 6.0)).pvalue == pytest.approx(2 / 2 ** 5)
    assert "advises against a t-test" in S.pairwise_note("paired-t", 10, over="datasets")
    assert S.pairwise_note("paired-t", 10, over="folds") == ""


def test_notes_reach_the_tables(scores):
    two = scores[scores["dataset"].isin(["musk1", "musk2"])]
    res = S.run_stats(two, [{"test": "friedman"}, {"test": "wilcoxon"}])
    assert "N = 2 blocks" in res["friedman_accuracy"]["note"].iloc[0]
    assert res["wilcoxon_accuracy"]["note"].str.startswith("2 pairs").all()
