"""milbench.experiment.codehash: a job's rerun trigger covers every library module it imports."""
from milbench.experiment.codehash import (
    ROOT,
    code_hash,
    direct_imports,
    import_closure,
    spec_modules,
)


def names(paths):
    return {str(p.relative_to(ROOT)) for p in paths}


def test_closure_follows_relative_lazy_and_package_imports():
    got = names(import_closure("milbench.classifiers.citation_knn"))
    assert {"__init__.py", "classifiers/__init__.py", "classifiers/citation_knn.py",
            "classifiers/distances.py", "base.py", "data/bags.py", "data/__init__.py"} <= got
    assert "classifiers/milr.py" not in got
    # ensembles builds its default member (MI-Wrapper) inside a function
    assert "classifiers/wrapper.py" in names(import_closure("milbench.classifiers.ensembles"))


def test_direct_imports_resolve_relative_levels():
    deps = direct_imports("milbench.classifiers.citation_knn")
    assert "milbench.classifiers.distances" in deps and "milbench.base" in deps
    assert all(d.startswith("milbench") for d in deps)


def test_spec_modules_include_nested_registry_names():
    spec = {"name": "mi-bagging", "base": {"name": "mi-wrapper", "estimator": "tree"}}
    assert spec_modules(spec) == ["milbench.classifiers.ensembles", "milbench.classifiers.wrapper"]
    assert spec_modules({"name": "hydr-mi", "classifier": "milr"}) == [
        "milbench.classifiers.milr", "milbench.selectors.hydr"]


def test_hash_depends_on_every_module_of_the_closure():
    a = code_hash("milbench.classifiers.citation_knn")
    b = code_hash("milbench.classifiers.milr")
    assert a != b and len(a) == 12


def test_own_module_is_hashed_with_what_it_imports_from_the_library():
    from milbench.registry import add_code_dirs

    from conftest import REPO
    add_code_dirs([str(REPO / "examples" / "own_method")])
    assert spec_modules({"name": "pooling:MeanMaxPooling", "C": 1}) == ["pooling"]
    files = {p.name for p in import_closure("pooling")}
    assert {"pooling.py", "bags.py"} <= files          # its own file and milbench.data.bags
    assert not any("site-packages" in str(p) for p in import_closure("pooling"))  # sklearn not
