"""Bag data model: stacked float32 instances, bag offsets, labels, views and graphs.

Every estimator in milbench accepts either a :class:`Bags` container or a plain list of
2-D arrays (one per bag) with labels in 0/1 or ±1.  :func:`check_bags` validates either and
returns one stacked matrix plus bag offsets, the form estimators work on (vectorised segment
reductions instead of Python loops); :func:`unstack` gives per-bag views of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from milbench.data.edges import subset_edges


class BagError(ValueError):
    """Bad multi-instance input (empty bag, non-finite features, wrong label set...)."""


@dataclass
class Bags:
    """A multi-instance dataset.

    instances : (n_instances, n_features) float32, bags stacked in order.
    offsets   : (n_bags + 1,) int64, bag b owns rows offsets[b]:offsets[b+1].
    labels    : (n_bags,) int8 in {0, 1}.
    bag_ids   : (n_bags,) stable identifiers (str), used by fold files.
    names     : optional human-readable bag names.
    instance_labels : optional (n_instances,) int8.
    views     : ordered {view name: (start, stop)} column ranges of ``instances``.
    edges     : optional pandas DataFrame (src, dst, weight, level) with src/dst as bag ids
                (level "bag") or global instance row numbers (level "instance").
    meta      : free-form provenance (source, sha256 of raw inputs, synthetic flag, ...).
    """

    instances: np.ndarray
    offsets: np.ndarray
    labels: np.ndarray
    bag_ids: np.ndarray
    names: np.ndarray | None = None
    instance_labels: np.ndarray | None = None
    views: dict = field(default_factory=dict)
    edges: object = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.instances = np.ascontiguousarray(self.instances, dtype=np.float32)
        self.offsets = np.asarray(self.offsets, dtype=np.int64)
        self.labels = np.asarray(self.labels).astype(np.int8)
        self.bag_ids = np.asarray(self.bag_ids).astype(str)
        if not self.views:
            self.views = {"x": (0, self.instances.shape[1])}
        validate(self)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_list(cls, bags, labels, bag_ids=None, **kw):
        X, offsets = stack(bags)
        if bag_ids is None:
            bag_ids = np.arange(len(bags)).astype(str)
        return cls(X, offsets, labels_to_01(labels)[0], bag_ids, **kw)

    # -- sequence protocol (so sklearn's _safe_indexing / cross_validate work) -----------
    def __len__(self):
        return len(self.offsets) - 1

    @property
    def shape(self):
        """(n_bags,): makes scikit-learn index Bags like an array, so CV splits stay Bags."""
        return (len(self),)

    def __getitem__(self, i):
        """bags[i] -> bag i's (n_i, d) array; bags[index array or mask] -> a Bags subset."""
        if isinstance(i, tuple):          # scikit-learn's array indexing passes (key, ...)
            i = i[0]
        if isinstance(i, (int, np.integer)):
            return self.instances[self.offsets[i]:self.offsets[i + 1]]
        return self.subset(i)

    @property
    def n_features(self):
        return self.instances.shape[1]

    @property
    def sizes(self):
        return np.diff(self.offsets)

    @property
    def bag_index(self):
        """(n_instances,) bag number of every instance row."""
        return np.repeat(np.arange(len(self)), self.sizes)

    def as_list(self):
        return unstack(self.instances, self.offsets)

    def subset(self, idx):
        """Bags ``idx`` (integer positions or boolean mask), in that order."""
        idx = np.arange(len(self))[np.asarray(idx)]
        sizes = self.sizes[idx]
        rows = np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in idx]) \
            if len(idx) else np.zeros(0, dtype=np.int64)
        edges = None
        if self.edges is not None:  # keep the graph among the kept bags / instances
            edges = subset_edges(self.edges, self.bag_ids[idx], rows)
        return replace(
            self,
            instances=self.instances[rows],
            offsets=np.concatenate([[0], np.cumsum(sizes)]),
            labels=self.labels[idx],
            bag_ids=self.bag_ids[idx],
            names=None if self.names is None else np.asarray(self.names)[idx],
            instance_labels=None if self.instance_labels is None else self.instance_labels[rows],
            edges=edges,
        )

    def view(self, name):
        """Bags restricted to one named view's columns."""
        a, b = self.views[name]
        return replace(self, instances=self.instances[:, a:b], views={name: (0, b - a)})

    def with_instances(self, X, views=None):
        """Same bags, new instance matrix (e.g. after a feature transform). Views are kept when
        the columns are unchanged in number (a scaler), else replaced by ``views`` or one view."""
        X = np.asarray(X)
        if views is None:
            views = self.views if X.shape[1] == self.n_features else {"x": (0, X.shape[1])}
        return replace(self, instances=X, views=views)


def stack(bags):
    """List of (n_i, d) arrays -> (stacked (N, d) array, offsets (n_bags+1,))."""
    if isinstance(bags, Bags):
        return bags.instances, bags.offsets
    sizes = np.fromiter((len(b) for b in bags), dtype=np.int64, count=len(bags))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    if len(bags) == 0:
        raise BagError("no bags given")
    X = np.concatenate([np.asarray(b, dtype=float).reshape(len(b), -1) for b in bags], axis=0)
    return X, offsets


def labels_to_01(y):
    """Map labels in {0,1}, {-1,1}, {False,True} to 0/1; return (y01, classes_)."""
    y = np.asarray(y).ravel()
    classes = np.unique(y)
    if len(classes) > 2:
        raise BagError(f"binary labels expected, got classes {classes.tolist()}")
    allowed = ({0, 1}, {-1, 1}, {False, True})
    if not any(set(classes.tolist()) <= s for s in allowed):
        raise BagError(f"labels must be 0/1 or -1/+1, got {classes.tolist()}")
    return (y > 0).astype(np.int8), classes


def check_bags(X, y=None, *, require_both_classes=True, dtype=np.float64):
    """Validate MIL input once and return it stacked: ``(instances, offsets, y01, classes_)``.

    ``X`` is a :class:`Bags` container or a list of (n_i, d) arrays (a 1-D array is one
    instance); ``instances`` is the (N, d) matrix of every bag's rows in order, as ``dtype``
    (a Bags container's matrix is converted once, never split), ``offsets`` its (n_bags + 1,)
    bag boundaries; the y parts are None when y is None.  ``dtype=None`` returns a Bags
    container's matrix as it is stored (float32, uncopied) and a list's as float64, for methods
    that convert in blocks themselves.  Raises BagError for an empty bag, non-finite values,
    mismatched feature counts, bag/label count mismatch, or (when fitting) a single class.
    """
    if isinstance(X, Bags):
        Xs, offsets = X.instances, X.offsets
        if dtype is not None:
            Xs = Xs.astype(dtype, copy=False)
    else:
        if len(X) == 0:
            raise BagError("no bags given")
        bags = [np.asarray(b, dtype=dtype or np.float64) for b in X]
        bags = [b.reshape(1, -1) if b.ndim == 1 else b for b in bags]
        d = bags[0].shape[1]
        for i, b in enumerate(bags):
            if b.ndim != 2 or b.shape[1] != d:
                raise BagError(f"bag {i} has shape {b.shape}; expected (n_instances, {d})")
            if b.shape[0] == 0:
                raise BagError(f"bag {i} has no instances")
        Xs = np.concatenate(bags)
        offsets = np.concatenate([[0], np.cumsum([len(b) for b in bags])]).astype(np.int64)
    if not np.isfinite(Xs).all():
        bad = int(np.flatnonzero(~np.isfinite(Xs).all(axis=1))[0])
        raise BagError(f"non-finite feature value (NaN or inf) in instance row {bad}")
    if y is None:
        return Xs, offsets, None, None
    if len(y) != len(offsets) - 1:
        raise BagError(f"{len(offsets) - 1} bags but {len(y)} labels")
    y01, classes = labels_to_01(y)
    if require_both_classes and len(classes) < 2:
        raise BagError(f"training data has a single class {classes.tolist()}; need both")
    return Xs, offsets, y01, classes


def unstack(X, offsets):
    """(N, d) stacked instances and their bag offsets -> list of per-bag row views (no copy)."""
    return np.split(X, offsets[1:-1])


def validate(bags: Bags):
    """Structural checks on a Bags container (raises BagError naming the problem)."""
    n = len(bags.offsets) - 1
    if bags.offsets[0] != 0 or bags.offsets[-1] != len(bags.instances):
        raise BagError("offsets must start at 0 and end at the number of instances")
    sizes = np.diff(bags.offsets)
    if (sizes <= 0).any():
        b = int(np.flatnonzero(sizes <= 0)[0])
        raise BagError(f"bag {bags.bag_ids[b] if len(bags.bag_ids) > b else b} has no instances")
    if len(bags.labels) != n or len(bags.bag_ids) != n:
        raise BagError(f"{n} bags but {len(bags.labels)} labels and {len(bags.bag_ids)} ids")
    if not np.isin(bags.labels, (0, 1)).all():
        raise BagError("bag labels must be 0/1")
    finite = np.isfinite(bags.instances).all(axis=1)
    if not finite.all():
        r = int(np.flatnonzero(~finite)[0])
        b = int(np.searchsorted(bags.offsets, r, side="right") - 1)
        raise BagError(f"non-finite feature value in bag {bags.bag_ids[b]} (instance row {r})")
    if len(set(bags.bag_ids.tolist())) != n:
        raise BagError("bag ids must be unique")


def segment_reduce(values, offsets, ufunc):
    """Reduce consecutive row segments: ``ufunc.reduceat`` over bags (values stacked by bag)."""
    return ufunc.reduceat(values, offsets[:-1], axis=0)


def segment_softmax_weights(s, offsets, alpha):
    """Per-bag softmax weights exp(alpha*s) / sum_bag exp(alpha*s), numerically stable."""
    bag_max = segment_reduce(s, offsets, np.maximum)
    e = np.exp(alpha * (s - np.repeat(bag_max, np.diff(offsets))))
    return e / np.repeat(segment_reduce(e, offsets, np.add), np.diff(offsets))


def resolve_views(X, views, n_features):
    """Ordered (names, ranges) of the feature views: named Bags views first, then the
    ``views`` parameter, else one view "x" holding every column."""
    if isinstance(X, Bags) and X.views and list(X.views) != ["x"]:
        names = list(X.views)
        ranges = [tuple(int(v) for v in X.views[n]) for n in names]
    elif views is not None:
        if isinstance(views, dict):
            names = list(views)
            ranges = [tuple(int(v) for v in views[n]) for n in names]
        else:
            views = list(views)
            if all(np.isscalar(v) for v in views):
                edges = np.r_[0, np.cumsum([int(v) for v in views])]
                ranges = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
            else:
                ranges = [(int(a), int(b)) for a, b in views]
            names = [f"view{k}" for k in range(len(ranges))]
    else:
        names, ranges = ["x"], [(0, n_features)]
    cover = np.zeros(n_features, int)
    for (a, b), n in zip(ranges, names):
        if not 0 <= a < b <= n_features:
            raise ValueError(f"view {n!r} range ({a}, {b}) outside the {n_features} features")
        cover[a:b] += 1
    if (cover != 1).any():
        raise ValueError(f"views {dict(zip(names, ranges))} must partition the {n_features} "
                         "features exactly once")
    return names, ranges
