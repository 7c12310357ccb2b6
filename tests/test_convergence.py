"""Convergence is never silent: every iterative method reports
``diagnostics_["converged"]`` (1 or 0, a Python int: bools are dropped when scores are
aggregated) and ``diagnostics_["n_iter"]`` (its own outer iteration count), and a fit that stops
at its cap warns with scikit-learn's ConvergenceWarning naming the class, the cap and the
parameter to raise."""
import warnings
from importlib import import_module

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from milbench import registry
from milbench.classifiers.diverse_density import EMDD, MDD, MIDD
from milbench.classifiers.ensembles import MIAdaBoost
from milbench.classifiers.kisvm import KISVM
from milbench.classifiers.lcmf import LCMF
from milbench.classifiers.miboost import MIBoost
from milbench.classifiers.milr import MILR
from milbench.classifiers.milsd import MILSD
from milbench.classifiers.miordm import MIORDM
from milbench.classifiers.mirsvm import MIRSVM
from milbench.classifiers.misvm import MISVM, MiSVM
from milbench.classifiers.odm import ODM
from milbench.classifiers.set_kernel import SetKernelSVM
from milbench.selectors.cvfs import CVFS
from milbench.selectors.midr import MIDR
from milbench.testing import toy_bags


def easy():
    """30 bags, 4 features; a positive bag's witness is shifted by 6 in feature 0."""
    return toy_bags(n_bags=30, d=4, seed=0, witness_shift=6.0)


def fit(est, bags, y):
    if isinstance(est, ODM):                    # single-instance: one instance per bag
        return est.fit(np.vstack([b[:1] for b in bags]), y)
    return est.fit(bags, y)


# (estimator stopped at its cap, cap parameter, cap, diagnostic that counts what the cap
# bounds: it must equal the cap; None where the cap bounds an inner loop whose count per
# round is not reported -- MIORDM's sweeps per round)
CAPPED = [
    (MiSVM(max_iter=1), "max_iter", 1, "n_iter"),                      # SVM fits
    (MISVM(max_iter=1), "max_iter", 1, "n_iter"),                      # SVM fits
    (KISVM(max_iter=1), "max_iter", 1, "n_iter"),                      # SVM fits
    (MIRSVM(max_iter=1, init="mean"), "max_iter", 1, "n_iter"),        # SVM fits
    (MIORDM(max_rounds=1), "max_rounds", 1, "n_iter"),                 # rounds
    (MIORDM(max_sweeps=1, newton_every=0), "max_sweeps", 1, None),     # DCD sweeps per round
    (ODM(max_sweeps=1, newton_every=0), "max_sweeps", 1, "n_iter"),    # DCD sweeps
    (MILR(max_iter=2), "max_iter", 2, "n_iter"),                       # L-BFGS-B iterations
    (MIDD(max_iter=2, n_refine=None, random_state=0), "max_iter", 2, "n_iter"),
    (MDD(max_iter=2, n_refine=None, random_state=0), "max_iter", 2, "n_iter"),
    (EMDD(max_em_iter=1, random_state=0), "max_em_iter", 1, "n_iter"),  # EM rounds
    (LCMF(n_factors=3, max_iter=2, random_state=0), "max_iter", 2, "n_iter"),
    (MILSD(mu=0.0, max_cccp=1), "max_cccp", 1, "n_iter"),              # CCCP rounds
    (MILSD(mu=0.0, max_cp=1), "max_cp", 1, "cp_iterations_max"),       # cutting-plane its
    (MIDR(dims=2, max_iter=2), "max_iter", 2, "n_iter"),               # outer iterations
    (CVFS(m=2, max_iter=1), "max_iter", 1, "n_iter"),                  # T-steps
]

# default fits that converge on the easy set (MIDR: its default C1 = 0.01 needs 124 iterations
# here, more than the default max_iter = 100, so this one raises the cap)
DEFAULT = [MiSVM(), MISVM(), KISVM(), MIRSVM(random_state=0), MIORDM(random_state=0),
           ODM(random_state=0), MILR(), MIDD(random_state=0), MDD(random_state=0),
           EMDD(random_state=0), LCMF(n_factors=3, random_state=0), MILSD(mu=0.0),
           SetKernelSVM(), MIBoost(random_state=0), MIAdaBoost(random_state=0),
           MIDR(dims=2, max_iter=300), CVFS(m=2)]

CAP_NAMES = {"max_iter", "max_rounds", "max_sweeps", "max_em_iter", "max_cccp", "max_cp"}


def label(v):
    return type(v).__name__ if hasattr(v, "fit") else str(v)


@pytest.mark.parametrize("est, param, cap, counted", CAPPED, ids=label)
def test_fit_stopped_at_its_cap_warns_and_says_so(est, param, cap, counted):
    bags, y = easy()
    est = clone(est)
    with pytest.warns(ConvergenceWarning, match=rf"^{type(est).__name__} stopped at "
                                                rf"{param}={cap} .*; raise {param}$"):
        fit(est, bags, y)
    d = est.diagnostics_
    assert type(d["converged"]) is int and d["converged"] == 0
    assert type(d["n_iter"]) is int
    if counted is not None:
        assert d[counted] == cap


@pytest.mark.parametrize("est", DEFAULT, ids=label)
def test_default_fit_on_an_easy_set_converges_silently(est):
    bags, y = easy()
    est = clone(est)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit(est, bags, y)
    d = est.diagnostics_
    assert type(d["converged"]) is int and d["converged"] == 1
    assert type(d["n_iter"]) is int and d["n_iter"] >= 1


@pytest.mark.parametrize("Cls", [MiSVM, MISVM])
def test_last_allowed_fit_that_settles_counts_as_converged(Cls):
    """A cap equal to the fits a converged run needed gives the same model, converged, no
    warning: MI-SVM checks the witnesses of its last allowed fit before giving up."""
    bags, y = easy()
    ref = Cls().fit(bags, y)
    n = ref.diagnostics_["n_iter"]
    assert ref.diagnostics_["converged"] == 1 and n >= 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = Cls(max_iter=n).fit(bags, y)
    assert m.diagnostics_["converged"] == 1 and m.diagnostics_["n_iter"] == n
    np.testing.assert_array_equal(m.decision_function(bags), ref.decision_function(bags))
    with pytest.warns(ConvergenceWarning, match=f"{Cls.__name__} stopped at max_iter={n - 1}"):
        short = Cls(max_iter=n - 1).fit(bags, y)
    assert short.diagnostics_["converged"] == 0


def test_every_registered_method_with_an_iteration_cap_is_covered():
    covered = {type(est) for est, *_ in CAPPED}
    missing = []
    for kind, table in (("selector", registry.SELECTORS), ("classifier", registry.CLASSIFIERS)):
        for name, path in table.items():
            module, cls = path.split(":")
            Cls = getattr(import_module(module), cls)
            if CAP_NAMES & set(Cls().get_params(deep=False)) and Cls not in covered:
                missing.append(f"{kind} {name}")
    assert missing == []
