"""Shared kernel numerics (milbench.classifiers._kernels) and the memory planning of blocked
computations (milbench.classifiers._blocks), against direct numpy computations."""
import numpy as np
import pytest
import scipy.sparse as sp

from milbench.classifiers import _kernels
from milbench.classifiers._blocks import (
    MemoryLimitError,
    bag_blocks,
    block_plan,
    largest_block,
    memory_limit_error,
    row_blocks,
)
from milbench.classifiers._kernels import (
    as_sparse_if_sparse,
    cached_kernel,
    kernel_matrix,
    packed_block,
    packed_kernel,
    packed_matvec,
    packed_size,
    sq_norms,
)


def data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(7, 4)), rng.normal(size=(5, 4))


def test_kernel_matrix_is_the_direct_formula():
    A, B = data()
    sq = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(kernel_matrix(A, B, "rbf", 0.3), np.exp(-0.3 * sq), rtol=1e-12)
    np.testing.assert_allclose(kernel_matrix(A, B, "linear"), A @ B.T, rtol=1e-15)
    K = kernel_matrix(A, A, "rbf", 0.3)
    assert (K <= 1.0).all()
    np.testing.assert_allclose(np.diag(K), 1.0, rtol=0, atol=1e-14)   # clipped at distance 0
    with pytest.raises(ValueError, match="kernel must be one of"):
        kernel_matrix(A, B, "poly")


def test_kernel_matrix_of_sparse_operands_and_given_norms():
    A, B = data(1)
    A[A < 0.5] = 0.0
    ref = kernel_matrix(A, B, "rbf", 0.2)
    np.testing.assert_allclose(kernel_matrix(sp.csr_matrix(A), B, "rbf", 0.2), ref,
                               rtol=0, atol=1e-13)
    np.testing.assert_array_equal(kernel_matrix(A, B, "rbf", 0.2, sq_norms(A), sq_norms(B)), ref)


def test_sq_norms_dense_and_sparse():
    A, _ = data(2)
    ref = (A * A).sum(axis=1)
    np.testing.assert_allclose(sq_norms(A), ref, rtol=1e-15)
    np.testing.assert_allclose(sq_norms(sp.csr_matrix(A)), ref, rtol=1e-15)


def test_as_sparse_if_sparse_threshold(monkeypatch):
    X = np.zeros((10, 100))
    X[0, :5] = 1.0                                             # 0.5 % non-zero
    assert sp.issparse(as_sparse_if_sparse(X))
    np.testing.assert_array_equal(as_sparse_if_sparse(X).toarray(), X)
    X[:, :10] = 1.0                                            # 10 % non-zero
    assert as_sparse_if_sparse(X) is X
    monkeypatch.setattr(_kernels, "SPARSE_MAX_DENSITY", 0.0)
    assert as_sparse_if_sparse(np.zeros((3, 3))).__class__ is np.ndarray


@pytest.mark.parametrize("n", [1, 2, 9])
def test_packed_kernel_is_the_lower_triangle(n):
    rng = np.random.default_rng(n)
    Z = rng.normal(size=(n, 3))
    K = kernel_matrix(Z, Z, "rbf", 0.5)
    P = packed_kernel(Z, "rbf", 0.5, block_bytes=8 * 2 * n)   # row blocks of 2 rows
    assert len(P) == packed_size(n) == n * (n + 1) // 2
    np.testing.assert_allclose(P, K[np.tril_indices(n)], rtol=1e-14)
    rows, cols = np.arange(n)[::-1], np.arange(n)[::2]
    np.testing.assert_allclose(packed_block(P, rows, cols), K[rows][:, cols], rtol=1e-14)
    coef = rng.normal(size=len(cols))
    np.testing.assert_allclose(packed_matvec(P, cols, coef), K[:, cols] @ coef, rtol=1e-12)


def test_cached_kernel_is_kernel_matrix(fresh_cache):
    Z, _ = data(3)
    K = cached_kernel(Z, "rbf", 0.1)
    np.testing.assert_array_equal(K, kernel_matrix(Z, Z, "rbf", 0.1))
    assert cached_kernel(Z.copy(), "rbf", 0.1) is K and fresh_cache.hits == 1


OFF = np.array([0, 2, 3, 10, 11, 14])    # bags of 2, 1, 7, 1, 3 instances


@pytest.mark.parametrize("block_rows", [1, 3, 4, 100])
def test_bag_blocks_cover_whole_bags_in_order(block_rows):
    blocks = list(bag_blocks(OFF, block_rows))
    assert [b[0] for b in blocks] == [0] + [b[1] for b in blocks[:-1]] and blocks[-1][1] == 5
    for s, e, r0, r1 in blocks:
        assert (r0, r1) == (OFF[s], OFF[e]) and e > s
        assert r1 - r0 <= block_rows or e == s + 1                 # larger only for one bag


def test_row_blocks_split_large_bags():
    rows = [(r0, r1) for _, _, r0, r1 in row_blocks(OFF, 3, split=True)]
    assert max(r1 - r0 for r0, r1 in rows) <= 3
    assert [r for r0, r1 in rows for r in range(r0, r1)] == list(range(14))
    assert list(row_blocks(OFF, 3, split=False)) == list(bag_blocks(OFF, 3))


def test_largest_block_is_the_largest_rows_times_cols():
    blocks = list(bag_blocks(OFF, 3))
    assert largest_block(OFF, 3, 20) == max((r1 - r0) * 20 for *_, r0, r1 in blocks)
    assert largest_block(OFF, 3, 14, triangular=True) == max((r1 - r0) * (14 - r0)
                                                            for *_, r0, r1 in blocks)
    assert largest_block(np.array([0]), 3, 5) == 0                # no bags


def test_block_plan_default_smaller_rows_or_error():
    args = (OFF, "job", "raise the limit")
    assert block_plan(64, 500, 100, 1000, 8, None, *args) == (64, False)       # no limit
    assert block_plan(64, 500, 100, 1000, 8, 1000 + 8 * 500, *args) == (64, False)
    assert block_plan(64, 500, 100, 1000, 8, 1000 + 8 * 100 * 3, *args) == (3, True)
    with pytest.raises(MemoryLimitError, match=r"job: needs .* bag 2 with 7 instances "
                                               r"\(5 bags, 14 instances\)\. raise the limit"):
        block_plan(64, 500, 100, 1000, 8, 1000 + 8 * 99, *args)


def test_memory_limit_error_names_the_largest_bag():
    err = memory_limit_error("what", 3 * 2**30, 2**30, [0, 1, 5, 6], "do this")
    assert isinstance(err, MemoryError)
    assert str(err) == ("what: needs about 3.00 GiB at its peak but the limit is 1.00 GiB; its "
                        "largest bag is bag 1 with 4 instances (3 bags, 6 instances). do this")
    assert "no bags" in str(memory_limit_error("what", 1, 0, [0], "x"))
