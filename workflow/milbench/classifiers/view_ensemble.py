"""[view-ensemble] Strategy III of CVFS-MIL (Wu et al. 2014, §4.1), the classifier side: one copy
of a base MIL classifier per feature view, averaged, after the multi-view MI ensembles of Mayo &
Frank (2011)."""
from __future__ import annotations

import numpy as np

from milbench.base import VIEWS, MILClassifier, options, validate_params
from milbench.data.bags import check_bags, resolve_views, unstack
from milbench.registry import make


class ViewEnsemble(MILClassifier):
    """[view-ensemble] One copy of a base MIL classifier per feature view, averaged (Wu et al.
    2014, §4.1, strategy III).

    ``base`` is a classifier registry name (default ``milr``) and ``base_params`` its
    parameters.  Views come from the input Bags (e.g. a view-aware selector's output) or the
    ``views`` parameter (as for the selectors).  Decision: with ``combine="proba"`` the mean of
    the members' positive-class probabilities p̄, reported as log(p̄ / (1 − p̄)) (> 0 iff
    p̄ > ½); with ``combine="decision"`` (or members without predict_proba) the mean decision.
    """

    _parameter_constraints = {
        "base": [str],
        "base_params": [dict, None],
        "combine": options(("proba", "decision")),
        "views": VIEWS,
        "random_state": ["random_state"],
    }

    def __init__(self, base="milr", base_params=None, combine="proba", views=None,
                 random_state=None):
        self.base = base
        self.base_params = base_params
        self.combine = combine
        self.views = views
        self.random_state = random_state

    def fit(self, X, y):
        validate_params(self)
        Xs, offsets, y01, classes = check_bags(X, y)
        try:
            self.view_names_, self.view_ranges_ = resolve_views(X, self.views, Xs.shape[1])
        except ValueError as e:
            raise ValueError(f"[view-ensemble] {e}. It needs the views of its input: pass Bags "
                             "that carry them (a view-aware selector's output); scikit-learn's "
                             "inner CV (`tune`) indexes Bags into plain lists and loses them") from e
        self.classes_ = classes
        self.n_features_in_ = Xs.shape[1]
        self._fit(Xs, offsets, y01)
        return self

    def _make_base(self):
        est = make("classifier", {"name": self.base, **(self.base_params or {})})
        if "random_state" in est.get_params() and self.random_state is not None:
            est.set_params(random_state=self.random_state)
        return est

    def _fit(self, X, offsets, y):
        self.estimators_ = []
        for a, b in self.view_ranges_:
            est = self._make_base()
            est.fit(unstack(X[:, a:b], offsets), y)
            self.estimators_.append(est)
        self.diagnostics_ = {"n_views": len(self.estimators_)}

    def _decision(self, X, offsets):
        use_proba = self.combine == "proba" and all(hasattr(e, "predict_proba") for e in self.estimators_)
        parts = []
        for est, (a, b) in zip(self.estimators_, self.view_ranges_):
            sub = unstack(X[:, a:b], offsets)
            parts.append(est.predict_proba(sub)[:, 1] if use_proba else est.decision_function(sub))
        mean = np.mean(parts, axis=0)
        if not use_proba:
            return mean
        p = np.clip(mean, 1e-12, 1 - 1e-12)
        return np.log(p) - np.log1p(-p)
