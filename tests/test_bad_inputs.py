"""Bad input never gives a silent wrong result or an unnamed traceback: each case asserts the
error type and that the message names the file (and line) or the experiment and key."""
import gzip
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.io import savemat
from test_workflow_e2e import SNAKEMAKE, e2e_config

from milbench.data.bags import Bags
from milbench.data.sources import SourceError, read_any
from milbench.data.store import write_bags
from milbench.experiment.config import load_config
from milbench.experiment.grid import check_experiment, check_method, expand_methods
from milbench.registry import CLASSIFIERS, SELECTORS, make

from conftest import REPO, toy_bags

ARFF_HEAD = """@relation t
@attribute bag_id {b1,b2}
@attribute bag relational
  @attribute f1 numeric
  @attribute f2 numeric
@end bag
@attribute class CLASSES
@data
"""


def arff(classes, rows):
    return ARFF_HEAD.replace("CLASSES", classes) + "".join(r + "\n" for r in rows)


MUSK_NAMES = "bag_id: b.\ninst_id: i.\n1: continuous.\n2: continuous.\n"

# (case id, format, {file name: text}, reader kwargs, error regex: file and line named)
FILE_CASES = [
    ("csv-bag-not-contiguous", "csv", {"d.csv": "1,a,1,2\n0,b,1,2\n1,a,3,4\n"}, {},
     r"d.csv, line 3: bag 'a' appears again \(its rows began at line 1"),
    ("csv-mixed-labels", "csv", {"d.csv": "1,a,1,2\n0,a,1,2\n0,b,3,4\n"}, {},
     r"d.csv, line 2: bag 'a' has instances of both labels"),
    ("csv-non-numeric", "csv", {"d.csv": "1,a,1,2\n0,b,1,oops\n"}, {},
     r"d.csv, line 2: feature 2 = 'oops'"),
    ("csv-inf", "csv", {"d.csv": "1,a,1,2\n0,b,inf,2\n"}, {}, r"d.csv, line 2: feature 1 .*inf"),
    ("csv-float32-overflow", "csv", {"d.csv": "1,a,1,2\n0,b,1e40,2\n"}, {},
     r"d.csv, line 2: feature 1 = 1e\+40: beyond the float32 range"),
    ("csv-label-3", "csv", {"d.csv": "1,a,1,2\n3,b,1,2\n"}, {},
     r"d.csv, line 2: label \(column 1\) must be one of 0, 1, -1, got 3"),
    ("csv-label-text", "csv", {"d.csv": "1,a,1,2\npos,b,1,2\n"}, {}, r"d.csv, line 2: label"),
    ("csv-line-after-blank-lines", "csv", {"d.csv": "1,a,1,2\n\n\n0,b,x,2\n"}, {},
     r"d.csv, line 4: feature 1"),
    ("csv-short-row", "csv", {"d.csv": "1,a,1,2\n0,b,1\n"}, {},
     r"d.csv, line 2: feature 2 = nan: missing"),
    ("csv-two-columns", "csv", {"d.csv": "1,a\n0,b\n"}, {}, r"d.csv: expected columns label, bag"),
    ("csv-empty", "csv", {"d.csv": ""}, {}, r"d.csv: cannot parse as CSV"),
    ("musk-given-label-bag-csv", "uci-musk", {"m.data": "1,a,1,2\n0,b,1,2\n"}, {},
     r"m.data, line 1: the first column holds only 0/1.*format csv"),
    ("musk-class-not-binary", "uci-musk", {"m.data": "M1,c1,1,2,1\nM2,c1,1,2,0.53\n"}, {},
     r"m.data, line 2: class \(last column\) must be one of 0, 1, got 0.53"),
    ("musk-molecule-not-contiguous", "uci-musk",
     {"m.data": "M1,c1,1,2,1\nM2,c1,1,2,0\nM1,c2,1,2,1\n"}, {}, r"m.data, line 3: bag 'M1'"),
    ("musk-ragged", "uci-musk", {"m.data": "M1,c1,1,2,1.\nM1,c2,1,2\n"}, {},
     r"m.data, line 2: expected 5 columns"),
    ("musk-mixed-labels", "uci-musk", {"m.data": "M1,c1,1,2,1\nM1,c2,1,2,0\n"}, {},
     r"m.data, line 2: bag 'M1' has instances of both labels"),
    ("c45-no-names", "c45", {"e.data": "1,1,0.5,0.2,1.\n"}, {}, r"e.names: not found"),
    ("c45-names-without-ids", "c45", {"e.data": "1,1,0.5,0.2,1.\n", "e.names": "1: continuous.\n"},
     {}, r"e.names: expected bag_id and inst_id"),
    ("c45-feature-count", "c45", {"e.data": "1,1,0.5,1.\n", "e.names": MUSK_NAMES}, {},
     r"e.data: 1 feature columns but .*e.names names 2"),
    ("c45-label-2", "c45", {"e.data": "1,1,0.5,0.2,1.\n2,1,0.5,0.2,2.\n", "e.names": MUSK_NAMES},
     {}, r"e.data, line 2: label \(last column\)"),
    ("c45-bag-not-contiguous", "c45",
     {"e.data": "1,1,0.5,0.2,1.\n2,1,0.5,0.2,0.\n1,2,0.5,0.2,1.\n", "e.names": MUSK_NAMES}, {},
     r"e.data, line 3: bag '1' appears again"),
    ("arff-ambiguous-classes", "arff", {"x.arff": arff("{a,b}", ['b1,"1,2",a', 'b2,"3,4",b'])}, {},
     r"x.arff, line 7: class values \['a', 'b'\]: cannot tell which is positive"),
    ("arff-two-positive-spellings", "arff",
     {"x.arff": arff("{yes,true}", ['b1,"1,2",yes', 'b2,"3,4",true'])}, {},
     r"x.arff, line 7: class values .* cannot tell"),
    ("arff-undeclared-class", "arff", {"x.arff": arff("{0,1}", ['b1,"1,2",1', 'b2,"3,4",2'])}, {},
     r"x.arff, line 10: class '2' is not among the declared values \['0', '1'\] \(line 7\)"),
    ("arff-declared-positive-missing", "arff",
     {"x.arff": arff("{a,b}", ['b1,"1,2",a', 'b2,"3,4",b'])}, {"positive": "c"},
     r"x.arff, line 7: class values \['a', 'b'\]; expected two, one of them the declared"),
    ("arff-instance-arity", "arff", {"x.arff": arff("{0,1}", ['b1,"1,2",1', 'b2,"3",0'])}, {},
     r"x.arff, line 10: expected 2 values per instance"),
    ("arff-non-numeric-value", "arff", {"x.arff": arff("{0,1}", ['b1,"1,z",1', 'b2,"3,4",0'])},
     {}, r"x.arff, line 9: malformed multi-instance row"),
    ("arff-overflow", "arff", {"x.arff": arff("{0,1}", ['b1,"1,1e40",1', 'b2,"3,4",0'])}, {},
     r"x.arff, line 9: feature 2 .*float32"),
    ("arff-no-data", "arff", {"x.arff": arff("{0,1}", [])}, {}, r"x.arff: no @data rows"),
    ("arff-empty-bag", "arff", {"x.arff": arff("{0,1}", ['b1,"",1', 'b2,"3,4",0'])}, {},
     r"x.arff, line 9: bag 'b1' has no instances"),
    ("unknown-format", "xlsx", {"d.csv": "1,a,1,2\n"}, {}, r"unknown format 'xlsx'"),
]


def _write(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path / next(iter(files))


@pytest.mark.parametrize("case, fmt, files, kw, message", FILE_CASES,
                         ids=[c[0] for c in FILE_CASES])
def test_bad_text_file_is_named(tmp_path, case, fmt, files, kw, message):
    path = _write(tmp_path, files)
    with pytest.raises(SourceError, match=message):
        read_any(fmt, path, **kw)


# (case id, format, {file: text}, reader kwargs, expected bag labels)
ACCEPTED = [
    ("arff-yes-no", "arff", {"x.arff": arff("{no,yes}", ['b1,"1,2",yes', 'b2,"3,4",no'])}, {},
     [1, 0]),
    ("arff-Positive-Negative", "arff",
     {"x.arff": arff("{Negative,Positive}", ['b1,"1,2",Negative', 'b2,"3,4",Positive'])}, {},
     [0, 1]),
    ("arff-quoted-minus-one", "arff",
     {"x.arff": arff("{'-1','+1'}", ["b1,\"1,2\",'+1'", "b2,\"3,4\",'-1'"])}, {}, [1, 0]),
    ("arff-declared-positive", "arff", {"x.arff": arff("{a,b}", ['b1,"1,2",a', 'b2,"3,4",b'])},
     {"positive": "b"}, [0, 1]),
    ("csv-mixed-labels-as-max", "csv", {"d.csv": "0,a,1,2\n1,a,1,2\n0,b,3,4\n"},
     {"mixed_labels": "max"}, [1, 0]),
    ("csv-minus-one-and-blank-lines", "csv", {"d.csv": "\n1,a,1,2\n\n-1,b,3,4\n"}, {}, [1, 0]),
]


@pytest.mark.parametrize("case, fmt, files, kw, labels", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_documented_spellings_load_exactly(tmp_path, case, fmt, files, kw, labels):
    bags = read_any(fmt, _write(tmp_path, files), **kw)
    assert bags.labels.tolist() == labels


@pytest.fixture
def mat_dir(tmp_path):
    rng = np.random.default_rng(0)
    savemat(tmp_path / "X.mat", {"X": rng.random((5, 2))})
    savemat(tmp_path / "Bag2.mat", {"Bag2": np.array([[1, 1, 2, 2, 2]]).T})
    savemat(tmp_path / "BagI.mat", {"BagI": np.array([[1, -1]]).T})
    return tmp_path


def test_mat_reference_loads(mat_dir):
    bags = read_any("mat", mat_dir)
    assert bags.sizes.tolist() == [2, 3] and bags.labels.tolist() == [1, 0]


MAT_CASES = [
    ("truncated", lambda d: (d / "X.mat").write_bytes((d / "X.mat").read_bytes()[:100]),
     r"X.mat: cannot read as a MATLAB file"),
    ("missing", lambda d: (d / "Bag2.mat").unlink(), r"Bag2.mat: missing"),
    ("bag-id-range", lambda d: savemat(d / "Bag2.mat", {"Bag2": np.array([[1, 1, 2, 2, 3]]).T}),
     r"Bag2.mat: bag ids must be in 1..2"),
    ("label-2", lambda d: savemat(d / "BagI.mat", {"BagI": np.array([[1, 2]]).T}),
     r"BagI.mat, row 2: bag label must be one of 0, 1, -1, got 2"),
    ("two-variables", lambda d: savemat(d / "X.mat", {"X": np.ones((5, 2)), "Y": 1}),
     r"X.mat: expected one variable"),
    ("nan", lambda d: savemat(d / "X.mat", {"X": np.r_[np.ones((4, 2)), [[np.nan, 1]]]}),
     r"X.mat, row 5: feature 1 = nan"),
]


@pytest.mark.parametrize("case, damage, message", MAT_CASES, ids=[c[0] for c in MAT_CASES])
def test_bad_mat_is_named(mat_dir, case, damage, message):
    damage(mat_dir)
    with pytest.raises(SourceError, match=message):
        read_any("mat", mat_dir)


@pytest.fixture
def store(tmp_path):
    return write_bags(Bags.from_list(*toy_bags(n_bags=6, seed=1)), tmp_path / "store")


def _truncate(f, n=200):
    f.write_bytes(f.read_bytes()[:n])


STORE_CASES = [
    ("single-file", lambda s: s / "instances.parquet",
     r"instances.parquet: expected a bag-store directory .* found a file"),
    ("missing-file", lambda s: (s / "bags.parquet").unlink(), r"store: bag store lacks bags.parquet"),
    ("renamed-file", lambda s: (s / "bags.parquet").rename(s / "bag.parquet") and None,
     r"store: bag store lacks bags.parquet"),
    ("truncated", lambda s: _truncate(s / "instances.parquet"), r"instances.parquet: cannot read"),
    ("bad-meta", lambda s: (s / "meta.json").write_text("{") and None,
     r"meta.json: not a bag-store meta file"),
    ("gzip-not-parquet", lambda s: (s / "bags.parquet").write_bytes(gzip.compress(b"x")) and None,
     r"bags.parquet: cannot read"),
    ("meta-without-views", lambda s: (s / "meta.json").write_text(json.dumps({"n": 1})) and None,
     r"meta.json: not a bag-store meta file \(KeyError"),
]


@pytest.mark.parametrize("case, damage, message", STORE_CASES, ids=[c[0] for c in STORE_CASES])
def test_bad_store_is_named(store, case, damage, message):
    path = damage(store) or store
    with pytest.raises(SourceError, match=message):
        read_any("parquet", path)


def test_missing_path_is_named(tmp_path):
    with pytest.raises(SourceError, match=r"nowhere.csv: not found"):
        read_any("csv", tmp_path / "nowhere.csv")


# ------------------------------------------------------------------ configuration mistakes
METHOD_CASES = [
    ("unknown-classifier", {"name": "none"}, {"name": "milrr"}, r"unknown classifier 'milrr'"),
    ("unknown-parameter", {"name": "none"}, {"name": "milr", "Cc": 1},
     r"unknown parameter\(s\) \['Cc'\]"),
    ("unknown-tune-key", {"name": "none"}, {"name": "milr", "tune": {"Q": [1]}},
     r"classifier milr: tune key\(s\) \['Q'\] are not parameters"),
    ("negative-C", {"name": "none"}, {"name": "milr", "C": -1},
     r"classifier milr: The 'C' parameter of MILR must be a float in the range \(0.0, inf\)"),
    ("negative-C-in-grid", {"name": "none"}, {"name": "mi-svm", "tune": {"C": [1, 0]}},
     r"classifier mi-svm: The 'C' parameter"),
    ("theta-above-1", {"name": "none"}, {"name": "miordm", "theta": 1.5}, r"'theta' parameter"),
    ("keep-fraction-above-1", {"name": "relieff-mi", "percent": 1.5}, {"name": "milr"},
     r"selector relieff-mi: The 'percent' parameter"),
    ("unknown-kernel", {"name": "none"}, {"name": "kisvm", "kernel": "rbff"}, r"'kernel' parameter"),
    ("unknown-estimator", {"name": "none"}, {"name": "mildm", "estimator": "knnn"},
     r"classifier mildm: unknown estimator 'knnn'"),
    ("unknown-estimator-param", {"name": "none"},
     {"name": "mi-simple", "estimator": "tree", "estimator_params": {"depth": 2}}, r"depth"),
    ("unknown-selector", {"name": "pcaa"}, {"name": "milr"}, r"unknown selector 'pcaa'"),
    ("import-path-not-importable", {"name": "none"}, {"name": "no_such_module:MyMIL"},
     r"classifier 'no_such_module:MyMIL': cannot import it \(ModuleNotFoundError"),
    ("import-path-not-a-classifier", {"name": "none"},
     {"name": "sklearn.preprocessing:StandardScaler"},
     r"is not a scikit-learn style classifier: it lacks predict, decision_function or predict_proba"),
    ("probability-above-1", {"name": "hydr-mi", "classifier": "@classifier", "mutation_rate": 1.5},
     {"name": "mi-simple"}, r"selector hydr-mi: The 'mutation_rate' parameter"),
    ("per-seed-tuned", {"name": "hydr-mi", "classifier": "@classifier", "combine": "per-seed"},
     {"name": "mi-simple", "tune": {"statistic": ["minmax", "mean"]}},
     r"selector hydr-mi: per-seed results cannot be tuned"),
    ("zero-members", {"name": "none"}, {"name": "mi-bagging", "n_estimators": 0},
     r"classifier mi-bagging: The 'n_estimators' parameter"),
    ("nested-base-unknown-parameter", {"name": "none"},
     {"name": "mi-bagging", "base": {"name": "mi-wrapper", "estimatr": "tree"}},
     r"classifier MIWrapper: unknown parameter\(s\) \['estimatr'\]"),
]


@pytest.mark.parametrize("case, selector, classifier, message", METHOD_CASES,
                         ids=[c[0] for c in METHOD_CASES])
def test_method_mistake_is_named(case, selector, classifier, message):
    with pytest.raises(ValueError, match=message):
        check_method(selector, classifier)


def test_registry_defaults_satisfy_their_constraints():
    for kind, table in (("selector", SELECTORS), ("classifier", CLASSIFIERS)):
        for name in table:
            check_method(*(({"name": name}, {"name": "milr"}) if kind == "selector"
                           else ({"name": "none"}, {"name": name})))
            make(kind, {"name": name})


@pytest.mark.parametrize("path", sorted((REPO / "config").rglob("*.yaml")),
                         ids=lambda p: str(p.relative_to(REPO / "config")))
def test_shipped_configs_pass_the_method_check(path):
    for exp in load_config(path)["experiments"].values():
        for m in expand_methods(exp):
            check_method(m["selector"], m["classifier"])


DRY_RUN_CASES = [
    ("unknown-dataset", lambda e: e.update(datasets=["musk1", "muskk"]),
     "experiment tiny: unknown data set(s) ['muskk']"),
    ("negative-C", lambda e: e.update(classifiers=[{"name": "milr", "C": -1}]),
     "experiment tiny: classifier milr: The 'C' parameter"),
    ("tune-key", lambda e: e.update(classifiers=[{"name": "milr", "tune": {"c": [1]}}]),
     "experiment tiny: classifier milr: tune key(s) ['c']"),
    ("unknown-selector", lambda e: e.update(selectors=[{"name": "pcaa"}]),
     "experiment tiny: unknown selector 'pcaa'"),
    ("folds-above-minority-class", lambda e: e["protocol"].update(folds=46),
     "experiment tiny: protocol on musk1: 46-fold CV needs at least 46 bags per class; "
     "class counts [45, 47]"),
    ("label-names-two-methods",
     lambda e: e.update(classifiers=[{"name": "milr", "C": [1.0, 2.0], "label": "L"}]),
     "experiment tiny: label 'none + L' names 2 different methods"),
    ("threshold-with-transductive", lambda e: e.update(threshold="auto", transductive=True),
     "experiment tiny: threshold: auto cannot be combined with transductive: true"),
]


@pytest.mark.parametrize("case, change, message", DRY_RUN_CASES, ids=[c[0] for c in DRY_RUN_CASES])
def test_config_mistake_fails_the_dry_run(tmp_path, case, change, message):
    cfg = e2e_config()
    change(cfg["experiments"]["tiny"])
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                      str(tmp_path / "config.yaml"), "-n"],
                         capture_output=True, text=True)
    assert res.returncode != 0 and message in res.stdout + res.stderr
    assert not Path(tmp_path, "results").exists()


def parse_time_check(config):
    """The method check workflow/rules/common.smk runs on every experiment when the workflow is
    parsed (``snakemake -n``), with its error prefix."""
    for exp, cfg in config["experiments"].items():
        try:
            for m in expand_methods(cfg):
                check_method(m["selector"], m["classifier"])
            check_experiment(cfg)
        except ValueError as e:
            raise ValueError(f"experiment {exp}: {e}") from None


def test_parse_time_check_is_the_rules_check():
    rules = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert "for m in METHODS[exp].values():" in rules
    assert 'check_method(m["selector"], m["classifier"])' in rules
    assert 'raise ValueError(f"experiment {exp}: {e}") from None' in rules


PARSE_CASES = [
    ("emdd-negative-max-starts", {"name": "emdd", "max_starts": -1},
     "experiment tiny: classifier emdd: The 'max_starts' parameter of EMDD must be an int in "
     "the range [1, inf) or None. Got -1 instead."),
    ("emdd-string-max-starts", {"name": "emdd", "max_starts": "many"},
     "experiment tiny: classifier emdd: The 'max_starts' parameter of EMDD must be an int in "
     "the range [1, inf) or None. Got 'many' instead."),
    ("emdd-threshold-in-grid", {"name": "emdd", "tune": {"threshold": [0.5, 1.5]}},
     "experiment tiny: classifier emdd: The 'threshold' parameter of EMDD must be a str among "
     "{'train'} or a float in the range (0.0, 1.0). Got 1.5 instead."),
    ("wrapper-unknown-aggregation", {"name": "mi-wrapper", "aggregation": "median"},
     "experiment tiny: classifier mi-wrapper: The 'aggregation' parameter of MIWrapper"),
    ("citation-knn-no-votes", {"name": "citation-knn", "references": 0, "citers": 0},
     "experiment tiny: classifier citation-knn: references + citers must be at least 1"),
]


@pytest.mark.parametrize("case, classifier, message", PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_bad_value_in_a_config_fails_the_parse_time_check(tmp_path, case, classifier, message):
    cfg = e2e_config()
    cfg["experiments"]["tiny"]["classifiers"] = [{"name": "milr"}, classifier]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ValueError) as err:
        parse_time_check(load_config(tmp_path / "config.yaml"))
    assert str(err.value).startswith(message), str(err.value)
    cfg["experiments"]["tiny"]["classifiers"] = [{"name": "milr"}]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    parse_time_check(load_config(tmp_path / "config.yaml"))        # the rest of it is fine


def _archive(tmp_path, kind):
    import io
    import tarfile
    import zipfile
    p = tmp_path / ("a.zip" if kind.startswith("zip") else "a.tar.gz")
    if kind.startswith("zip"):
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("d/f.txt", "x" * 5000)
    else:
        with tarfile.open(p, "w:gz") as t:
            data = np.random.default_rng(0).bytes(50_000)
            ti = tarfile.TarInfo("d/f.bin")
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    return p


@pytest.mark.parametrize("kind, damage", [
    ("tgz-truncated", lambda b: b[:len(b) // 2]),
    ("tgz-garbage", lambda b: b"not an archive" * 10),
    ("zip-truncated", lambda b: b[:len(b) // 2]),
])
def test_bad_archive_is_named_and_leaves_nothing(tmp_path, kind, damage):
    from milbench.data.sources import safe_extract
    archive = _archive(tmp_path, kind)
    archive.write_bytes(damage(archive.read_bytes()))
    with pytest.raises(SourceError, match=rf"{archive.name}: cannot extract"):
        safe_extract(archive, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == [archive.name]   # no half-extracted dir


def test_chain_data_sets_of_two_sources_never_share_a_path(tmp_path):
    """The synthetic and a real Corel source build into different stores and chain folders,
    so running the embedded default after a real run leaves the real bags alone."""
    images = tmp_path / "my-corel"
    images.mkdir()
    paths = {}
    for source in ("synthetic", str(images)):
        cfg = e2e_config()
        cfg["experiments"]["tiny"]["datasets"] = ["corel-cats"]
        cfg["experiments"]["tiny"].pop("coverage")
        cfg["chains"] = {"corel": {"source": source}}
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
        res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                          str(tmp_path / "config.yaml"), "-n"],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-2000:]
        paths[source] = set(re.findall(r"results/(?:bags|chains)/corel-cats[^/\s,]*", res.stdout))
    synthetic, real = paths.values()
    assert synthetic == {"results/bags/corel-cats@synthetic", "results/chains/corel-cats@synthetic"}
    assert len(real) == 2 and not real & synthetic


def test_missing_dataset_file_fails_at_dry_run_even_with_bags_built(tmp_path):
    """A `datasets:` entry whose file is gone fails `snakemake -n`, naming the entry, the path
    and what a relative path is relative to, even when its bags exist from an earlier run."""
    from milbench.experiment.config import missing_dataset_files

    data = tmp_path / "mine.csv"
    data.write_text("1,b1,0.5,1.0\n0,b2,0.1,2.0\n")
    cfg = e2e_config()
    cfg["datasets"] = {"mine": {"format": "csv", "path": "mine.csv"}}
    assert missing_dataset_files(cfg, root=tmp_path) == []
    for f in ("instances.parquet", "bags.parquet", "meta.json"):   # bags of an earlier run
        (tmp_path / "results" / "bags" / "mine").mkdir(parents=True, exist_ok=True)
        (tmp_path / "results" / "bags" / "mine" / f).write_text("")
    cfg["datasets"]["mine"]["path"] = "moved/mine.csv"
    (msg,) = missing_dataset_files(cfg, root=tmp_path)
    assert "datasets: mine: path 'moved/mine.csv' is not a file" in msg
    assert str(tmp_path.resolve()) in msg
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                      str(tmp_path / "config.yaml"), "-n"],
                         capture_output=True, text=True)
    assert res.returncode != 0
    assert "datasets: mine: path 'moved/mine.csv' is not a file" in res.stdout + res.stderr
