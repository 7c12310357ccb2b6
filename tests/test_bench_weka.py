"""benchmarks/parity/bench_weka.py: the WEKA command mapping (no java needed) and, where java and
weka.jar are installed, one fold of WEKA against ours on toy bags."""
import importlib
import subprocess
import sys

import pytest

from milbench import registry
from milbench.data.bags import Bags
from milbench.testing import toy_bags

from conftest import REPO

# the script as ``python -m benchmarks.parity.bench_weka`` imports it: from the repository root
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))
bench = importlib.import_module("benchmarks.parity.bench_weka")

# the WEKA multi-instance classifiers our zoo reimplements (those hydr-mi ran)
WEKA_MI = {"MILR", "MIDD", "MIEMDD", "MDD", "CitationKNN", "MISMO", "MIOptimalBall",
           "MIWrapper", "SimpleMI", "MIBoost"}


def test_mapping_covers_every_reimplemented_weka_classifier():
    covered = {argv[0].rsplit(".", 1)[1] for _, argv in bench.CASES.values()}
    assert covered == WEKA_MI
    for label, (spec_, argv) in bench.CASES.items():
        assert argv[0].startswith("weka.classifiers.mi."), label
        assert len(argv[1:]) % 2 == 0, f"{label}: options come in -flag value pairs"
        registry.make("classifier", spec_)           # a valid registry config (names, params)
    assert set(bench.SLOW) <= set(bench.CASES)


def test_mapping_matches_parameters():
    """Where both sides name the same number, it is the same number."""
    opts = {k: dict(zip(a[1::2], a[2::2])) for k, (_, a) in bench.CASES.items()}
    ours = {k: s for k, (s, _) in bench.CASES.items()}
    assert (int(opts["citation-knn"]["-R"]), int(opts["citation-knn"]["-C"])) == \
        (ours["citation-knn"]["references"], ours["citation-knn"]["citers"])
    assert 1 / (2 * float(opts["milr"]["-R"])) == pytest.approx(ours["milr"]["C"])
    assert float(opts["mismo-rbf"]["-K"].split("-G ")[1]) == ours["mismo-rbf"]["gamma"]
    assert int(opts["miboost-stump"]["-R"]) == ours["miboost-stump"]["n_estimators"]
    assert opts["emdd"]["-S"] == str(ours["emdd"]["random_state"])


def test_skips_with_reason_without_weka(monkeypatch, capsys):
    monkeypatch.setattr(bench.shutil, "which", lambda name: None)
    assert bench.main(["--datasets", "musk1"]) == 0
    assert "sudo apt-get install -y weka" in capsys.readouterr().out


def test_one_fold_against_weka(tmp_path):
    found, reason = bench.find_weka()
    if found is None:
        pytest.skip(reason)
    bags, y = toy_bags(n_bags=60, d=3, seed=1)
    data = Bags.from_list(bags, y, bag_ids=[f"b{i}" for i in range(len(bags))],
                          meta={"dataset": "toy"})
    rows = bench.parity(data, ["citation-knn", "mi-optimal-ball"], 1, *found, tmp_path,
                        log=lambda m: None)
    by = {r["classifier"]: r for r in rows}
    assert by["citation-knn"]["test_bags"] == 6
    for k in ("citation-knn", "mi-optimal-ball"):     # exact rules: same label on every bag
        assert by[k]["agreement"] == 1.0, by[k]
        assert by[k]["weka_acc"] == by[k]["ours_acc"]
    assert by["(ZeroR: JVM start-up)"]["cpu_weka_s"] > 0


def test_weka_reads_our_arff(tmp_path):
    """WEKA's own parser accepts the exporter's file (quoted ids included)."""
    found, reason = bench.find_weka()
    if found is None:
        pytest.skip(reason)
    from milbench.data.arff import write_mi_arff
    bags, y = toy_bags(n_bags=6, d=2, seed=4)
    data = Bags.from_list(bags, y, bag_ids=["a b", "it's", "c", "d", "e", "f"])
    path = write_mi_arff(data, tmp_path / "t.arff")
    java, jar = found
    out = subprocess.run([java, "-cp", jar, "weka.core.Instances", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "Num Instances:  6" in out.stdout and "bag_id" in out.stdout
