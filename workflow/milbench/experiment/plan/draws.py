"""Which draws the planner times: a draw is one (method, cell) of a *family* (data set x
selector entry x classifier entry of the config), spread over the family's space -- the first
at the middle values and the middle cell, then (tuned and HyDR-MI families) the lowest and the
highest, then balanced random (every value equally often) -- and, for a tuned draw, which grid
points it fits on the inner fold and in which groups (:func:`tuned_groups`).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from milbench.experiment.fold import shares_selector_fits
from milbench.experiment.grid import strip_tune
from milbench.experiment.plan.counting import tune_dims
from milbench.registry import resolve
from milbench.utils.cache import reuses_fits


def anchors(sizes):
    """The centre, the lowest and the highest corner of a grid of ``sizes`` (distinct ones)."""
    return list(dict.fromkeys([tuple(s // 2 for s in sizes), tuple(0 for _ in sizes),
                               tuple(s - 1 for s in sizes)]))


def cell_order(keys):
    """A protocol's (repeat, fold) cells by fold, then repeat: the middle of the list (a first
    draw's cell) is a middle fold, i.e. a middle training ratio of a ratio protocol, whose
    folds are its ratios; its ends are the smallest and the largest."""
    return sorted(keys, key=lambda k: (k[1], k[0]))


def design(sizes, n, rng, n_anchors=3):
    """Up to ``n`` distinct index tuples over a grid of ``sizes``: all of it when it is that
    small, else the first ``n_anchors`` of the centre, the lowest and the highest corner, then
    balanced random tuples (each value of each dimension equally often, in random
    combinations).  The centre comes first: a family drawn once is then measured at its
    middle, not at an extreme."""
    total = math.prod(sizes) if sizes else 1
    if total <= n:
        return list(itertools.product(*(range(s) for s in sizes)))
    out = anchors(sizes)[:min(n, n_anchors)]
    k = 4 * n
    cols = [[int(v) for v in np.concatenate([rng.permutation(s) for _ in range(k // s + 1)])[:k]]
            for s in sizes]
    for tup in zip(*cols):
        if len(out) >= n:
            break
        if tup not in out:
            out.append(tup)
    return out


def selector_fit_slot(selector):
    """A function from a selector setting (dict) to the in-process fit that serves it, when the
    selector's class serves several settings from one fit (its ``shared_fit_slot``,
    :class:`milbench.utils.cache.ReusesFits`: MIDR's C1 >= C2 settings share one fit per C2, one
    in all with ``stop="excess"``); else None.  The rule is the class's own, the one its fits
    follow while the run's cells reuse them."""
    cls = resolve("selector", selector["name"])
    rule = getattr(cls, "shared_fit_slot", None) if reuses_fits(cls) else None
    if rule is None:
        return None
    base = {**cls().get_params(), **strip_tune(selector)}

    def slot(setting):
        shared = rule({**base, **setting})
        return shared if shared is not None else tuple(sorted(setting.items()))
    return slot


def tuned_groups(method, points, rng, first=True):
    """What a tuned draw fits (:func:`~milbench.experiment.plan.measure.draw_tuned`), as a
    dict: ``groups``, the grid points it times in groups; ``n_groups``, the groups of the whole
    grid fitted afresh; ``n_fixed``, the leading groups that stand for themselves in the
    estimate; ``n_shared``, the groups served by another's fit; and ``shared_group``, one of
    those, timed right after the group ``shared_after`` whose fit serves it (None when nothing
    is shared).

    When the inner CV fits each selector setting once for all classifier settings
    (``shares_selector_fits``: the pipeline's joblib cache, or the selector's own in-process
    reuse, as MIDR's) a group is one selector setting with every classifier setting
    (``points`` selector settings, default sqrt of the selector grid, 4-16); else a group is one
    grid point (``points`` of them, default sqrt(|grid|), 4-16).  The leading groups are the
    whole grid when it is timed whole; the centre and the corners of a first draw; else the
    first group, which carries the grid's one-time costs: the random groups after them stand
    for the rest.  When settings share a fit (:func:`selector_fit_slot`: MIDR's C1 >= C2
    points, one fit per C2) only one setting of each shared fit is drawn, and the random ones
    are every other distinct fit (``points`` of them when given) in random order, timed until
    the draw's share of the budget is spent (:func:`timed_enough`): their costs differ too much
    by setting for a sample of a few to stand for the rest
    (``benchmarks/workflow/bench_plan_cell.py``).  A later draw's first group is one whose fit
    serves others, so that a shared group is timed in every draw."""
    dims = tune_dims(method)
    if shares_selector_fits(method["selector"], method["classifier"]):
        sdims = [d for d in dims if d[0] == "select"]
        cdims = [d for d in dims if d[0] == "classify"]
    else:
        sdims, cdims = dims, []
    sizes = [len(v) for *_, v in sdims]
    n_groups = math.prod(sizes)
    n = points or min(16, max(4, math.ceil(math.sqrt(n_groups))))
    # MIDR's FitCache shares fits whether or not the classifier is tuned (untuned: every
    # dim is the selector's; a classifier's dims join sdims only behind selector "none")
    slot = selector_fit_slot(method["selector"]) if n_groups > n else None
    shared, after = None, None
    if slot is None:
        chosen, n_fresh = design(sizes, n, rng, n_anchors=3 if first else 0), n_groups
        n_anchor = len(anchors(sizes))
    else:
        def slot_of(s):
            return slot({k: v[j] for (_, k, v), j in zip(sdims, s)})
        members = {}                                # the settings of each distinct fit
        for s in itertools.product(*(range(k) for k in sizes)):
            members.setdefault(slot_of(s), []).append(s)
        multi = [k for k, m in members.items() if len(m) > 1]
        if first:
            heads = anchors(sizes)
        else:
            heads = [members[multi[rng.integers(len(multi))]][0]] if multi else []
        chosen, taken = [], set()
        for s in heads:
            if slot_of(s) not in taken:
                chosen.append(s)
                taken.add(slot_of(s))
        n_anchor = len(chosen)
        rest = [m[0] for k, m in members.items() if k not in taken]
        n_fresh = len(members)
        chosen += [rest[i] for i in rng.permutation(len(rest))[:max(0, (points or n_fresh)
                                                                      - len(chosen))]]
        after = next((i for i, s in enumerate(chosen) if len(members[slot_of(s)]) > 1), None)
        if after is not None:
            shared = next(s for s in members[slot_of(chosen[after])] if s != chosen[after])
    csets = list(itertools.product(*(range(len(v)) for *_, v in cdims)))

    def group(s):
        return [tuple(((st, k), v[j]) for (st, k, v), j in zip(sdims + cdims, s + c))
                for c in csets]
    if n_groups <= n:       # the whole grid is timed
        fixed = len(chosen)
    elif first:             # the centre and the corners
        fixed = min(n_anchor, len(chosen))
    else:                   # the first group carries the grid's one-time costs
        fixed = 1
    return {"groups": [group(s) for s in chosen], "n_groups": n_fresh, "n_fixed": fixed,
            "n_shared": n_groups - n_fresh, "shared_after": after,
            "shared_group": group(shared) if shared is not None else None}


#: random groups a family's first tuned draw times, past its soft cap, after the centre and corners
MIN_RANDOM_GROUPS = 3


def timed_enough(done, task, cpu):
    """Whether a tuned draw that has timed ``done`` groups in ``cpu`` seconds stops: once its
    ``soft_cap`` is spent, but a first draw not before :data:`MIN_RANDOM_GROUPS` random groups
    after the centre and the corners (``n_fixed``), which stand for the rest of the grid in the
    estimate, and a later draw not before one: else the corners' mean, or a single point, would
    stand for the whole grid (docs/budget.md)."""
    n_random = len(task["groups"]) - task["n_fixed"]
    if n_random <= 0:
        need = 2
    elif task["n_fixed"] > 1:       # a first draw: centre and corners
        need = task["n_fixed"] + min(MIN_RANDOM_GROUPS, n_random)
    else:
        need = task["n_fixed"] + 1
    return done >= need and cpu > task["soft_cap"]
