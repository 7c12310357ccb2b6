"""MI optimal ball (Auer & Ortner 2004) [mi-optimal-ball]: Weka's ``MIOptimalBall``, one of
the classifiers of Zafra et al. (2013), Information Sciences, §4.1.2.

A ball B(c, r) in instance space calls a bag positive when at least one of its instances lies
inside.  Auer & Ortner (2004, ECML) use such balls as weak hypotheses in boosting; the single
"optimal ball" of Weka (the classifier Zafra et al. evaluate) is found by exhaustive search:

* candidate centres c: every (distinct) instance of every positive training bag
  (``max_centres`` draws a seeded random subset when that is too many);
* for each centre, the distance of c to bag i is min_j ‖x_ij − c‖ (Euclidean, after
  ``preprocess``); the candidate radii are the midpoints between consecutive sorted bag distances;
* the (centre, radius) with the highest (weighted) training accuracy wins; ties go to the larger
  radius and then to the first centre — exactly Weka's rule ("the model selects the maximum
  radius"), i.e. the centre that minimises training error.

All centre-to-instance distances come from blocked matrix products; per-bag minima are segment
reductions; the radius search is one sort + cumulative sums per centre (vectorised over centres).

``decision_function`` = r − min_j ‖x_ij − c‖ (> 0 inside the ball), a graded score for AUROC;
``decision_instances`` = r − ‖x − c‖.  ``fit`` accepts ``sample_weight`` (bag weights), as Weka's
weighted-instances handler does, so the ball can be boosted ([mi-adaboost]).
"""
from __future__ import annotations

import numpy as np

from milbench.base import COUNT, SEED, WeightedMILClassifier, options
from milbench.classifiers._thresholds import best_thresholds

_BLOCK_ELEMS = 4_000_000      # centres × instances per distance block


class MIOptimalBall(WeightedMILClassifier):
    """Optimal ball by exhaustive centre × radius search (see module docstring).

    preprocess : "normalize" (min-max to [0, 1] on training instances; Weka's default),
                 "standardize" or "none".
    max_centres : None (all positive-bag instances) or an int cap (seeded random subset).
    """

    _parameter_constraints = {
        "preprocess": options(("normalize", "standardize", "none")),
        "max_centres": [*COUNT, None],
        "random_state": SEED,
    }

    def __init__(self, preprocess="normalize", max_centres=None, random_state=None):
        self.preprocess = preprocess
        self.max_centres = max_centres
        self.random_state = random_state

    def _prep(self, X):
        return (X - self.shift_) / self.span_

    def _fit(self, X, off, y01, w=None):
        w = np.ones(len(off) - 1) if w is None else w
        if self.preprocess == "normalize":
            shift, span = X.min(0), X.max(0) - X.min(0)
        elif self.preprocess == "standardize":
            shift, span = X.mean(0), X.std(0)
        else:
            shift, span = np.zeros(X.shape[1]), np.ones(X.shape[1])
        self.shift_, self.span_ = shift, np.where(span > 0, span, 1.0)
        Xn = self._prep(X)
        pos_rows = np.concatenate([np.arange(off[i], off[i + 1]) for i in np.flatnonzero(y01)])
        C = np.unique(Xn[pos_rows], axis=0)
        if self.max_centres is not None and len(C) > int(self.max_centres):
            rng = np.random.default_rng(self.random_state)
            C = C[np.sort(rng.choice(len(C), size=int(self.max_centres), replace=False))]
        x2 = np.einsum("ij,ij->i", Xn, Xn)
        block = max(1, _BLOCK_ELEMS // len(Xn))
        best = (-np.inf, -np.inf, 0)                      # (accuracy, radius, centre index)
        for a in range(0, len(C), block):
            Cb = C[a:a + block]
            D2 = np.einsum("ij,ij->i", Cb, Cb)[:, None] + x2[None, :] - 2.0 * (Cb @ Xn.T)
            dist = np.sqrt(np.maximum(np.minimum.reduceat(D2, off[:-1], axis=1), 0.0))
            acc, thr = best_thresholds(-dist, y01, w, ends=False)
            if not np.isfinite(acc).any():                # all bags equidistant: allow ends
                acc, thr = best_thresholds(-dist, y01, w, ends=True)
            radius = -thr
            # best in block: highest accuracy, then largest radius, then first centre
            k = int(np.lexsort((np.arange(len(acc)), -radius, -acc))[0])
            tie = abs(acc[k] - best[0]) <= 1e-12
            if acc[k] > best[0] + 1e-12 or (tie and radius[k] > best[1]):
                best = (float(acc[k]), float(radius[k]), a + k)
        self.center_ = C[best[2]]                          # in preprocessed units
        self.radius_ = best[1]
        self.diagnostics_ = {"n_centres": int(len(C)), "train_accuracy": best[0],
                             "radius": self.radius_}

    def _instance_dist(self, X):
        diff = self._prep(X) - self.center_
        return np.sqrt(np.einsum("ij,ij->i", diff, diff))

    def _decision(self, X, off):
        return self.radius_ - np.minimum.reduceat(self._instance_dist(X), off[:-1])

    def decision_instances(self, X):
        """r − ‖x − c‖ per instance (> 0: inside the ball), for bags X in stacked order (a 2-D
        array is read as one-instance bags, i.e. as an instance matrix)."""
        Xs, _ = self._check_predict_input(X)
        return self.radius_ - self._instance_dist(Xs)
