"""`python -m milbench.experiment.plan`: its counts are the workflow's (the jobs `snakemake -n` plans and
their threads / mem_mb / runtime), fits per cell follow the stated rules, the CPU figure is
process time (a sleeping fit costs none, a stopped one is a lower bound), and the command runs
end to end with its JSON / CSV output."""
import json
import re
import subprocess
import textwrap

import numpy as np
import pytest
import yaml
from test_workflow_e2e import SNAKEMAKE

from milbench.data.folds import fold_keys, make_folds
from milbench.experiment import plan as P
from milbench.experiment.config import with_defaults
from milbench.experiment.grid import expand_methods
from milbench.experiment.plan.measure import draw_tuned
from milbench.testing import toy_bags

from conftest import tiny_config

SLOW = textwrap.dedent('''
    import time
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin
    from milbench.data.bags import check_bags


    class Sleepy(ClassifierMixin, BaseEstimator):
        """Sleeps ``wait`` s (no CPU) and burns ``burn`` s of CPU in fit."""

        def __init__(self, wait=0.0, burn=0.0):
            self.wait = wait
            self.burn = burn

        def fit(self, X, y):
            Xs, _, y01, self.classes_ = check_bags(X, y)
            time.sleep(self.wait)
            t = time.process_time()
            while time.process_time() - t < self.burn:
                np.sqrt(np.arange(1000.0))
            self.n_features_in_ = Xs.shape[1]
            return self

        def decision_function(self, X):
            return np.zeros(len(X))

        def predict(self, X):
            return np.zeros(len(X), int)


    SEEN = set()


    class Pages(Sleepy):
        """Transductive; burns ``burn`` s the first time this process sees a set of pages (its
        bags and the unlabeled ones), as LC-MF factorises the pages once."""

        def fit(self, X, y, unlabeled=None):
            pages = frozenset(X.bag_ids) | frozenset([] if unlabeled is None else unlabeled.bag_ids)
            burn, self.burn = self.burn, self.burn if pages not in SEEN else 0.0
            SEEN.add(pages)
            super().fit(X, y)
            self.burn = burn
            return self
''')


def counted_config():
    """Two experiments: a tuned grid with list-expanded methods and a shared fold stage, and a
    ratio protocol; threads.run 3 so that the ratio experiment's jobs are capped."""
    cfg = tiny_config()
    cfg["threads"] = {"run": 3}
    e = cfg["experiments"]["tiny"]
    e["selectors"] = [{"name": "none"}, {"name": "relieff-mi", "percent": [0.3, 0.6]}]
    e["classifiers"] = [{"name": "milr", "C": [0.5, 1.0]},
                        {"name": "mi-simple", "tune": {"estimator": ["tree", "logistic"]}}]
    e["inner_folds"] = 2
    e["runtime"] = 7
    cfg["experiments"]["ratio"] = {
        "datasets": ["musk1", "elephant"], "runtime": 3,
        "protocol": {"kind": "ratio", "train_ratios": [0.3, 0.5], "repeats": 3, "seed": 0},
        "classifiers": [{"name": "milr", "tune": {"C": [0.1, 1.0, 10.0]}}]}
    return cfg


def test_counts_and_resources_equal_the_workflows_dry_run(tmp_path):
    cfg = counted_config()
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                      str(tmp_path / "config.yaml"), "-n", "--cores", "64"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    jobs = {}                      # (rule, experiment) -> [(threads, mem_mb, runtime)]
    reports = {}                   # experiment -> its folds and report jobs
    for block in re.split(r"\n(?:local)?rule ", res.stdout)[1:]:
        rule = block.split(":")[0]
        wildcard = re.search(r"wildcards: experiment=([\w-]+)", block)
        exp = wildcard and wildcard.group(1)          # None for the data rules
        if rule in ("folds", "check_runs", "scores", "stats", "figures", "reproduction",
                    "feature_coverage"):
            reports[exp] = reports.get(exp, 0) + 1
        if rule not in ("run_method", "fold_stage"):
            continue
        threads = int(re.search(r"threads: (\d+)", block).group(1))
        mem = int(re.search(r"mem_mb=(\d+)", block).group(1))
        runtime = int(re.search(r"runtime=(\d+)", block).group(1))
        jobs.setdefault((rule, exp), []).append((threads, mem, runtime))
    full = with_defaults(cfg)
    for name, exp in full["experiments"].items():
        c = P.count_experiment(name, exp, full["threads"]["run"])
        assert len(jobs[("run_method", name)]) == c["method_jobs"]
        assert len(jobs.get(("fold_stage", name), [])) == c["stage_jobs"]
        assert reports[name] == c["report_jobs"]
        assert set(jobs[("run_method", name)]) == {(c["threads"], c["mem_mb"], c["runtime"])}
        n = len(expand_methods(exp)) * len(exp["datasets"]) * len(fold_keys(exp["protocol"]))
        assert c["cells"] == n
    tiny = P.count_experiment("tiny", full["experiments"]["tiny"], 3)
    ratio = P.count_experiment("ratio", full["experiments"]["ratio"], 3)
    assert (tiny["method_jobs"], tiny["cells"], tiny["stage_jobs"]) == (9, 18, 1)
    assert (tiny["threads"], tiny["mem_mb"], tiny["runtime"]) == (2, 3000, 7)
    assert (ratio["cells"], ratio["threads"], ratio["mem_mb"], ratio["runtime"]) == \
        (12, 3, 4000, 3 * 2)


def test_fits_per_cell_rules():
    exp = with_defaults(counted_config())["experiments"]["tiny"]
    untuned, tuned = expand_methods(exp)[0], expand_methods(exp)[2]
    assert P.fits_per_cell(untuned, exp)[0] == 1
    assert tuned["classifier"]["name"] == "mi-simple"
    assert P.fits_per_cell(tuned, exp) == (2 * 2 + 1, "2 grid x 2 inner folds + 1")
    hydr = {"selector": {"name": "hydr-mi", "n_seeds": 5, "combine": "per-seed", "inner_cv": 3},
            "classifier": {"name": "milr"}}
    assert P.fits_per_cell(hydr, exp, 4000)[0] == 4000 * 3 + 1 + 5
    hydr["selector"].update(fitness="train", combine="best")
    assert P.fits_per_cell(hydr, exp, 100)[0] == 100 + 1
    # threshold: auto repeats a cell on each inner fold, then refits
    thr = {**exp, "threshold": "auto"}
    assert P.fits_per_cell(untuned, thr) == (3, "untuned: 1, x 3 for threshold: auto")
    assert P.fits_per_cell(tuned, thr)[0] == (2 * 2 + 1) * 3


def test_design_is_stratified_and_deterministic():
    rng = np.random.default_rng(0)
    d = P.design([9, 9, 3], 12, rng)
    assert d[:3] == [(4, 4, 1), (0, 0, 0), (8, 8, 2)] and len(set(d)) == 12
    assert d == P.design([9, 9, 3], 12, np.random.default_rng(0))
    counts = np.bincount([t[2] for t in d[3:]], minlength=3)   # balanced after the corners
    assert counts.max() - counts.min() <= 1
    assert sorted(P.design([2, 2], 10, rng)) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_ga_evaluations_surrogate_counts_distinct_chromosomes():
    """The surrogate is a nearest class centroid of the bag means; the count runs HyDR-MI's
    own GA on HyDR-MI's own problem (its filter, inner folds and seeds): deterministic, and the
    distinct chromosomes the GA asked for, as a recording of its fitness calls shows."""
    from milbench.data.bags import stack
    from milbench.selectors.hydr import HyDRMI, _inner_folds

    bags, y = toy_bags(n_bags=30, d=12, seed=1)
    X, offsets = stack(bags)
    y = np.asarray(y).astype(int)
    folds = _inner_folds(y, 3, 0)
    sur = P.Surrogate(np.asarray(X, float), offsets, y, folds)
    cols = np.array([0, 3, 5])
    means = np.array([b.mean(0) for b in bags])[:, cols]     # brute-force nearest centroid
    ref = np.concatenate([np.linalg.norm(means[va] - means[tr][y[tr] == 1].mean(0), axis=1)
                          < np.linalg.norm(means[va] - means[tr][y[tr] == 0].mean(0), axis=1)
                          for tr, va in folds])
    np.testing.assert_array_equal(sur.predict(cols), ref)
    hydr = HyDRMI(population_size=10, n_generations=4, n_seeds=2, random_state=0, k=5, m=10)
    problem = hydr.fitness_problem(bags, y)
    n, chromosomes = P.ga_evaluations(hydr, problem, n_sample=1000)
    assert n == P.ga_evaluations(hydr, problem)
    assert 10 < n <= 2 * 10 * 5                      # seeds x population x (generations + 1)

    class Asked:                                     # every chromosome the GA scores
        def __init__(self):
            self.keys = set()
            self.fitness = problem.fitness(P.Surrogate(problem.X, problem.offsets, problem.y,
                                                       problem.folds))

        def new_run(self):
            self.fitness.new_run()

        def __call__(self, pop):
            self.keys.update(np.packbits(c).tobytes() for c in pop)
            return self.fitness(pop)

    asked = Asked()
    hydr.genetic_runs(asked, problem)
    assert n == len(asked.keys) == len(chromosomes)
    assert {np.packbits(c).tobytes() for c in chromosomes} == asked.keys


def sleepy_config(tmp_path, wait, burn, grid=False):
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "sleepy.py").write_text(SLOW)
    clf = {"name": "sleepy:Sleepy", "wait": wait, "burn": burn}
    if grid:
        clf["tune"] = {"burn": [burn, burn]}
        del clf["burn"]
    cfg = tiny_config()
    cfg["code"] = [str(tmp_path / "code")]
    cfg["experiments"]["tiny"]["classifiers"] = [clf]
    cfg["experiments"]["tiny"]["inner_folds"] = 2
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path / "config.yaml"


def test_cpu_per_fit_is_process_time_not_wall(tmp_path):
    cfg = sleepy_config(tmp_path, wait=0.4, burn=0.2)
    out = P.main([str(cfg), "--seconds", "30", "--draws", "1", "--data", str(tmp_path / "none"),
                  "--json", str(tmp_path / "plan.json")])
    fam = out["experiments"][0]["families"][0]
    assert fam["kind"] == "untuned" and len(fam["draws"]) == 1
    assert 0.2 <= fam["fit_cpu"]["mean"] < 0.4          # the 0.4 s sleep is not counted
    assert fam["cpu"] == pytest.approx(fam["cell_cpu"] * 2)


def test_tuned_draw_times_grid_points_on_the_inner_fold(tmp_path):
    cfg = sleepy_config(tmp_path, wait=0.0, burn=0.1, grid=True)
    out = P.main([str(cfg), "--seconds", "30", "--draws", "1", "--data", str(tmp_path / "none")])
    fam = out["experiments"][0]["families"][0]
    assert fam["fits_per_cell"] == 2 * 2 + 1 and fam["draws"][0]["points"] == 2
    # inner fold = 2 points; a cell = 2 inner folds + the refit, each fit ~0.1 s CPU
    assert 0.45 <= fam["cell_cpu"] <= 0.9


def test_a_transductive_draw_counts_the_work_its_inner_folds_share(tmp_path):
    """Every inner fold and the refit of a transductive cell fit the same pages: a classifier
    that does its work once per page set (LC-MF's factorisation) costs it once a cell, not once
    per inner fold (K x the first fold)."""
    cfg_path = sleepy_config(tmp_path, wait=0.0, burn=0.3, grid=True)
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["experiments"]["tiny"]["classifiers"][0]["name"] = "sleepy:Pages"
    cfg["experiments"]["tiny"]["transductive"] = True
    cfg_path.write_text(yaml.safe_dump(cfg))
    out = P.main([str(cfg_path), "--seconds", "30", "--draws", "1", "--data", str(tmp_path / "none")])
    fam = out["experiments"][0]["families"][0]
    assert fam["fits_per_cell"] == 2 * 2 + 1
    assert 0.25 <= fam["cell_cpu"] <= 0.45          # one burn of 0.3 s; not 2 inner folds' 0.6


def test_a_fit_past_the_limit_is_stopped_and_a_lower_bound(tmp_path):
    cfg = sleepy_config(tmp_path, wait=30, burn=0.0)
    out = P.main([str(cfg), "--seconds", "30", "--fit-limit", "1.5", "--draws", "1",
                  "--data", str(tmp_path / "none")])
    e = out["experiments"][0]
    assert e["families"][0]["lower"] and e["lower"] and out["lower"]
    assert e["families"][0]["cell_cpu"] < 1.0        # asleep: CPU so far, not the 1.5 s waited


def test_command_end_to_end_on_real_data(tmp_path, shared_data):
    cfg = tiny_config()
    cfg["experiments"]["tiny"]["classifiers"][0] = {"name": "milr", "tune": {"C": [0.1, 10.0]}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run([*SNAKEMAKE[:1], "-m", "milbench.experiment.plan", str(tmp_path / "config.yaml"),
                          "--seconds", "40", "--cores", "4", "--data", str(shared_data),
                          "--json", "-", "--csv", str(tmp_path / "plan.csv")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    e = out["experiments"][0]
    assert (e["cells"], e["method_jobs"], e["threads"]) == (4, 2, 2)
    assert [f["fits_per_cell"] for f in e["families"]] == [2 * 5 + 1, 1]
    assert all(f["draws"] and f["fit_cpu"]["mean"] > 0 for f in e["families"])
    assert out["cpu"] > 0 and not out["lower"] and out["wall"] >= out["cpu"] / 4
    assert "data musk1: 92 bags" in res.stderr and "TOTAL est. CPU" in res.stderr
    assert (tmp_path / "plan.csv").read_text().count("\n") == 3


def test_first_draw_is_at_a_middle_training_ratio_and_corners_count_once():
    """A ratio protocol's folds are its training ratios: a family's first draw (the design's
    centre) is at the middle ratio, its corners at the smallest and the largest; and a tuned
    first draw's estimate counts its centre and corners as one grid point each."""
    keys = P.cell_order(fold_keys({"kind": "ratio", "train_ratios": [0.1, 0.2, 0.3, 0.4, 0.5,
                                                                      0.6, 0.7],
                                   "repeats": 30, "seed": 0}))
    first, low, high = (keys[j][1] for _, j in
                        P.design([1, len(keys)], 3, np.random.default_rng(0)))
    assert (first, low, high) == (3, 0, 6)
    method = {"selector": {"name": "none"},
              "classifier": {"name": "milr", "tune": {"C": [0.01, 0.1, 1.0, 10.0, 100.0]}}}
    draw = P.tuned_groups(method, 4, np.random.default_rng(0))
    assert (draw["n_groups"], draw["n_fixed"], len(draw["groups"]), draw["n_shared"]) == \
        (5, 3, 4, 0)
    assert draw["shared_group"] is None
    assert P.tuned_groups(method, 4, np.random.default_rng(0), first=False)["n_fixed"] == 1


@pytest.mark.filterwarnings("ignore:MIDR stopped at max_iter")
@pytest.mark.parametrize("stop,clf_tune", [("total", True), ("excess", True), ("total", False)])
def test_tuned_groups_count_midr_fits_as_its_inner_cv_solves_them(monkeypatch, stop, clf_tune,
                                                                  reuse_on):
    """MIDR's settings with C1 >= C2 share one fit per C2 (one in all with stop="excess"): the
    plan's distinct fits a fold x the inner folds (+ the refit) is what a real inner CV solves,
    its draws hold one setting of each shared fit, and the rest are counted as shared; so too
    when only the selector is tuned (MIDR's own reuse, no pipeline cache)."""
    from milbench.data.bags import Bags
    from milbench.experiment.fold import build_estimator
    from milbench.selectors.midr import FIT_CACHE, MIDR
    grid = [1e-2, 1e-1, 1.0, 10.0]
    sel = {"name": "midr", "dims": 2, "max_iter": 5, "stop": stop,
           "tune": {"C1": grid, "C2": grid}}
    clf = {"name": "milr", "tune": {"C": [0.1, 10.0]}} if clf_tune else {"name": "milr"}
    method = {"selector": sel, "classifier": clf}
    slot = P.selector_fit_slot(sel)

    def slot_of(group):
        return slot(dict((k, v) for (st, k), v in group[0] if st == "select"))
    for first in (True, False):
        draw = P.tuned_groups(method, 4, np.random.default_rng(0), first=first)
        groups = draw["groups"]
        assert (draw["n_groups"], draw["n_shared"]) == \
            ((6 + 4, 6) if stop == "total" else (6 + 1, 9))
        assert (draw["n_fixed"], len(groups)) == \
            ((3 if first and stop == "total" else 1), 4)
        assert len({slot_of(g) for g in groups}) == len(groups)
        shared, served = draw["shared_group"], groups[draw["shared_after"]]
        assert shared != served and slot_of(shared) == slot_of(served)
        assert draw["shared_after"] < draw["n_fixed"]       # always timed
        every = P.tuned_groups(method, 0, np.random.default_rng(0), first=first)["groups"]
        assert len(every) == draw["n_groups"]                # all distinct fits, in turn
    n_fresh = draw["n_groups"]
    solves, solve = [], MIDR._solve
    monkeypatch.setattr(MIDR, "_solve", lambda self, *a: solves.append(1) or solve(self, *a))
    FIT_CACHE.clear()
    bags = Bags.from_list(*toy_bags(n_bags=24, d=5, seed=2))
    build_estimator("minmax", sel, clf, inner_folds=2).fit(bags, bags.labels)
    assert len(solves) == 2 * n_fresh + 1
    assert P.selector_fit_slot({"name": "pca", "tune": {"dims": [1, 2]}}) is None

    # a draw solves each distinct fit it times once and its shared setting not at all (cache
    # hits, as in the run)
    exp = with_defaults(tiny_config())["experiments"]["tiny"]
    exp["inner_folds"] = 2
    ctx = {"bags": bags, "folds": make_folds(bags.bag_ids, bags.labels, exp["protocol"]),
           "exp": exp, "settings": {"protocol": exp["protocol"]}}
    task = {"kind": "tuned", "method": method, "cell": fold_keys(exp["protocol"])[0],
            "stage": False, "soft_cap": 1e9,
            **P.tuned_groups(method, 0, np.random.default_rng(0), first=False)}
    solves.clear()
    FIT_CACHE.clear()
    out = draw_tuned(ctx, task)
    assert len(solves) == len(task["groups"]) + 1                  # + the refit
    n_c = 2 if clf_tune else 1                                       # points a group
    assert out["points_done"] == n_c * len(task["groups"]) == n_c * n_fresh


def test_tuned_draw_times_random_groups_before_its_soft_cap_stops_it():
    """Past its soft cap a first draw still times MIN_RANDOM_GROUPS random groups after the
    centre and the corners (else the corners' mean, or one point, stands for the whole grid),
    fewer when the grid has fewer; a later draw (one fixed group) and a whole-grid draw stop
    after two groups."""
    assert P.MIN_RANDOM_GROUPS == 3
    first = {"n_fixed": 3, "groups": [[()]] * 8, "soft_cap": 10.0}
    assert [P.timed_enough(k, first, 50.0) for k in (2, 3, 4, 5, 6)] == \
        [False, False, False, False, True]
    assert not P.timed_enough(7, first, 5.0)                  # within the cap: go on
    small = {**first, "groups": [[()]] * 4}                   # one random group in the grid
    assert [P.timed_enough(k, small, 50.0) for k in (3, 4)] == [False, True]
    later = {**first, "n_fixed": 1}
    assert [P.timed_enough(k, later, 50.0) for k in (1, 2)] == [False, True]
    whole = {**first, "n_fixed": 8}
    assert P.timed_enough(2, whole, 50.0)
