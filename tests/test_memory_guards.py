"""Memory guards of the estimators that build large blocks (bag-distance tables, set kernels,
precomputed SVM kernels, the representative alternations' kernel blocks): with a small
MILBENCH_MAX_MEMORY_GB the largest allocation (numpy reports its allocations to tracemalloc)
stays within the limit where the default blocks would not, or a MemoryLimitError names the
largest bag, the estimate and the setting to change."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from milbench.classifiers import distances
from milbench.classifiers.citation_knn import CitationKNN
from milbench.classifiers._blocks import MemoryLimitError, largest_block
from milbench.classifiers.distances import _min_rows, bag_distances
from milbench.classifiers.kisvm import mean_embedding_kernel
from milbench.classifiers.mildm import bag_similarity_mapping
from milbench.classifiers.miordm import MIORDM
from milbench.classifiers.mirsvm import MIRSVM
from milbench.classifiers.misvm import MISVM, MiSVM
from milbench.classifiers.set_kernel import (
    SetKernelSVM,
    make_instance_kernel,
    set_kernel_matrix,
    set_kernel_self,
)
from milbench.data.bags import stack
from milbench.utils.cache import disabled

GiB = 2**30


def big_bags(n_bags, size, d=20, seed=0):
    """``n_bags`` bags of ``size`` instances, the positive half shifted."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_bags) % 2
    return [rng.normal(size=(size, d)) + 0.5 * y[i] for i in range(n_bags)], y


def traced_peak(f):
    """(f(), the largest total of traced allocations while it ran, in bytes)."""
    tracemalloc.start()
    try:
        out = f()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def limit_gb(monkeypatch, gb):
    monkeypatch.setenv("MILBENCH_MAX_MEMORY_GB", str(gb))
    return gb * GiB


def test_citation_knn_on_bags_larger_than_a_block_stays_within_the_limit(monkeypatch):
    """The filed case scaled down: the default row blocks are whole bags (a block cannot be
    smaller than one bag), so one 2,500-instance bag against 15,000 instances is a 300 MB
    block; under a 32 MB limit the bags are split into row chunks."""
    limit = limit_gb(monkeypatch, 0.03)
    bags, y = big_bags(6, 2500)
    X, off = stack(bags)
    assert 8 * largest_block(off, _min_rows(4096, len(X)), len(X), True) > 9 * limit
    query, _ = big_bags(2, 2500, seed=1)
    with disabled():
        scores, peak = traced_peak(lambda: CitationKNN().fit(bags, y).decision_function(query))
    assert peak <= 1.25 * limit and np.isfinite(scores).all()


@pytest.mark.parametrize("metric", ["min", "max", "avg"])
@pytest.mark.parametrize("same", [True, False])
def test_blocked_distances_equal_the_default_blocks(monkeypatch, metric, same):
    """The split path (row chunks of one bag, min / max reduced across chunks: exact) gives the
    default path's table to round-off: BLAS sums a block's products in an order that depends
    on the block's shape (so do the default blocks of different sizes); the zero self-distances
    come from cancellation, hence the absolute tolerance."""
    bags, _ = big_bags(5, 1200, d=10)
    other = None if same else big_bags(3, 900, d=10, seed=2)[0]
    full, full_peak = traced_peak(lambda: bag_distances(bags, other, metric, max_bytes=GiB))
    limit = 10 * 2**20 if metric == "min" else 20 * 2**20    # max/avg: N × n tables too
    blocked, peak = traced_peak(lambda: bag_distances(bags, other, metric, max_bytes=limit))
    assert full_peak > 2 * limit and peak <= 1.1 * limit
    np.testing.assert_allclose(blocked, full, rtol=1e-12, atol=1e-7)


def test_distance_error_names_the_largest_bag_estimate_and_setting():
    bags, _ = big_bags(6, 300, d=5)
    bags[3] = np.vstack([bags[3], bags[3]])                 # bag 3: 600 instances
    with pytest.raises(MemoryLimitError, match=r"bag 3 with 600 instances") as err:
        bag_distances(bags, metric="avg", max_bytes=2**16)
    assert isinstance(err.value, MemoryError)
    assert "GiB" in str(err.value) and "max_bytes" in str(err.value)


def test_set_kernel_svm_stays_within_the_limit_and_blocks_agree(monkeypatch):
    """Set kernels are sums, so the chunks of a split bag change the summation order: the
    Gram matrix agrees with the default blocks' to round-off."""
    bags, y = big_bags(4, 1200, d=10)
    X, off = stack(bags)
    kernel = make_instance_kernel("rbf", 0.1)
    full = set_kernel_matrix(bags, bags, kernel)
    full_self = set_kernel_self(bags, kernel)
    limit = limit_gb(monkeypatch, 0.02)
    assert 16 * largest_block(off, 2048, len(X)) > 4 * limit       # one bag × all instances
    (blocked, blocked_self), peak = traced_peak(
        lambda: (set_kernel_matrix(bags, bags, kernel), set_kernel_self(bags, kernel)))
    assert peak <= 1.1 * limit
    np.testing.assert_allclose(blocked, full, rtol=1e-12)
    np.testing.assert_allclose(blocked_self, full_self, rtol=1e-12)
    _, peak = traced_peak(lambda: SetKernelSVM(gamma=0.1).fit(bags, y).decision_function(bags))
    assert peak <= 1.1 * limit


def test_set_kernel_error_names_the_setting(monkeypatch):
    limit_gb(monkeypatch, 2**-20)                            # 1 KiB: not one kernel row
    bags, y = big_bags(4, 200, d=3)
    with pytest.raises(MemoryLimitError, match=r"bag \d with 200 instances.*MILBENCH_MAX_MEMORY_GB"):
        SetKernelSVM().fit(bags, y)


@pytest.mark.parametrize("Cls", [MiSVM, MISVM])
def test_precomputed_svm_kernel_over_the_limit(monkeypatch, Cls):
    """3,000 instances are under the "auto" cap, but their 72 MB kernel is not under a 40 MB
    limit: "auto" takes SVC's own kernel, precompute=True raises naming the setting."""
    bags, y = big_bags(30, 100, d=5)
    assert Cls(max_iter=1).fit(bags, y).svm_.precompute          # no limit: precomputed
    limit = limit_gb(monkeypatch, 0.04)
    m, peak = traced_peak(lambda: Cls(max_iter=1).fit(bags, y))
    assert not m.svm_.precompute and peak <= limit
    with pytest.raises(MemoryLimitError, match=r"3000 training instances.*precompute_max"):
        Cls(max_iter=1, precompute=True).fit(bags, y)


@pytest.mark.parametrize("Cls, kw", [(MIORDM, {"max_rounds": 1}), (MIRSVM, {"max_iter": 1})])
def test_representative_alternation_blocks_over_the_limit(monkeypatch, Cls, kw):
    """MIORDM (3 n × n blocks + N × n) and MIRSVM (1 + N × n) refuse before allocating."""
    bags, y = big_bags(300, 40, d=5)                         # n = 300, N = 12,000
    limit_gb(monkeypatch, 0.02)                              # MIORDM needs 31 MB, MIRSVM 30 MB
    with pytest.raises(MemoryLimitError, match=r"300 bags and 12000 instances.*MILBENCH_MAX"):
        Cls(**kw).fit(bags, y)


def test_miordm_kernel_blocks_stay_within_the_limit(monkeypatch):
    bags, y = big_bags(200, 40, d=5)                         # Z: 8,200 rows, K(Z, Z) 538 MB
    limit = limit_gb(monkeypatch, 0.03)
    with disabled():
        _, peak = traced_peak(lambda: MIORDM(max_rounds=2).fit(bags, y))
    assert peak <= limit


@pytest.mark.parametrize("which", ["kisvm", "mildm"])
def test_column_blocks_shrink_under_the_limit(monkeypatch, which):
    """KI-SVM's mean embeddings and MILDM's bag similarities take N × block_cols blocks (1,024
    columns: 49 MB / 147 MB here); under an 8 MB limit they take fewer columns, the same
    numbers to round-off (the products' BLAS blocking)."""
    bags, _ = big_bags(10, 600, d=10)
    X, off = stack(bags)
    if which == "kisvm":
        def f():
            return mean_embedding_kernel(X, off, X, "rbf", 0.1)
    else:
        def f():
            return bag_similarity_mapping(X, off, X, 0.1)
    full, full_peak = traced_peak(f)
    limit = limit_gb(monkeypatch, 2**-7)
    blocked, peak = traced_peak(f)
    assert full_peak > 5 * limit and peak <= 1.1 * limit
    np.testing.assert_allclose(blocked, full, rtol=1e-12)


def test_default_blocks_are_kept_when_they_fit():
    """Data that fits keeps the default blocks (the same numbers as before the guards)."""
    bags, _ = big_bags(40, 50, d=5)
    X, off = stack(bags)
    for metric in distances.METRICS:
        assert distances._plan(off, off, True, metric, 4096, 2**31, False) == (4096, False)
