"""The planner never extrapolates silently: a data set timed on a synthetic stand-in, missing,
or too small for the config gets a WARNING line naming it and the total says what it rests on
(``--strict`` refuses); a draw that raises is reported per family and left out of the
estimate; method names in the table are cut between parameters, never inside one."""
import re
import textwrap

import pytest

from milbench.data.bags import Bags
from milbench.data.store import write_bags
from milbench.experiment import plan as P
from milbench.experiment.config import with_defaults
from milbench.testing import toy_bags

FLAKY = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin
    from milbench.data.bags import check_bags


    class Flaky(ClassifierMixin, BaseEstimator):
        """Raises in fit when ``fail``; else predicts class 0 (``c``: a parameter to tune)."""

        def __init__(self, fail=False, c=1.0):
            self.fail = fail
            self.c = c

        def fit(self, X, y):
            Xs, _, y01, self.classes_ = check_bags(X, y)
            if self.fail:
                raise ValueError("flaky: asked to fail")
            self.n_features_in_ = Xs.shape[1]
            return self

        def decision_function(self, X):
            return np.zeros(len(X))

        def predict(self, X):
            return np.zeros(len(X), int)
''')


def store(root, name, n_bags=40, synthetic=False):
    bags = Bags.from_list(*toy_bags(n_bags=n_bags, seed=1))
    write_bags(bags, root / name, extra_meta={"synthetic": True} if synthetic else None)


def config(tmp_path, datasets, classifiers=None, folds=2, inner_folds=2):
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "flaky.py").write_text(FLAKY)
    return with_defaults({"code": [str(tmp_path / "code")], "experiments": {"toy": {
        "datasets": datasets, "inner_folds": inner_folds,
        "protocol": {"kind": "kfold", "folds": folds, "repeats": 1, "seed": 0},
        "selectors": [{"name": "none"}],
        "classifiers": classifiers or [{"name": "flaky:Flaky"}]}}})


def run_plan(tmp_path, cfg, **kw):
    from milbench.registry import add_code_dirs
    add_code_dirs(cfg["code"])
    lines = []
    out = P.plan(cfg, seconds=20, max_draws=4, bags_root=str(tmp_path / "bags"),
                 log=lines.append, **kw)
    P.report(out, 2, write=lines.append)
    return out, "\n".join(lines)


def test_a_synthetic_store_is_warned_of_and_marks_the_total(tmp_path):
    store(tmp_path / "bags", "toyset@synthetic")
    cfg = config(tmp_path, ["toyset"])
    out, text = run_plan(tmp_path, cfg)
    assert out["data_status"]["toyset"]["status"] == "synthetic"
    warn = [ln for ln in text.splitlines() if ln.startswith("WARNING data set toyset")]
    assert warn and "SYNTHETIC" in warn[0] and "mirror:" in warn[0] and "--data" in warn[0]
    assert out["caveats"] == ["rests on SYNTHETIC data for toyset"]
    assert "the total INCOMPLETE: rests on SYNTHETIC data for toyset" in text
    assert all(r["data"] == "synthetic" and "SYNTHETIC" in r["total_rests_on"]
               for r in P.rows(out))
    with pytest.raises(ValueError, match="toyset is synthetic"):
        P.plan(cfg, seconds=20, bags_root=str(tmp_path / "bags"), strict=True,
               log=lambda *a: None)


def test_a_store_meta_marked_synthetic_is_synthetic(tmp_path):
    store(tmp_path / "bags", "toyset@src-abc", synthetic=True)
    out, _ = run_plan(tmp_path, config(tmp_path, ["toyset"]))
    assert out["data_status"]["toyset"]["status"] == "synthetic"


def test_real_data_has_no_caveat(tmp_path):
    store(tmp_path / "bags", "toyset@src-abc")
    out, text = run_plan(tmp_path, config(tmp_path, ["toyset"]))
    assert out["data_status"]["toyset"]["status"] == "real"
    assert out["caveats"] == [] and out["complete"] and "WARNING" not in text
    assert "rests on the config's real data for every data set" in text


def test_a_missing_data_set_is_named_and_not_counted(tmp_path):
    store(tmp_path / "bags", "toyset@src-abc")
    out, text = run_plan(tmp_path, config(tmp_path, ["toyset", "ghost"]))
    assert out["data_status"]["ghost"]["status"] == "missing"
    assert "1 data set(s) missing (not counted): ghost" in out["caveats"]
    assert any(ln.startswith("WARNING data set ghost: MISSING") for ln in text.splitlines())
    fams = {f["dataset"]: f for f in out["experiments"][0]["families"]}
    assert fams["ghost"]["cpu"] is None and fams["toyset"]["cpu"] > 0
    e = out["experiments"][0]
    assert e["cpu"] == pytest.approx(fams["toyset"]["cpu"] + e["stage_cpu"] + e["fixed_cpu"]
                                     + e["overhead_cpu"])


def test_bags_too_few_for_the_folds_are_warned_of(tmp_path):
    """12 bags in 2 folds: 3 training bags of a class, fewer than a tuned method's 5 inner
    folds (an untuned one needs none)."""
    store(tmp_path / "bags", "toyset@src-abc", n_bags=12)
    untuned, _ = run_plan(tmp_path, config(tmp_path, ["toyset"], inner_folds=5))
    assert untuned["data_status"]["toyset"]["status"] == "real"
    cfg = config(tmp_path, ["toyset"], inner_folds=5,
                 classifiers=[{"name": "flaky:Flaky", "tune": {"c": [1.0, 2.0]}}])
    out, text = run_plan(tmp_path, cfg)
    st = out["data_status"]["toyset"]
    assert st["status"] == "small" and "fewer than its 5 inner folds" in st["why"]
    assert "rests on too few bags for toyset" in out["caveats"]
    assert "WARNING data set toyset: its bags" in text


def test_failed_draws_are_reported_and_left_out(tmp_path):
    """A family of two methods (fail=True, fail=False) over two cells: four draws, the two of
    the failing method fail; the estimate is the mean of the two that ran."""
    store(tmp_path / "bags", "toyset@src-abc")
    cfg = config(tmp_path, ["toyset"], classifiers=[{"name": "flaky:Flaky",
                                                     "fail": [True, False]}])
    out, text = run_plan(tmp_path, cfg)
    fam = out["experiments"][0]["families"][0]
    assert fam["failed_draws"] == 2 and len(fam["draws"]) == 2
    assert all(d["method"] == 1 for d in fam["draws"])
    assert {f["method"] for f in fam["failed"]} == {0}
    assert fam["cell_cpu"] == pytest.approx(sum(d["cell_cpu"] for d in fam["draws"]) / 2)
    assert "2 of 4 draws failed (not counted): ValueError: flaky: asked to fail" in text
    assert out["complete"]
    row = P.rows(out)[0]
    assert row["failed_draws"] == 2 and "flaky" in row["failure"]


def test_a_family_whose_every_draw_fails_is_unknown(tmp_path):
    store(tmp_path / "bags", "toyset@src-abc")
    cfg = config(tmp_path, ["toyset"], classifiers=[{"name": "flaky:Flaky", "fail": True},
                                                    {"name": "flaky:Flaky"}])
    out, text = run_plan(tmp_path, cfg)
    bad, good = out["experiments"][0]["families"]
    assert bad["unknown"] and bad["cpu"] is None and bad["failed_draws"] == 2
    assert good["cpu"] is not None and not out["complete"]
    assert any("every draw failed" in c for c in out["caveats"])
    assert re.search(r"flaky:Flaky\(fail=True\)\s+toyset.*unknown", text)


def test_long_method_names_are_cut_between_parameters():
    clf = {"name": "milr", "C": 1.0, "tol": 0.0001, "max_iter": 1000, "solver": "lbfgs",
           "penalty": "l2", "fit_intercept": True}
    full = "none + " + P.counting.label(clf)
    for width in (20, 30, 45, 60):
        short = P.shorten(full, width)
        assert len(short) <= width
        head, tail = short.split(" ... ")
        assert full.startswith(head) and full.endswith(tail)
        assert not head or head[-1] in " ,(" or full[len(head)] in " ,"  # after a separator
        assert full[-len(tail) - 1] in " ,("
    cfg = with_defaults({"offline": True, "experiments": {"toy": {
        "datasets": ["musk1"], "protocol": {"kind": "kfold", "folds": 2, "repeats": 1, "seed": 0},
        "selectors": [{"name": "relieff-mi", "percent": 0.3, "k": 10, "m": 20}],
        "classifiers": [clf]}}})
    lines = []
    P.report(P.plan(cfg, measure=False), 2, write=lines.append)
    row = next(ln for ln in lines if "musk1" in ln and "relieff" in ln).strip()
    lab = re.split(r"\s{2,}", row)[0]
    head, tail = lab.split(" ... ")
    assert tail.endswith("tol=0.0001)") and not head.endswith(("=", "0.")), lab
