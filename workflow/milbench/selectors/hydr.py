"""[hydr-mi] HyDR-MI: ReliefF-MI filter + genetic-algorithm wrapper (Zafra et al. 2013), §3.2-3.3
and §4.1.3 of Zafra, Pechenizkiy & Ventura, Information Sciences (2013).

1. Filter: :class:`~milbench.selectors.relieff.ReliefFMI` (``metric="adapted"`` unless set)
   keeps the top ``percent`` of the features (paper: 50 % for the image sets, 70 % for musk).
2. Wrapper: an elitist generational GA over bit strings (one gene per kept feature, 1 =
   selected), population 100, 50 generations, random initial population, one-point crossover
   with probability 0.9, mutation 0.3, elitism of the best individual (§4.1.3).  Fitness =
   sensitivity × specificity of the *target classifier* (§3.2), estimated by an inner
   stratified ``inner_cv``-fold CV (or a stratified hold-out when ``inner_cv`` is a fraction) on
   the training bags given to ``fit`` — the outer test fold is never seen.
3. ``n_seeds`` independent GA runs (paper: 5 seeds) are combined (``combine``).

Readings of the paper / JCLEC and departures (documented choices):

* **Mutation 0.3 is per chromosome.**  The GA was built with JCLEC (Ventura et al.); its
  generational algorithms (``SG``/``SGE``) wrap the mutator in a ``FilteredMutator`` whose
  ``mutation-prob`` is the probability that an *individual* is passed to the mutator, and the
  crossover likewise in a ``FilteredRecombinator`` (``rec-prob`` per parent pair).  The paper's
  "locus mutation ... selecting all genes with a probability of changing" is JCLEC's
  ``UniformMutator`` (each locus flipped with ``locus-mutation-prob``), whose value the paper does
  not give: we use ``locus_mutation_rate=None`` → 1/L (L = #genes), and flip one random locus
  if none was drawn, so a chromosome selected for mutation always changes.
* Elitism as JCLEC ``SGE``: if the previous generation's best is better than the best child, it
  replaces the worst child — the best fitness is non-decreasing (paper Fig. 6).
* Parent selection is not stated in the paper: binary tournament (``tournament_size=2``).
* The inner estimate is not stated ("sensitivity · specificity estimated by the classifier",
  §3.2): ``fitness="cv"`` (default) uses ``inner_cv=3`` stratified folds (fixed for the whole
  run, so every chromosome is scored on the same split), predictions pooled over the folds;
  ``fitness="train"`` fits the classifier on all training bags and scores those same bags
  (resubstitution: one fit on all bags instead of inner_cv fits on (inner_cv − 1)/inner_cv
  of them; optimistic for flexible classifiers, e.g. an unpruned tree scores 1 on most subsets).
* ``combine``: the paper reports the *average* test result of 5 independent runs; a selector
  must return one subset, so ``"best"`` (default) keeps the best chromosome of the seed with
  the highest inner fitness (ties: fewer features, then lower seed) — i.e. the output of one
  of the paper's runs, picked on training data only — and ``"majority"`` keeps the features
  selected by more than half of the seeds' best chromosomes (falling back to the best seed's
  subset if that is empty; this subset was never scored by the GA, its inner fitness is
  reported as ``hydr_final_fitness``).  ``"per-seed"`` is the paper's protocol: every seed's
  best chromosome is its own result (``result_supports_``; the pipeline refits the classifier
  on each seed's subset and writes one scores row per seed, with a ``seed`` column, which the
  summaries average), while ``support_`` is the ``"best"`` subset; the GA runs (and their
  shared fitness cache) are the same as for the other two.
* Fast path: a classifier may offer ``fitness_evaluator(X, offsets, y, folds)``
  (:class:`~milbench.selectors.fitness.SubsetFitness`; MI-Simple,
  MI-Wrapper, Citation-kNN), which precomputes per inner fold what every chromosome reuses and
  scores a subset by column selection (Citation-kNN: one bag-distance table per subset shared
  by the inner folds); its fitness equals the reference refit path's (:class:`RefitEvaluator`,
  ``fast_fitness=False``) for every chromosome (tested; Citation-kNN under ``fitness="train"``
  against the documented tie rule, which the reference's two tables break by rounding).
* Warm starts (``warm_start=True``, off by default): an iterative classifier with a
  ``warm_fitness_evaluator`` (:class:`~milbench.selectors.fitness.WarmSubsetFitness`; EM-DD,
  MIDD, MDD, MILR) fits a new chromosome, on each inner
  fold, from the model it kept for the closest chromosome (Hamming distance) met earlier in the
  same GA run -- restricted to the child's features, new features started from the data (the
  DD family: a positive instance's value, scale 1; MILR: weight 0) -- plus, for the DD family,
  only ``warm_restarts`` of its usual starting points.  A run's first population is fitted cold
  (every start, as the reference).  The fitness then depends on the run's history, not only on
  the subset, so it is a departure from the paper (faster, measured in
  benchmarks/methods/bench_hydr_ga.py); it stays deterministic and independent of ``n_jobs``.
* Fitness evaluations are independent: each generation's *new* chromosomes are scored in
  parallel (joblib, ``n_jobs``) and every chromosome's fitness is cached (shared across seeds),
  so results do not depend on ``n_jobs``.  A classifier error on a subset gives fitness 0 and is
  counted in ``diagnostics_["hydr_failed_evaluations"]``; the empty subset has fitness 0.

``classifier`` is a registry config dict (e.g. ``{"name": "milr"}`` or
``{"name": "mi-simple", "estimator": "tree"}``, resolved by ``milbench.registry.make``), a
registry name, or an unfitted MIL estimator instance.  A classifier with ``random_state=None``
gets a seed derived from ``random_state``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval

from milbench.base import COUNT, PROBABILITY, FeatureSubsetTransformer, options
from milbench.data.bags import check_bags
from milbench.registry import make
from milbench.selectors.fitness import SubsetFitness, WarmSubsetFitness, offered
from milbench.selectors.relieff import ReliefFMI
from milbench.selectors.stage_store import StageRule, StageStore

COMBINE = ("majority", "best", "per-seed")
FITNESS = ("cv", "train")


# ---------------------------------------------------------------------------------------------
# genetic algorithm (JCLEC SGE-style elitist generational GA on bit strings)
# ---------------------------------------------------------------------------------------------
@dataclass
class GAResult:
    best: np.ndarray                 # (L,) bool, best chromosome of the run
    best_fitness: float
    history: np.ndarray              # (n_generations + 1,) best fitness per generation (0 = init)
    populations: list = field(default_factory=list)  # per generation (P, L) bool, if recorded
    fitnesses: list = field(default_factory=list)    # per generation (P,) float, if recorded


def _better(f_a, n_a, f_b, n_b):
    """Is individual a strictly better than b (fitness, then fewer features)?"""
    return f_a > f_b or (f_a == f_b and n_a < n_b)


def _best_index(fit, pop):
    """Index of the best individual: highest fitness, then fewest genes, then first."""
    key = np.lexsort((np.arange(len(fit)), pop.sum(axis=1), -fit))
    return int(key[0])


def genetic_search(evaluate, n_genes, rng, population_size=100, n_generations=50,
                   crossover_rate=0.9, mutation_rate=0.3, locus_mutation_rate=None,
                   tournament_size=2, record=False):
    """Maximise ``evaluate(pop) -> (P,) fitness`` over bit strings of length ``n_genes``.

    Generational GA: tournament selection, one-point crossover on consecutive parent pairs with
    probability ``crossover_rate``, per-chromosome mutation with probability ``mutation_rate``
    (uniform locus flips at ``locus_mutation_rate``, default 1/L, at least one flip), and
    elitism (the previous best replaces the worst child when no child is as good).
    """
    P, L = int(population_size), int(n_genes)
    q = 1.0 / L if locus_mutation_rate is None else float(locus_mutation_rate)
    pop = rng.random((P, L)) < 0.5
    fit = np.asarray(evaluate(pop), dtype=float)
    history = [float(fit.max())]
    pops, fits = ([pop.copy()], [fit.copy()]) if record else ([], [])
    for _ in range(int(n_generations)):
        # parent selection: tournament (winner = highest fitness, first on ties)
        cand = rng.integers(P, size=(P, int(tournament_size)))
        winners = cand[np.arange(P), np.argmax(fit[cand], axis=1)]
        children = pop[winners].copy()
        # one-point crossover of consecutive pairs
        n_pairs = P // 2
        if L > 1 and n_pairs:
            do = rng.random(n_pairs) < crossover_rate
            cut = rng.integers(1, L, size=n_pairs)
            tail = np.arange(L)[None, :] >= cut[:, None]            # (pairs, L)
            swap = tail & do[:, None]
            a, b = children[0:2 * n_pairs:2].copy(), children[1:2 * n_pairs:2].copy()
            children[0:2 * n_pairs:2] = np.where(swap, b, a)
            children[1:2 * n_pairs:2] = np.where(swap, a, b)
        # mutation: chromosome chosen with mutation_rate, each locus flipped with q
        mutate = rng.random(P) < mutation_rate
        flips = (rng.random((P, L)) < q) & mutate[:, None]
        none = mutate & ~flips.any(axis=1)
        flips[np.flatnonzero(none), rng.integers(L, size=int(none.sum()))] = True
        children ^= flips
        child_fit = np.asarray(evaluate(children), dtype=float)
        # elitism (JCLEC SGE): previous best replaces the worst child if it is better
        ib, ic = _best_index(fit, pop), _best_index(child_fit, children)
        if _better(fit[ib], pop[ib].sum(), child_fit[ic], children[ic].sum()):
            worst = int(np.lexsort((-np.arange(P), -children.sum(axis=1), child_fit))[0])
            children[worst], child_fit[worst] = pop[ib], fit[ib]
        pop, fit = children, child_fit
        history.append(float(fit.max()))
        if record:
            pops.append(pop.copy())
            fits.append(fit.copy())
    ib = _best_index(fit, pop)
    return GAResult(pop[ib].copy(), float(fit[ib]), np.asarray(history), pops, fits)


# ---------------------------------------------------------------------------------------------
# fitness: sensitivity × specificity of the target classifier on inner folds of the training bags
# ---------------------------------------------------------------------------------------------
def sensitivity_specificity(y, pred):
    y, pred = np.asarray(y).astype(bool), np.asarray(pred).astype(bool)
    sens = (y & pred).sum() / max(int(y.sum()), 1)
    spec = (~y & ~pred).sum() / max(int((~y).sum()), 1)
    return float(sens), float(spec)


class RefitEvaluator:
    """The reference fitness path: refit ``clone(classifier)`` on each inner fold's training bags
    restricted to the subset and predict its validation bags (any MIL classifier)."""

    def __init__(self, classifier, X, offsets, y, folds):
        self.classifier, self.X, self.offsets, self.y, self.folds = classifier, X, offsets, y, folds

    def predict(self, cols):
        """Pooled 0/1 predictions on the folds' validation bags (fold order)."""
        bags = np.split(self.X[:, cols], self.offsets[1:-1])
        return np.concatenate([
            np.asarray(clone(self.classifier).fit([bags[i] for i in tr], self.y[tr])
                       .predict([bags[i] for i in va])) > 0
            for tr, va in self.folds])


def fitness_evaluator(classifier, X, offsets, y, folds, fast=True, warm_restarts=None):
    """The subset evaluator HyDR-MI scores chromosomes with: with ``warm_restarts`` (an int),
    the classifier's warm evaluator if it offers one
    (:class:`~milbench.selectors.fitness.WarmSubsetFitness`); with ``fast``, its exact fast
    evaluator if it offers one (:class:`~milbench.selectors.fitness.SubsetFitness`); else the
    reference :class:`RefitEvaluator`.  What a classifier offers is decided by
    :func:`milbench.selectors.fitness.offered` (not inherited past an overridden fit path)."""
    hooks = [(WarmSubsetFitness, (warm_restarts,))] if warm_restarts is not None else []
    if fast:
        hooks.append((SubsetFitness, ()))
    for protocol, extra in hooks:
        hook = offered(classifier, protocol)
        ev = None if hook is None else hook(X, offsets, y, folds, *extra)
        if ev is not None:
            return ev
    return RefitEvaluator(classifier, X, offsets, y, folds)


def _fitness_chunk(evaluator, y_val, masks, sources=None):
    """Fitness of several chromosomes (run in a worker); with ``sources`` (one warm-start state
    or None per mask) through ``evaluator.predict_warm``.  Returns [(fitness, failed, state)]."""
    out = []
    for i, mask in enumerate(masks):
        cols = np.flatnonzero(mask)
        if len(cols) == 0:
            out.append((0.0, False, None))
            continue
        try:
            if sources is None:
                pred, state = evaluator.predict(cols), None
            else:
                pred, state = evaluator.predict_warm(cols, sources[i])
            sens, spec = sensitivity_specificity(y_val, pred)
            out.append((sens * spec, False, state))
        except Exception:  # a subset the classifier cannot handle: worst fitness, counted
            out.append((0.0, True, None))
    return out


class _CachedFitness:
    """Chromosome -> fitness with a cache shared by all GA runs and joblib-parallel scoring.

    Warm starts (an evaluator with ``predict_warm``): the state (fitted model) of every
    chromosome evaluated in the current GA run (:meth:`new_run`) is kept; a new chromosome
    starts from the state of the closest (Hamming distance; ties: fitter, then first seen) of
    them that appeared in an earlier generation of the run -- its parents among them.  Sources
    are fixed before a generation is scored and states are stored after it, so results do not
    depend on the order or parallelism of evaluations within a generation."""

    def __init__(self, evaluator, y_val, parallel, n_workers):
        self.args = (evaluator, y_val)
        self.parallel, self.n_workers = parallel, n_workers
        self.cache = {}
        self.n_evaluations = self.n_hits = self.n_failed = 0
        self.warm = hasattr(evaluator, "predict_warm")
        self.n_warm = 0
        self.new_run()

    def new_run(self):
        """Warm starts come only from chromosomes evaluated in the current GA run (the states
        of earlier runs are dropped: memory stays bounded by one run)."""
        self.states, self.pool_keys, self.pool, self.pool_set = {}, [], [], set()

    def _sources(self, masks):
        """Each mask's warm-start state (None when this run has none yet)."""
        if not self.pool:
            return [None] * len(masks)
        M, T = np.array(self.pool, dtype=float), np.array(masks, dtype=float)
        dist = T.sum(axis=1)[:, None] + M.sum(axis=1)[None, :] - 2.0 * (T @ M.T)
        fit = np.array([self.cache[k] for k in self.pool_keys])
        order = np.arange(len(fit))
        return [self.states[self.pool_keys[np.lexsort((order, -fit, row))[0]]] for row in dist]

    def __call__(self, pop):
        keys = [np.packbits(ind).tobytes() + bytes([len(ind) % 8]) for ind in pop]
        todo, seen = [], set()
        for key, ind in zip(keys, pop):
            if key not in self.cache and key not in seen:
                seen.add(key)
                todo.append((key, ind))
        self.n_hits += len(pop) - len(todo)
        if todo:
            masks = [ind for _, ind in todo]
            src = self._sources(masks) if self.warm else None
            if self.parallel is None or len(masks) == 1:
                res = _fitness_chunk(*self.args, masks, src)
            else:
                n_chunks = min(len(masks), self.n_workers)   # one round trip per worker
                chunks = np.array_split(np.arange(len(masks)), n_chunks)
                parts = self.parallel(
                    delayed(_fitness_chunk)(*self.args, [masks[i] for i in c],
                                            None if src is None else [src[i] for i in c])
                    for c in chunks)
                res = [r for part in parts for r in part]
            for (key, _), (f, failed, state) in zip(todo, res):
                self.cache[key] = f
                self.n_failed += int(failed)
                if state is not None:
                    self.states[key] = state
            self.n_evaluations += len(todo)
            self.n_warm += 0 if src is None else sum(s is not None for s in src)
        if self.warm:                      # this generation becomes a source for the next
            for key, ind in zip(keys, pop):
                if key in self.states and key not in self.pool_set:
                    self.pool_set.add(key)
                    self.pool_keys.append(key)
                    self.pool.append(ind)
        return np.array([self.cache[k] for k in keys])


def _inner_folds(y, inner_cv, seed):
    y = np.asarray(y)
    if isinstance(inner_cv, (float, np.floating)) and 0 < inner_cv < 1:
        sss = StratifiedShuffleSplit(n_splits=1, test_size=float(inner_cv), random_state=seed)
        return list(sss.split(np.zeros(len(y)), y))
    n_min = int(np.bincount(y.astype(int), minlength=2).min())
    k = min(int(inner_cv), n_min)
    if k < 2:
        raise ValueError(f"inner_cv={inner_cv}: a class has only {n_min} training bag(s)")
    return list(StratifiedKFold(k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


@dataclass
class FitnessProblem:
    """Step 2's problem on one set of training bags (:meth:`HyDRMI.fitness_problem`): what
    :meth:`HyDRMI.fit` searches and the planner (:mod:`milbench.experiment.plan`) counts and
    times."""
    seeds: np.ndarray        # the classifier's, ReliefF-MI's, the inner folds', then one a GA run
    relieff: ReliefFMI       # step 1, fitted
    X: np.ndarray            # the stacked training instances on the filter's features
    offsets: np.ndarray
    y: np.ndarray            # 0/1 bag labels
    folds: list              # inner (training, validation) bag indices
    classifier: object       # the target classifier (unfitted)
    evaluator: object        # its subset evaluator (fitness_evaluator)

    @property
    def filter(self):
        """The features step 1 keeps (ReliefF rank order): gene i is feature ``filter[i]``."""
        return np.asarray(self.relieff.support_)

    @property
    def n_genes(self):
        return self.X.shape[1]

    @property
    def run_seeds(self):
        return self.seeds[3:]

    @property
    def y_val(self):
        """The validation bags' labels, pooled in fold order (as evaluators predict them)."""
        return np.concatenate([self.y[va] for _, va in self.folds])

    def fitness(self, evaluator=None, parallel=None, n_workers=1):
        """A chromosome -> fitness function over the GA runs (a cache shared by them, joblib
        ``parallel`` scoring) of this problem's evaluator, or of ``evaluator``, another object
        with the same ``predict(cols)`` (the planner's surrogate)."""
        return _CachedFitness(self.evaluator if evaluator is None else evaluator, self.y_val,
                              parallel, n_workers)


class HyDRMI(FeatureSubsetTransformer):
    """HyDR-MI feature subset selection (see module docstring for the algorithm and choices).

    Parameters
    ----------
    classifier : registry config dict / registry name / MIL estimator; the GA's target
        classifier (default ``{"name": "milr"}``).
    metric, k, m, percent, instance_metric : the ReliefF-MI filter (percent of features kept).
    population_size, n_generations, crossover_rate, mutation_rate, locus_mutation_rate,
    tournament_size : the GA.
    inner_cv : int (stratified folds) or float in (0, 1) (stratified hold-out fraction).
    fitness : "cv" (inner ``inner_cv`` estimate, default) | "train" (the classifier fitted and
        scored on all training bags, a resubstitution estimate).
    n_seeds : independent GA runs; combine : "best" | "majority" | "per-seed".
    fast_fitness : use the classifier's ``fitness_evaluator`` hook when it has one (same
        fitness as the reference refit path, tested); False forces the reference path.
    warm_start : False (default, the paper's setting: every chromosome is fitted from scratch)
        | True: a classifier with a ``warm_fitness_evaluator`` hook (EM-DD, MIDD, MDD, MILR)
        fits a new chromosome from the fitted model of the closest chromosome seen earlier in
        the run (the DD family: plus ``warm_restarts`` of its usual starts).  Faster; the
        fitness is then not a pure function of the subset.  Other classifiers ignore it
        (``hydr_warm_start`` = 0).
    n_jobs : joblib workers for fitness evaluations (None = 1).
    random_state : seeds ReliefF-MI sampling, inner folds, GA runs and the classifier.

    Fold stage (see :mod:`~milbench.selectors.stage_store`): the ReliefF-MI weights of step 1
    (metric, k, m,
    instance_metric and the derived sampling seed); everything else is downstream.
    """

    _stage_rule = StageRule(keep=("metric", "k", "m", "instance_metric", "random_state"),
                            random=True)

    _parameter_constraints = {
        "classifier": [dict, str, HasMethods(["fit", "predict"]), None],
        **{key: ReliefFMI._parameter_constraints[key]
           for key in ("metric", "k", "m", "percent", "instance_metric")},
        "population_size": [Interval(Integral, 2, None, closed="left")],
        "n_generations": COUNT,
        "crossover_rate": PROBABILITY,
        "mutation_rate": PROBABILITY,
        "locus_mutation_rate": [*PROBABILITY, None],
        "tournament_size": COUNT,
        "inner_cv": [Interval(Integral, 2, None, closed="left"),
                     Interval(Real, 0, 1, closed="neither")],
        "n_seeds": COUNT,
        "combine": options(COMBINE),
        "fitness": options(FITNESS),
        "fast_fitness": ["boolean"],
        "warm_start": ["boolean"],
        "warm_restarts": [Interval(Integral, 0, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "stages": [StageStore, None],
    }

    def __init__(self, classifier=None, metric="adapted", k=80, m=180, percent=0.5,
                 instance_metric="manhattan", population_size=100, n_generations=50,
                 crossover_rate=0.9, mutation_rate=0.3, locus_mutation_rate=None,
                 tournament_size=2, inner_cv=3, fitness="cv", n_seeds=5, combine="best",
                 fast_fitness=True, warm_start=False, warm_restarts=2, n_jobs=None,
                 random_state=None, stages=None):
        self.classifier = classifier
        self.metric = metric
        self.k = k
        self.m = m
        self.percent = percent
        self.instance_metric = instance_metric
        self.population_size = population_size
        self.n_generations = n_generations
        self.crossover_rate = crossover_rate
        self.mutation_rate = mutation_rate
        self.locus_mutation_rate = locus_mutation_rate
        self.tournament_size = tournament_size
        self.inner_cv = inner_cv
        self.fitness = fitness
        self.n_seeds = n_seeds
        self.combine = combine
        self.fast_fitness = fast_fitness
        self.warm_start = warm_start
        self.warm_restarts = warm_restarts
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.stages = stages

    def _make_classifier(self, seed):
        spec = {"name": "milr"} if self.classifier is None else self.classifier
        if isinstance(spec, str):
            spec = {"name": spec}
        if isinstance(spec, dict):
            if str(spec.get("name", "")).startswith("@"):
                raise ValueError(f"classifier {spec['name']!r} is a placeholder the pipeline "
                                 "should have replaced with the run's classifier config")
            clf = make("classifier", spec)
        else:
            clf = clone(spec)
        params = clf.get_params()
        if "random_state" in params and params["random_state"] is None:
            clf.set_params(random_state=seed)
        return clf

    def _seeds(self):
        """Seeds of the classifier, ReliefF-MI sampling, inner folds and each GA run."""
        rs = check_random_state(self.random_state)
        return rs.randint(np.iinfo(np.int32).max, size=3 + int(self.n_seeds))

    def _relieff(self, seed):
        return ReliefFMI(self.metric, self.k, self.m, self.percent, self.instance_metric,
                         random_state=seed)

    # fold stage (served through a StageStore): the ReliefF-MI weighting (§3.1), classifier-independent
    def _stage_random_state(self):
        return int(self._seeds()[1])

    def stage_state(self, X, offsets, y):
        """Fold stage (see :mod:`~milbench.selectors.stage_store`): the ReliefF-MI weighting,
        which does not depend on the classifier."""
        return self._relieff(self._stage_random_state()).stage_state(X, offsets, y)

    def fit_filter(self, bags, y, seed=None):
        """Step 1: the ReliefF-MI filter fitted on the training bags ``bags`` (labels ``y``;
        from the fold stage when one serves them); ``seed``: its sampling seed (default the one
        derived from ``random_state``)."""
        X, offsets, y01, _ = check_bags(bags, y)
        return self._fit_filter(X, offsets, y01, seed)

    def _fit_filter(self, X, offsets, y, seed=None):
        relieff = self._relieff(int(self._seeds()[1]) if seed is None else seed)
        # a fold stage of the ReliefF-MI step
        state = None if self.stages is None else self.stages.lookup(self, X, offsets, y)
        if state is None:
            state = relieff.stage_state(X, offsets, y)
        relieff.n_features_in_ = X.shape[1]
        relieff.fit_stage_state(state)
        return relieff

    def fitness_problem(self, bags, y, relieff=None):
        """What step 2's GA optimises on the training bags ``bags`` (labels ``y``), as
        :meth:`fit` builds it: a :class:`FitnessProblem` (seeds, the fitted filter, the
        filtered bags, the inner folds, the target classifier and its subset evaluator).
        ``relieff``: the ReliefF-MI filter already fitted on these bags (:meth:`fit_filter`),
        else fitted here."""
        X, offsets, y01, _ = check_bags(bags, y)
        return self._fitness_problem(X, offsets, y01, relieff)

    def _fitness_problem(self, X, offsets, y, relieff=None):
        seeds = self._seeds()
        clf = self._make_classifier(int(seeds[0]))
        if relieff is None:
            relieff = self._fit_filter(X, offsets, y, int(seeds[1]))
        filt = np.asarray(relieff.support_)
        Xf = np.ascontiguousarray(np.asarray(X, dtype=float)[:, filt])
        y = np.asarray(y).astype(int)
        if self.fitness == "train":      # resubstitution: fit and score on all training bags
            folds = [(np.arange(len(y)), np.arange(len(y)))]
        else:
            folds = _inner_folds(y, self.inner_cv, int(seeds[2]))
        evaluator = fitness_evaluator(clf, Xf, offsets, y, folds, self.fast_fitness,
                                      self.warm_restarts if self.warm_start else None)
        return FitnessProblem(seeds, relieff, Xf, offsets, y, folds, clf, evaluator)

    def genetic_runs(self, fitness, problem):
        """Step 2's ``n_seeds`` GA runs on ``problem`` (one per run seed), scored by
        ``fitness`` (:meth:`FitnessProblem.fitness`; its cache shared by the runs, its
        warm-start pool new in each): their :class:`GAResult` s."""
        runs = []
        for s in problem.run_seeds:
            fitness.new_run()
            runs.append(genetic_search(fitness, problem.n_genes, np.random.default_rng(int(s)),
                                       self.population_size, self.n_generations,
                                       self.crossover_rate, self.mutation_rate,
                                       self.locus_mutation_rate, self.tournament_size))
        return runs

    def _fit(self, X, offsets, y):
        problem = self._fitness_problem(X, offsets, y)
        self.relieff_ = problem.relieff
        filt = problem.filter
        n_workers = effective_n_jobs(self.n_jobs)
        if n_workers > 1:
            with Parallel(n_jobs=n_workers) as parallel:
                fitness = problem.fitness(parallel=parallel, n_workers=n_workers)
                runs = self.genetic_runs(fitness, problem)
        else:
            fitness = problem.fitness()
            runs = self.genetic_runs(fitness, problem)

        masks = np.array([r.best for r in runs])
        fits = np.array([r.best_fitness for r in runs])
        best_seed = int(np.lexsort((np.arange(len(runs)), masks.sum(axis=1), -fits))[0])
        if self.combine == "majority":
            final = masks.sum(axis=0) * 2 > len(runs)
            if not final.any():
                final = masks[best_seed]
        else:                                             # best, per-seed
            final = masks[best_seed]
        final_fitness = float(fitness(final[None])[0])

        self.filter_support_ = filt
        self.feature_importances_ = self.relieff_.feature_importances_
        self.ranking_ = self.relieff_.ranking_
        self.support_ = filt[final]                       # ReliefF rank order is kept
        self.seed_subsets_ = [filt[mk] for mk in masks]
        # per-seed: every seed is its own result (milbench.experiment.fold.run_fold scores each)
        self.result_supports_ = self.seed_subsets_ if self.combine == "per-seed" else None
        self.seed_fitness_ = fits
        self.fitness_history_ = np.array([r.history for r in runs])
        self.best_fitness_ = final_fitness
        self.n_evaluations_ = fitness.n_evaluations
        hist = self.fitness_history_.mean(axis=0)
        self.diagnostics_ = {
            "hydr_n_filter": int(len(filt)),
            "hydr_n_selected": int(final.sum()),
            "hydr_final_fitness": final_fitness,
            "hydr_best_seed_fitness": float(fits.max()),
            "hydr_mean_seed_fitness": float(fits.mean()),
            "hydr_mean_seed_n_features": float(masks.sum(axis=1).mean()),
            "hydr_evaluations": int(fitness.n_evaluations),
            "hydr_cache_hits": int(fitness.n_hits),
            "hydr_failed_evaluations": int(fitness.n_failed),
            "hydr_fast_fitness": int(not (fitness.warm
                                          or isinstance(problem.evaluator, RefitEvaluator))),
            "hydr_warm_start": int(fitness.warm),
            "hydr_warm_evaluations": int(fitness.n_warm),
            **{f"hydr_fitness_g{g:02d}": float(v) for g, v in enumerate(hist)},
            **self.relieff_.diagnostics_,
        }
        if fitness.n_evaluations and fitness.n_failed == fitness.n_evaluations:
            raise RuntimeError("the target classifier failed on every feature subset")
