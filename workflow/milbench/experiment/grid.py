"""Methods from a config: grid expansion, method ids and labels, and the configuration checks
that need no data (run when the workflow is parsed).

Config conventions (workflow/schemas/config.schema.yaml):
* a selector / classifier entry is ``{name: <registry name>, <param>: value, ...}``;
* a list-valued parameter expands into a grid of separate methods (to pass a literal list,
  wrap it: ``[[a, b]]``); dict values are passed whole;
* ``label: text`` names the entry in tables and figures (``method`` column) instead of
  ``name(param=value, ...)``; it changes no id, file or fit;
* ``tune: {param: [values]}`` is an inner-CV search space: the job runs a stratified
  ``inner_folds``-fold GridSearchCV on the training bags of the outer fold only
  (:func:`milbench.experiment.fold.build_estimator`);
* a selector parameter given as ``"@classifier"`` is the run's classifier entry (HyDR-MI's GA
  target).
"""
from __future__ import annotations

import hashlib
import itertools
import json

from milbench.base import validate_params
from milbench.registry import make
from milbench.utils.learners import make_estimator

RESERVED = ("name", "tune", "label")
PER_SEED_UNTUNED = ("per-seed results cannot be tuned (an inner grid search picks one "
                    "setting); drop `tune`")


def expand_grid(spec):
    """One config entry -> list of concrete entries (lists expand, ``tune`` is kept whole)."""
    keys = [k for k, v in spec.items() if k not in RESERVED and isinstance(v, list)]
    out = []
    for combo in itertools.product(*(spec[k] for k in keys)):
        e = dict(spec)
        e.update(zip(keys, combo))
        out.append(e)
    return out


def to_json(spec):
    """Canonical JSON of a config entry (sorted keys, no spaces; other objects as ``str``)."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)


def method_id(spec):
    """Stable, file-name safe id: name (a 'module:Class' path with ':' as '-'), plus a short
    hash of its parameters when it has any."""
    name = spec["name"].replace(":", "-")
    params = {k: v for k, v in spec.items() if k != "name"}
    if not params:
        return name
    return f"{name}.{hashlib.sha1(to_json(params).encode()).hexdigest()[:8]}"


def label(spec):
    """Readable label: name(param=value, ...)."""
    params = {k: v for k, v in spec.items() if k != "name"}
    if not params:
        return spec["name"]
    inner = ", ".join(f"{k}={json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v}"
                      for k, v in sorted(params.items()))
    return f"{spec['name']}({inner})"


def method_label(selector, classifier):
    """The ``method`` column of a selector + classifier pair (specs without ``label``)."""
    return f"{label(selector)} + {label(classifier)}"


def entry_methods(selector, classifier):
    """The methods of one selector entry x one classifier entry of a config: every grid point
    pair, with ids; a ``label:`` is taken off the specs (it names, never changes, a method:
    ids, files and fits ignore it) into ``label``, the ``method`` column shown for it."""
    out = []
    for s in expand_grid(selector):
        for c in expand_grid(classifier):
            s0, c0 = ({k: v for k, v in e.items() if k != "label"} for e in (s, c))
            out.append({"selector": s0, "classifier": c0, "selector_id": method_id(s0),
                        "classifier_id": method_id(c0), "label": f"{s.get('label') or label(s0)}"
                        f" + {c.get('label') or label(c0)}"})
    return out


def expand_methods(exp):
    """All (selector entry, classifier entry) pairs of an experiment (defaults filled), with ids
    (:func:`entry_methods`).  Two methods shown under one ``label`` are a ValueError."""
    methods = [m for s in exp["selectors"] for c in exp["classifiers"]
               for m in entry_methods(s, c)]
    shown, names = {}, {}
    for m in methods:
        auto = method_label(m["selector"], m["classifier"])
        shown.setdefault(m["label"], set()).add(auto)
        names.setdefault(auto, set()).add(m["label"])
    for lab, ms in shown.items():
        if len(ms) > 1:
            raise ValueError(f"label {lab!r} names {len(ms)} different methods "
                             f"({'; '.join(sorted(ms))}): labels must be unique (a labelled "
                             "entry with a list-valued parameter gives every grid point its "
                             "label; write one entry per point)")
    for auto, labs in names.items():
        if len(labs) > 1:
            raise ValueError(f"method {auto} is configured twice, as {' and '.join(sorted(labs))}")
    return methods


def method_labels(exp):
    """{automatic ``method`` label: configured label} of the experiment's labelled methods."""
    return {method_label(m["selector"], m["classifier"]): m["label"]
            for m in expand_methods(exp)
            if m["label"] != method_label(m["selector"], m["classifier"])}


def strip_tune(spec):
    """A config entry without its ``tune`` search space."""
    return {k: v for k, v in spec.items() if k != "tune"}


def check_experiment(exp):
    """Experiment-level configuration errors found without data: ``threshold: auto`` where
    its inner folds cannot work (transductive fits, whose unlabeled bags it would not pass;
    per-seed results, each its own classifier)."""
    if exp.get("threshold") != "auto":
        return
    if exp.get("transductive"):
        raise ValueError("threshold: auto cannot be combined with transductive: true (its inner "
                         "folds would fit without the unlabeled bags)")
    for m in expand_methods(exp):
        sel = m["selector"]
        if "per-seed" in [sel.get("combine"), *sel.get("tune", {}).get("combine", [])]:
            raise ValueError(f"selector {sel['name']}: threshold: auto cannot tune per-seed "
                             "results (one classifier per seed); use combine other than per-seed")


def check_method(selector, classifier):
    """Configuration errors of one method, found without data (called when the workflow is
    parsed): unknown names or parameters, ``tune`` keys the estimator lacks, values that an
    estimator's ``_parameter_constraints`` (scikit-learn's declaration) refuses, and an unknown
    single-instance ``estimator`` / ``estimator_params`` — every grid point and nested registry
    entry included. Raises ValueError naming the method and key."""
    for kind, spec in (("selector", selector), ("classifier", classifier)):
        base = {k: (strip_tune(classifier) if v == "@classifier" else v)
                for k, v in spec.items() if k != "tune"}
        try:
            est = make(kind, base)
        except KeyError as e:
            raise ValueError(e.args[0]) from None
        for v in base.values():                  # a nested entry: an ensemble's base, ...
            if isinstance(v, dict) and "name" in v:
                check_method({"name": "none"}, v)
        params = est.get_params(deep=False)
        tune = spec.get("tune", {})
        bad = sorted(set(tune) - set(params))
        if bad:
            raise ValueError(f"{kind} {spec['name']}: tune key(s) {bad} are not parameters; "
                             f"valid: {sorted(params)}")
        for combo in itertools.product(*tune.values()):
            est.set_params(**dict(zip(tune, combo)))
            try:
                validate_params(est)
                if isinstance(est.get_params(deep=False).get("estimator"), str):
                    make_estimator(est.estimator, getattr(est, "estimator_params", None))
            except (ValueError, TypeError, KeyError) as e:
                raise ValueError(f"{kind} {spec['name']}: {e.args[0] if e.args else e}") from None
    per_seed = "per-seed" in [selector.get("combine"), *selector.get("tune", {}).get("combine", [])]
    if per_seed and (selector.get("tune") or classifier.get("tune")):
        raise ValueError(f"selector {selector['name']}: {PER_SEED_UNTUNED}")
