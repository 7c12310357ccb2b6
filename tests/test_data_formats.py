"""Every data format docs/usage.md ("Your own data") documents loads through a config: a tiny
data set of each format in a copy of the workflow passes ``snakemake -n`` up to its scores, and
a real run builds its bags (and scores MI-Simple, 2 folds, on the mat ones); a wrong path names
the data set, the path and what its format expects."""
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import DATA, REPO, copy_workflow

from milbench.data.bags import Bags
from milbench.experiment.config import DIRECTORY_FORMATS, missing_dataset_files
from milbench.testing import toy_bags

N_BAGS, FOLDS = 12, 2
MUSK2 = DATA / "musk" / "musk2_mat"


def _tiny():
    bags, y = toy_bags(n_bags=N_BAGS, d=3, seed=0, max_size=3)
    return bags, np.asarray(y)


def _rows(bag_list, y, row):
    return "".join(row(i, k, x, y[i]) + "\n" for i, b in enumerate(bag_list)
                   for k, x in enumerate(b))


def _feats(x):
    return ",".join(repr(float(v)) for v in x)


def write_csv(d):
    bags, y = _tiny()
    (d / "mine.csv").write_text(_rows(bags, y, lambda i, k, x, lab: f"{lab},b{i},{_feats(x)}"))
    return {"path": "data/mine.csv"}


def write_uci_musk(d):
    bags, y = _tiny()
    (d / "mine.data").write_text(_rows(
        bags, y, lambda i, k, x, lab: f"MOL-{i},{i}_{k},{_feats(x)},{lab}."))
    return {"path": "data/mine.data"}


def write_c45(d):
    bags, y = _tiny()
    (d / "mine.data").write_text(_rows(
        bags, y, lambda i, k, x, lab: f"{i + 1},{k + 1},{_feats(x)},{lab}."))
    (d / "mine.names").write_text("bag_id: " + ",".join(str(i + 1) for i in range(N_BAGS))
                                  + ".\ninst_id: continuous.\n"
                                  + "".join(f"{j + 1}: continuous.\n" for j in range(3)))
    return {"path": "data/mine.data"}


def write_arff(d):
    from milbench.data.arff import write_mi_arff

    bags, y = _tiny()
    write_mi_arff(Bags.from_list(bags, y), d / "mine.arff")
    return {"path": "data/mine.arff"}


def write_mat(d):
    from scipy.io import savemat

    bags, y = _tiny()
    (d / "mine_mat").mkdir()
    savemat(d / "mine_mat" / "X.mat", {"X": np.vstack(bags)})
    savemat(d / "mine_mat" / "Bag2.mat",
            {"Bag2": np.repeat(np.arange(1, N_BAGS + 1), [len(b) for b in bags])[:, None]})
    savemat(d / "mine_mat" / "BagI.mat", {"BagI": y[:, None].astype(float)})
    return {"path": "data/mine_mat"}


def write_parquet(d):
    from milbench.data.store import write_bags

    bags, y = _tiny()
    write_bags(Bags.from_list(bags, y), d / "mine_store")
    return {"path": "data/mine_store"}


WRITERS = {"csv": write_csv, "uci-musk": write_uci_musk, "c45": write_c45, "arff": write_arff,
           "mat": write_mat, "parquet": write_parquet}


def _name(fmt):
    return f"my-{fmt}"


def documented_formats():
    """The formats of docs/usage.md's "Your own data" bullets (``- **fmt** — ...``)."""
    text = (REPO / "docs" / "usage.md").read_text()
    section = text.split("## Your own data", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- \*\*([a-z0-9-]+)\*\* —", section, flags=re.M)


def schema_formats():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return schema["properties"]["datasets"]["additionalProperties"]["properties"]["format"]["enum"]


def test_every_documented_format_is_tested_here():
    assert sorted(documented_formats()) == sorted(schema_formats()) == sorted(WRITERS)


def test_directory_formats_are_what_their_readers_read(tmp_path):
    """The files the path check asks of a directory format are those its reader needs."""
    from milbench.data.sources import SourceError, read_mat
    from milbench.data.store import FILES

    assert DIRECTORY_FORMATS["parquet"] == FILES
    write_mat(tmp_path)
    for f in DIRECTORY_FORMATS["mat"]:
        (tmp_path / "mine_mat" / f).rename(tmp_path / f)
        with pytest.raises(SourceError, match=re.escape(f)):
            read_mat(tmp_path / "mine_mat")
        (tmp_path / f).rename(tmp_path / "mine_mat" / f)
    assert len(read_mat(tmp_path / "mine_mat")) == N_BAGS


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_each_format_passes_the_path_check(tmp_path, fmt):
    (tmp_path / "data").mkdir()
    entry = {"format": fmt, **WRITERS[fmt](tmp_path / "data")}
    assert missing_dataset_files({"datasets": {"mine": entry}}, root=tmp_path) == []


@pytest.mark.parametrize("fmt", sorted(DIRECTORY_FORMATS))
def test_directory_format_path_errors(tmp_path, fmt):
    """A directory format given a file, nothing, or a directory lacking a member: the message
    names the data set, the path and the files the format needs (the missing one first)."""
    (tmp_path / "data").mkdir()
    entry = {"format": fmt, **WRITERS[fmt](tmp_path / "data")}
    given = entry["path"]
    need = DIRECTORY_FORMATS[fmt]

    def msg():
        (m,) = missing_dataset_files({"datasets": {"mine": entry}}, root=tmp_path)
        return m

    (tmp_path / given / need[-1]).unlink()
    assert msg().startswith(f"datasets: mine: directory {given!r} lacks {need[-1]} "
                            f"(format {fmt} needs {', '.join(need)};")
    entry["path"] = "data/elsewhere"
    assert msg().startswith(f"datasets: mine: path 'data/elsewhere' is not a directory (format "
                            f"{fmt} is a directory holding {', '.join(need)}; found nothing there")
    (tmp_path / "data" / "flat").write_text("")
    entry["path"] = "data/flat"
    assert "path 'data/flat' is not a directory" in msg() and "found a file" in msg()
    assert str(tmp_path.resolve()) in msg()


@pytest.mark.parametrize("fmt", sorted(set(WRITERS) - set(DIRECTORY_FORMATS)))
def test_file_format_given_a_directory_is_refused(tmp_path, fmt):
    (tmp_path / "data" / "mine").mkdir(parents=True)
    (m,) = missing_dataset_files({"datasets": {"x": {"format": fmt, "path": "data/mine"}}},
                                 root=tmp_path)
    assert m.startswith(f"datasets: x: path 'data/mine' is not a file (format {fmt} reads a file;")


def test_c45_default_names_file_is_checked(tmp_path):
    (tmp_path / "data").mkdir()
    entry = {"format": "c45", **write_c45(tmp_path / "data")}
    (tmp_path / "data" / "mine.names").unlink()
    (m,) = missing_dataset_files({"datasets": {"x": entry}}, root=tmp_path)
    assert m.startswith("datasets: x: names 'data/mine.names' (the default: path with .names) "
                        "is not a file")


# --- through Snakemake: one config holding a data set of every format (the real musk2 mat copy
# too, where ../shared/data is present).  The dry run plans every one of them up to the scores;
# the real run builds every format's bags (the part that differs by format) and scores
# MI-Simple on the mat data sets (the rest of the pipeline reads only the bag store).


def _experiment(datasets):
    return {"datasets": sorted(datasets),
            "protocol": {"kind": "kfold", "folds": FOLDS, "repeats": 1, "seed": 0},
            "selectors": [{"name": "none"}], "classifiers": [{"name": "mi-simple"}],
            "metrics": ["accuracy"], "stats": [], "figures": []}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A workflow copy with one data set of each format: the dry run's output, then the real
    run's bag metadata and scores."""
    root = copy_workflow(tmp_path_factory.mktemp("formats"))
    (root / "data").mkdir()
    entries = {_name(f): {"format": f, **w(root / "data")} for f, w in WRITERS.items()}
    if MUSK2.is_dir():
        entries["musk2-mat"] = {"format": "mat", "path": str(MUSK2)}
    mats = [n for n, e in entries.items() if e["format"] == "mat"]
    (root / "config.yaml").write_text(yaml.safe_dump({
        "offline": True, "datasets": entries,
        "experiments": {"formats": _experiment(entries), "mat": _experiment(mats)}}))
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--configfile", "config.yaml"]
    dry = subprocess.run(cmd + ["-n", "--", "results/formats/scores.parquet"], cwd=root,
                         capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
    targets = [f"results/bags/{n}/meta.json" for n in entries] + ["results/mat/scores.parquet"]
    real = subprocess.run(cmd + ["--", *targets], cwd=root, capture_output=True, text=True,
                          timeout=600)
    assert real.returncode == 0, real.stdout[-3000:] + real.stderr[-3000:]
    return {"root": root, "dry": dry.stdout,
            "scores": pd.read_parquet(root / "results" / "mat" / "scores.parquet")}


def _meta(run, name):
    return yaml.safe_load((run["root"] / "results" / "bags" / name / "meta.json").read_text())


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_format_runs_through_a_config(run, fmt):
    """The dry run plans the data set's bags and its method job; the real run builds the bags
    (every bag read, labels kept)."""
    name = _name(fmt)
    assert f"results/bags/{name}/meta.json" in run["dry"]
    assert f"results/formats/runs/{name}/none/mi-simple.parquet" in run["dry"]
    meta = _meta(run, name)
    assert (meta["n_bags"], meta["n_positive"]) == (N_BAGS, N_BAGS // 2)
    assert meta["n_instances"] == sum(len(b) for b in _tiny()[0])


def test_mat_data_sets_are_scored(run):
    """MI-Simple's scores of the mat data sets: one row a fold."""
    got = run["scores"].groupby("dataset").size().to_dict()
    want = {n: FOLDS for n in (_name("mat"), "musk2-mat")
            if (run["root"] / "results" / "bags" / n).is_dir()}
    assert got == want


def test_real_musk2_mat_copy_runs_through_a_config(run):
    if not MUSK2.is_dir():
        pytest.skip("../shared/data absent (fresh clone): the real musk2 mat copy is not there")
    meta = _meta(run, "musk2-mat")
    assert (meta["n_bags"], meta["n_instances"], meta["n_positive"]) == (102, 6598, 39)
    assert run["scores"]["dataset"].eq("musk2-mat").sum() == FOLDS
