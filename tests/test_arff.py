"""milbench.data.arff: Bags -> WEKA multi-instance ARFF, read back by milbench.data.sources.read_arff."""
import numpy as np
import pytest

from milbench.data.arff import arff_quote, main, write_mi_arff
from milbench.data.bags import Bags
from milbench.data.sources import read_arff


def _bags(dtype, ids):
    rng = np.random.default_rng(0)
    sizes = [3, 1, 4, 2]
    X = (rng.standard_normal((sum(sizes), 5)) * 10.0 ** rng.integers(-8, 8, (sum(sizes), 5)))
    return Bags(X.astype(dtype), np.r_[0, np.cumsum(sizes)], [1, 0, 1, 0], ids,
                meta={"dataset": "toy set"})


@pytest.mark.parametrize("ids", [["b1", "b2", "b3", "b4"],
                                 ["MUSK-188", "it's", "a, b", 'q"uote\\']])
def test_round_trip_float32_exact(tmp_path, ids):
    bags = _bags(np.float32, ids)
    back = read_arff(write_mi_arff(bags, tmp_path / "t.arff"))
    assert back.bag_ids.tolist() == ids
    assert back.labels.tolist() == bags.labels.tolist()
    np.testing.assert_array_equal(back.offsets, bags.offsets)
    np.testing.assert_array_equal(back.instances, bags.instances)   # bit for bit


def test_float64_values_written_exactly(tmp_path):
    bags = _bags(np.float64, ["a", "b", "c", "d"])
    bags.instances = np.asarray([[0.1 + 1e-12, 1 / 3, -2.5e-300, 7.0, 1e30]] * len(bags.instances))
    text = write_mi_arff(bags, tmp_path / "t.arff").read_text()
    rows = text.split("@data\n")[1].splitlines()
    first = rows[0].split('"')[1].split("\\n")[0].split(",")
    assert [float(v) for v in first] == bags.instances[0].tolist()


def test_header_declares_given_bag_id_domain(tmp_path):
    bags = _bags(np.float32, ["b1", "b2", "b3", "b4"])
    text = write_mi_arff(bags.subset([0, 2]), tmp_path / "t.arff",
                         bag_id_values=bags.bag_ids).read_text()
    assert "@attribute bag_id {b1,b2,b3,b4}" in text
    assert "@relation 'toy set'" in text and text.count("\n  @attribute f") == 5
    with pytest.raises(ValueError, match="not among bag_id_values"):
        write_mi_arff(bags, tmp_path / "u.arff", bag_id_values=["b1"])


def test_quote():
    assert arff_quote("MUSK-188") == "MUSK-188"
    assert arff_quote("a b") == "'a b'" and arff_quote("it's") == "'it\\'s'"
    assert arff_quote("?") == "'?'"


def test_cli_exports_builtin(tmp_path, shared_data, capsys):
    main(["musk1", str(tmp_path / "m.arff"), "--data", str(shared_data)])
    assert "92 bags, 476 instances, 166 features" in capsys.readouterr().out
    back = read_arff(tmp_path / "m.arff")
    assert len(back) == 92 and back.labels.sum() == 47
