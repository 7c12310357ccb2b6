import numpy as np
import pytest
from scipy.spatial.distance import cdist

from milbench.classifiers.distances import bag_distances, cached_bag_distances
from milbench.utils.cache import ArrayCache, disabled, fingerprint

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


def test_cached_bag_distances_equal_and_keyed_by_content(monkeypatch, reuse_on):
    import milbench.classifiers.distances as distances
    from milbench.utils.cache import ArrayCache
    cache = ArrayCache()
    monkeypatch.setattr(distances, "CACHE", cache)
    A, _ = toy_bags(9, d=3, seed=3)
    B, _ = toy_bags(5, d=3, seed=4)
    for metric in ("min", "max"):
        for other in (B, None):
            np.testing.assert_array_equal(cached_bag_distances(A, other, metric),
                                          bag_distances(A, other, metric))
    assert (cache.misses, cache.hits) == (4, 0)
    D = cached_bag_distances([a.copy() for a in A], B)            # equal content: a hit
    assert cache.hits == 1 and not D.flags.writeable
    changed = [a.copy() for a in A]
    changed[4][0, 2] += 1e-12                                     # one value differs: a miss
    np.testing.assert_array_equal(cached_bag_distances(changed, B), bag_distances(changed, B))
    resized = A[:3] + [np.vstack([A[3], A[4]])] + A[5:]           # same instances, other bags
    np.testing.assert_array_equal(cached_bag_distances(resized, B), bag_distances(resized, B))
    assert cache.misses == 6


def test_array_cache_is_lru_within_its_byte_bound(reuse_on):
    cache = ArrayCache(max_bytes=3 * 800)
    calls = []

    def make(i, size=100):
        return lambda: calls.append(i) or np.full(size, float(i))

    for i in range(3):
        cache.get(("k", i), make(i))
    assert cache.nbytes == 2400 and len(cache) == 3
    cache.get(("k", 0), make(0))                      # hit: 0 becomes most recently used
    cache.get(("k", 3), make(3))                      # evicts 1, the least recently used
    assert cache.nbytes <= cache.max_bytes and len(cache) == 3
    cache.get(("k", 1), make(1))
    assert calls == [0, 1, 2, 3, 1]
    big = cache.get(("big",), make(9, size=301))      # larger than the bound: not stored
    assert big[0] == 9 and ("big",) not in cache._items and cache.nbytes <= cache.max_bytes
    with disabled(cache):
        cache.get(("k", 1), make(1))                  # off: computed again, not looked up
    assert calls == [0, 1, 2, 3, 1, 9, 1] and cache.hits == 1


def test_fingerprint_sees_dtype_shape_and_values():
    a = np.arange(6.0)
    assert fingerprint(a) == fingerprint(a.copy())
    assert fingerprint(a) != fingerprint(a.astype(np.float32))
    assert fingerprint(a) != fingerprint(a.reshape(2, 3))
    b = a.copy()
    b[5] = np.nextafter(b[5], 10)
    assert fingerprint(a) != fingerprint(b)
    assert fingerprint(a[::2]) == fingerprint(np.ascontiguousarray(a[::2]))
