"""The alternating representative loop's shared parts (milbench.classifiers._representatives):
the candidate rows Z = [X; bag means], the kernel blocks, their memory room and the stop rule."""
import numpy as np
import pytest
import scipy.sparse as sp

from milbench.classifiers import _representatives as reps
from milbench.classifiers._blocks import MemoryLimitError
from milbench.classifiers._kernels import kernel_matrix
from milbench.classifiers._representatives import (
    instances_and_means,
    kernel_blocks,
    kernel_room,
    representatives_stop,
)

OFF = np.array([0, 3, 4, 8])               # bags of 3, 1 and 4 instances


def test_instances_and_means_dense():
    X = np.random.default_rng(0).normal(size=(8, 3))
    Z, norms = instances_and_means(X, OFF)
    means = np.stack([X[a:b].mean(axis=0) for a, b in zip(OFF[:-1], OFF[1:])])
    np.testing.assert_array_equal(Z[:8], X)
    np.testing.assert_allclose(Z[8:], means, rtol=1e-15)
    np.testing.assert_array_equal(Z[9], X[3])                   # one-instance bag: itself
    np.testing.assert_allclose(norms, (Z * Z).sum(axis=1), rtol=1e-15)
    Zx, nx = instances_and_means(X, OFF, means=False)
    np.testing.assert_array_equal(Zx, X)


def test_instances_and_means_sparse_equals_dense(monkeypatch):
    X = np.zeros((8, 100))
    X[[0, 2, 5, 7], [1, 4, 4, 9]] = [1.0, 2.0, 3.0, 4.0]        # 0.5 % non-zero: CSR
    Z, norms = instances_and_means(X, OFF)
    assert sp.issparse(Z)
    monkeypatch.setattr(reps._kernels, "SPARSE_MAX_DENSITY", 0.0)
    Zd, nd = instances_and_means(X, OFF)
    np.testing.assert_array_equal(Z.toarray(), Zd)
    np.testing.assert_array_equal(norms, nd)


def test_kernel_room(monkeypatch):
    monkeypatch.setattr(reps, "memory_limit", lambda: None)
    assert kernel_room("M", 3, OFF) == np.inf
    need = 8 * (3 * 3 * 3 + 8 * 3)                             # 3 blocks of n × n, one N × n
    monkeypatch.setattr(reps, "memory_limit", lambda: need + 10)
    assert kernel_room("M", 3, OFF) == 10
    monkeypatch.setattr(reps, "memory_limit", lambda: need - 1)
    with pytest.raises(MemoryLimitError, match=r"M: 3 bags and 8 instances.*bag 2 with 4"):
        kernel_room("M", 3, OFF)


@pytest.mark.parametrize("sparse, room", [(False, np.inf), (False, 0), (True, np.inf),
                                          (True, 0)])
def test_kernel_blocks_are_the_kernel(fresh_cache, sparse, room):
    """Square cached (dense, room), per call (room 0), packed (sparse, room) or CSR products
    (sparse, room 0): the blocks of K(Z, Z)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(8, 4))
    Z, norms = instances_and_means(X, OFF)
    if sparse:
        Z = sp.csr_matrix(Z)
    K = kernel_matrix(Z.toarray() if sparse else Z, Z.toarray() if sparse else Z, "rbf", 0.3)
    gram, scores = kernel_blocks(Z, norms, "rbf", 0.3, room, 8)
    rows, cols = np.array([8, 3, 10]), np.array([0, 9])
    np.testing.assert_allclose(gram(rows, cols), K[rows][:, cols], rtol=1e-13)
    coef = np.array([0.5, -2.0])
    np.testing.assert_allclose(scores(cols, coef), K[:8, cols] @ coef, rtol=1e-12)
    assert len(fresh_cache) == (room == np.inf)


def test_representatives_stop_reasons():
    seen = set()
    a, b = np.array([0, 3]), np.array([1, 3])
    assert representatives_stop(a, np.array([-1, -1]), seen, 1, 5) is None
    assert representatives_stop(b, a, seen, 2, 5) is None
    assert representatives_stop(b, b, seen, 3, 5) == "converged"
    assert representatives_stop(a, b, seen, 3, 5) == "cycle"          # a came back
    assert representatives_stop(np.array([2, 3]), b, seen, 5, 5) == "max_iter"
