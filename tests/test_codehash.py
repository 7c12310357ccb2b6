"""milbench.experiment.codehash: a job's rerun trigger covers every library module it imports,
statements only, and the registry entries it resolves, not the rest of the registry."""
import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from milbench.experiment.codehash import (
    ROOT,
    code_hash,
    direct_imports,
    import_closure,
    normal_tree,
    spec_entries,
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


def test_spec_entries_follow_init_defaults_the_entry_leaves_out():
    milr = ("milr", "milbench.classifiers.milr:MILR")
    assert milr in spec_entries({"name": "view-ensemble"})             # base="milr" by default
    assert milr not in spec_entries({"name": "view-ensemble", "base": "mi-simple"})
    assert spec_modules({"name": "view-ensemble", "base": "mi-simple"}) == [
        "milbench.classifiers.simple", "milbench.classifiers.view_ensemble"]


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


def test_normal_tree_drops_docstrings_comments_and_formatting_only():
    src = ('"""Module."""\nclass A:\n    """Doc."""\n    def f(self, x):\n        """Doc."""\n'
           '        return x + 1\n')
    same = ('# a comment\n"""Other."""\nclass A:\n    """Other doc."""\n\n    # a comment\n'
            '    def f(self,x):\n        "a bare string"\n        return (x+1)  # another\n')
    dump = lambda s: ast.dump(normal_tree(s))        # noqa: E731
    assert dump(src) == dump(same)
    assert dump(src) != dump(src.replace("x + 1", "x + 2"))
    assert dump(src) != dump(src.replace("return", "y = 0\n        return"))
    assert dump('x = "a string value"') != dump('x = "another"')   # strings that are values stay


def test_registry_normal_form_keeps_its_functions_not_its_tables():
    registry = (ROOT / "registry.py").read_text()
    added = registry.replace('CLASSIFIERS = {\n', 'CLASSIFIERS = {\n    "x": "m:X",\n', 1)
    body = registry.replace('known: {sorted(table)}', 'known names: {sorted(table)}', 1)
    assert added != registry and body != registry
    dump = lambda s: ast.dump(normal_tree(s, registry=True))      # noqa: E731
    assert dump(added) == dump(registry) != dump(body)


# ---- edits of a copy of the library: digests computed by a fresh interpreter on the copy ----

METHODS = {
    "milr": {"selector": {"name": "none"}, "classifier": {"name": "milr", "C": 1.0}},
    "mi-simple": {"selector": {"name": "none"}, "classifier": {"name": "mi-simple"}},
    "citation-knn": {"selector": {"name": "none"}, "classifier": {"name": "citation-knn"}},
    # View-Ensemble's base defaults to milr (its __init__): MILR's code and entry are its own
    "view-ensemble": {"selector": {"name": "iig"}, "classifier": {"name": "view-ensemble"}},
    "hydr-simple": {"selector": {"name": "hydr-mi", "classifier": "@classifier"},
                    "classifier": {"name": "mi-simple"}},
}
DIGESTS = ("import json, sys\nfrom milbench.experiment import codehash\n"
           "print(json.dumps([str(codehash.ROOT), {k: codehash.method_code(m) "
           "for k, m in json.loads(sys.argv[1]).items()}]))")


@pytest.fixture
def library(tmp_path):
    """A copy of workflow/milbench to edit."""
    return Path(shutil.copytree(ROOT, tmp_path / "milbench",
                                ignore=shutil.ignore_patterns("__pycache__")))


def digests(library):
    res = subprocess.run([sys.executable, "-c", DIGESTS, json.dumps(METHODS)],
                         env={**os.environ, "PYTHONPATH": str(library.parent)},
                         cwd=library.parent, capture_output=True, text=True, check=True)
    root, codes = json.loads(res.stdout)
    assert Path(root) == library                      # the copy's code, not the worktree's
    return codes


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{path.name} no longer holds {old!r}: update the test's edit"
    path.write_text(text.replace(old, new, 1))


def changed(before, after):
    return sorted(k for k in before if before[k] != after[k])


def test_adding_a_registry_entry_changes_no_digest(library):
    before = digests(library)
    edit(library / "registry.py", '    "lcmf": ',
         '    "milr-2": "milbench.classifiers.milr:MILR",\n    "lcmf": ')
    edit(library / "registry.py", '    "pca": ', '    "pca-2": "milbench.selectors.pca:BagPCA",\n'
                                                '    "pca": ')
    assert changed(before, digests(library)) == []


def test_docstring_comment_and_format_edits_change_no_digest_code_edits_its_importers(library):
    milr = library / "classifiers" / "milr.py"
    before = digests(library)
    edit(milr, '"""Multiple-instance logistic regression', '"""Multi-instance logistic regression')
    edit(milr, '"""Bag scores log P', '"""Bag logits log P')
    edit(milr, "    return np.log(P) - np.log1p(-P)",
         "    # the bag logit\n    return (np.log(P)\n            - np.log1p(-P))")
    assert changed(before, digests(library)) == []
    edit(milr, "            - np.log1p(-P))", "            - np.log1p(-P) + 0.0)")
    assert changed(before, digests(library)) == ["milr", "view-ensemble"]


def test_changing_the_entry_a_method_resolves_changes_its_digest(library):
    before = digests(library)
    edit(library / "registry.py", '"milr": "milbench.classifiers.milr:MILR"',
         '"milr": "milbench.classifiers.simple:MISimple"')
    assert changed(before, digests(library)) == ["milr", "view-ensemble"]
