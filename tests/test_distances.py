import numpy as np
import pytest
from scipy.spatial.distance import cdist

from milbench.distances import bag_distances

from conftest import toy_bags


def reference(A, B, metric):
    out = np.empty((len(A), len(B)))
    for i, a in enumerate(A):
        for j, b in enumerate(B):
            d = cdist(a, b)
            out[i, j] = {"min": d.min(), "max": max(d.min(1).max(), d.min(0).max()),
                         "avg": (d.min(1).sum() + d.min(0).sum()) / (len(a) + len(b))}[metric]
    return out


@pytest.mark.parametrize("metric", ["min", "max", "avg"])
@pytest.mark.parametrize("block_rows", [3, 4096])
def test_matches_per_pair_loop(metric, block_rows):
    A, _ = toy_bags(13, d=3, seed=1, max_size=6)
    B, _ = toy_bags(7, d=3, seed=2, max_size=4)
    np.testing.assert_allclose(bag_distances(A, B, metric, block_rows), reference(A, B, metric),
                               atol=1e-6)
    np.testing.assert_allclose(bag_distances(A, None, metric, block_rows), reference(A, A, metric),
                               atol=1e-6)


def test_memory_guard_names_the_size():
    A, _ = toy_bags(50, d=2)
    with pytest.raises(MemoryError, match="GiB"):
        bag_distances(A, metric="avg", max_bytes=100)
