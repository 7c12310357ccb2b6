"""The method reference a user reads without opening code, generated from the estimators
themselves (registry, ``get_params`` defaults, ``_parameter_constraints``, class docstrings):

    python -m milbench.report.reference > docs/methods.md

``tests/test_contract.py`` checks that docs/methods.md is current.
"""
from __future__ import annotations

import inspect
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions, make_constraint

from milbench.registry import CLASSIFIERS, SELECTORS, resolve
from milbench.selectors.stage_store import STORE_PARAM

# plain words for the constraints scikit-learn would spell as "an instance of '...'"
WORDS = {"boolean": "a bool", "random_state": "a seed (None, an int in [0, 2³² − 1] or a "
         "numpy RandomState)", str: "a string", dict: "a dict", Integral: "an int",
         np.random.Generator: "a numpy Generator"}

HEADER = """# Method reference

Generated from the estimators by `python -m milbench.report.reference > docs/methods.md` (a test checks
that this page is current). For each config name: the class, every parameter with its default
and the values it accepts (checked when the workflow is parsed), then the class docstring: the
paper and equation it implements, its choices and where it departs from the paper. A config
entry `{name: <config name>, <parameter>: <value>, tune: {<parameter>: [...]}}` uses them;
your own estimator is named `module:Class` instead (docs/usage.md, "Your own method, in three steps").
"""


def _allowed(constraints):
    """Readable, deterministic text of scikit-learn parameter constraints."""
    out = []
    for c in constraints:
        if c is None:
            out.append("None")
        elif isinstance(c, StrOptions):
            out.append("one of " + ", ".join(repr(o) for o in sorted(c.options)))
        elif isinstance(c, (str, type)) and c in WORDS:
            out.append(WORDS[c])
        else:
            out.append(str(make_constraint(c)))
    return " or ".join(out)


def method_reference():
    """The markdown text of docs/methods.md."""
    lines = [HEADER]
    for kind, table in (("selector", SELECTORS), ("classifier", CLASSIFIERS)):
        lines += [f"## {kind.capitalize()}s", ""]
        for name, path in table.items():
            Est = resolve(kind, name)
            constraints = getattr(Est, "_parameter_constraints", {})
            module_doc = (inspect.getdoc(inspect.getmodule(Est)) or "").split("\n\n")[0]
            # the fold-stage store is set by the runner, never by a config
            params = {k: v for k, v in Est().get_params(deep=False).items() if k != STORE_PARAM}
            lines += [f"### `{name}`", "", f"{kind}, `{path}`: {' '.join(module_doc.split())}", ""]
            lines += ["| parameter | default | accepts |", "|---|---|---|"] if params else \
                ["No parameters."]
            for key, default in sorted(params.items()):
                allowed = _allowed(constraints[key]) if key in constraints else "see below"
                lines.append(f"| `{key}` | `{default!r}` | {allowed} |")
            lines += ["", inspect.getdoc(Est) or "(no docstring)", ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(method_reference(), end="")
