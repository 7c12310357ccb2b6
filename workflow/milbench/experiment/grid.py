"""Methods from a config: grid expansion, method ids and labels, and the configuration checks
that need no data (run when the workflow is parsed).

Config conventions (workflow/schemas/config.schema.yaml):
* a selector / classifier entry is ``{name: <registry name>, <param>: value, ...}``;
* a list-valued parameter expands into a grid of separate methods (to pass a literal list,
  wrap it: ``[[a, b]]``); dict values are passed whole;
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

RESERVED = ("name", "tune")
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


def expand_methods(exp):
    """All (selector entry, classifier entry) pairs of an experiment (defaults filled), with ids."""
    sels = [e for s in exp["selectors"] for e in expand_grid(s)]
    clfs = [e for c in exp["classifiers"] for e in expand_grid(c)]
    return [{"selector": s, "classifier": c, "selector_id": method_id(s),
             "classifier_id": method_id(c)} for s in sels for c in clfs]


def strip_tune(spec):
    """A config entry without its ``tune`` search space."""
    return {k: v for k, v in spec.items() if k != "tune"}


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
