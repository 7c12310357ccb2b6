"""The pipeline configuration. Its JSON schema (``workflow/schemas/config.schema.yaml``) is the
one source of every default: the Snakefile fills them with Snakemake's
``validate(config, schema, set_default=True)`` (after :func:`with_defaults` checked it, for
a short message naming the experiment and the key), and :func:`load_config` /
:func:`with_defaults` / :func:`experiment_defaults` fill them the same way for the entry points
that do not go through Snakemake (``milbench.experiment.runner.run_experiment``, ``python -m
milbench.experiment.runner``).  :func:`experiment_settings` / :func:`method_settings` are the
settings a method job runs with (its rule's params), :func:`job_threads` / :func:`job_mem_mb` /
:func:`job_runtime` its resources (``python -m milbench.experiment.plan`` prints the same),
:func:`chain_settings` a chain's settings.

Every method job imports this module (through the runner) and never reads or validates a
config, so PyYAML and jsonschema are imported where a config is read or checked, not at
import (docs/performance.md)."""
from __future__ import annotations

import copy
import functools
from pathlib import Path

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


@functools.cache
def schema():
    # not at import: method jobs never read a config (module docstring)
    import yaml

    # libyaml's loader where PyYAML has it: several times faster, on every `snakemake -n`
    return yaml.load(SCHEMA.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@functools.cache
def _validator_class():
    """The schema's validator, extended to fill a property's ``default`` where it is missing
    before checking it, so nested defaults inside a filled object are filled too (the
    jsonschema FAQ's recipe, as Snakemake's validate uses; the default is copied, so
    filled configs never share objects with the schema or one another)."""
    # not at import: method jobs never validate a config (module docstring)
    from jsonschema import validators

    base = validators.validator_for(schema())
    check_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if validator.is_type(instance, "object"):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from check_properties(validator, properties, instance, subschema)

    return validators.extend(base, {"properties": set_defaults})


def _fill(instance, subschema, where):
    """Fill ``instance``'s defaults and check it against ``subschema``; a ValueError of one
    or two lines (:func:`_short_error`) on the first problem."""
    # not at import: method jobs never validate a config (module docstring)
    from jsonschema.exceptions import best_match

    errors = list(_validator_class()(subschema).iter_errors(instance))
    # a misspelt key also leaves the key it stands for missing: name the misspelling
    unknown = [e for e in errors if e.validator == "additionalProperties"]
    err = best_match(unknown or errors)
    if err is not None:
        raise ValueError(_short_error(err, where))
    return instance


def _short_error(err, where):
    """One jsonschema error as ``experiment <name>: <key path>: <what is wrong> (allowed:
    ...)``, then the config it is in (``where``): the experiment and key first, never the
    schema.  Outside ``experiments`` (or for one experiment entry, whose ``where`` names it) the
    line starts with ``where``."""
    import difflib
    import reprlib

    path = [str(p) for p in err.absolute_path]
    short = reprlib.Repr()
    short.maxstring = short.maxother = 60
    value = short.repr(err.instance)

    def allowed(names):
        return ", ".join(map(str, names))

    if err.validator == "additionalProperties":
        props = err.schema.get("properties", {})
        key = sorted(set(err.instance) - set(props))[0]
        path.append(key)
        close = difflib.get_close_matches(key, list(props), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        what = f"unknown key (allowed keys: {allowed(props)}{hint})"
    elif err.validator == "required":
        path.append(next(k for k in err.validator_value if k not in err.instance))
        what = "required key is missing"
    elif err.validator in ("enum", "const") or (
            err.validator in ("anyOf", "oneOf")
            and all("enum" in s or "const" in s for s in err.validator_value)):
        # an anyOf of enums (several spellings of one value) allows all of them
        options = err.validator_value if err.validator in ("anyOf", "oneOf") else [err.schema]
        values = (v for o in options for v in o.get("enum", [o.get("const")]))
        what = f"{value} is not valid (allowed: {allowed(values)})"
    elif err.validator == "type":
        types = err.validator_value
        types = " or ".join(types) if isinstance(types, list) else types
        what = f"{value} is not valid: expected {types}"
    else:
        bound = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">",
                 "exclusiveMaximum": "<"}.get(err.validator)
        size = {"minItems": "items", "minProperties": "entries",
                "minLength": "characters"}.get(err.validator)
        limit = err.validator_value
        what = f"{value} is not valid: " + (
            f"must be {bound} {limit}" if bound else
            f"too few {size} (at least {limit})" if size else
            f"must match {limit!r}" if err.validator == "pattern" else
            err.message.splitlines()[0])

    key = ".".join(path) or "(top level)"
    if len(path) >= 2 and path[0] == "experiments":
        return f"experiment {path[1]}: {key}: {what}\n  in {where}"
    return f"{where}: {key}: {what}"


def with_defaults(config, where="config"):
    """A validated copy of ``config`` with every schema default filled in; a ValueError whose
    first line names the experiment (or ``where``) and the key otherwise (:func:`_short_error`).
    The Snakefile calls it before Snakemake's validate, whose message is the schema's text."""
    return _fill(copy.deepcopy(config), schema(), where)


def experiment_defaults(exp, where="experiment"):
    """A validated copy of one ``experiments.<name>`` entry with its defaults filled in (errors
    start with ``where``, e.g. ``experiment <name>``, and the key)."""
    s = schema()
    return _fill(copy.deepcopy(exp), {"$schema": s["$schema"], "$defs": s["$defs"],
                                      "$ref": "#/$defs/experiment"}, where)


def load_config(path):
    """A config file, validated, with every default filled in."""
    # not at import: method jobs never read a config (module docstring)
    import yaml

    return with_defaults(yaml.safe_load(Path(path).read_text()) or {}, where=str(path))


def experiment_settings(exp, tuned=True):
    """The settings of an experiment entry (defaults filled: the Snakefile's validate or
    :func:`experiment_defaults`) that a cell uses (the run rule's params: changing one reruns
    the methods that read it). ``inner_folds`` / ``inner_metric`` only for a ``tuned`` method
    or a tuned ``threshold`` (no other reads them); ``transductive`` and ``threshold`` only when
    on, so that turning one on reruns exactly that experiment's jobs."""
    threshold = exp.get("threshold") is not None
    keep = ("scale", "protocol") + (("inner_folds", "inner_metric") if tuned or threshold else ())
    settings = {k: v for k, v in exp.items() if k in keep}
    if exp["transductive"]:
        settings["transductive"] = True
    if threshold:
        settings["threshold"] = exp["threshold"]
    return settings


def method_settings(exp, method):
    """:func:`experiment_settings` for one method: inner-CV settings only when it tunes."""
    return experiment_settings(exp, tuned=bool(method["selector"].get("tune")
                                               or method["classifier"].get("tune")))


def job_threads(n_cells, max_threads):
    """A method job's threads: one per cell, at most ``threads.run``; Snakemake lowers it
    further to --cores."""
    return min(int(n_cells), int(max_threads))


def job_mem_mb(threads):
    """A method job's memory request: 1000 MB + 1000 MB per thread (one cell each).  The
    runner bounds all caches of a cell worker together (kernels, fits, MILSD's setup:
    :func:`milbench.utils.cache.bound_per_worker`) at half of its share of this,
    (1000 + 1000·threads) / (2·threads) MB, at most 768 MiB; the rest is the cell's own."""
    return 1000 + 1000 * int(threads)


def job_runtime(minutes_per_cell, n_cells, threads):
    """SLURM time limit in minutes: the experiment's ``runtime`` (minutes per cell) times the
    cells each thread runs one after another."""
    return int(minutes_per_cell) * -(-int(n_cells) // int(threads))


# formats whose ``path`` is a directory, and the files it must hold (docs/usage.md, "Your own
# data"; the mat reader and the bag store read exactly these)
DIRECTORY_FORMATS = {"mat": ("X.mat", "Bag2.mat", "BagI.mat"),
                     "parquet": ("instances.parquet", "bags.parquet", "meta.json")}


def missing_dataset_files(config, root="."):
    """Messages for the ``datasets:`` entries whose data is not where their format expects it:
    for ``mat`` and ``parquet`` a directory holding :data:`DIRECTORY_FORMATS`' files, for the
    other formats a file (and for ``c45`` its ``.names`` file, ``names`` or path with .names).

    Relative paths are relative to ``root``, the working directory Snakemake runs in (its
    ``--directory``), as for every input of a rule.  Checked at parse time whether or not the
    entry's bags were built already, so a wrong path never reuses stale bags silently."""
    base = Path(root)
    where = f"relative paths are relative to the working directory {str(base.resolve())!r}"
    out = []
    for name, spec in sorted((config.get("datasets") or {}).items()):
        fmt, given = spec.get("format"), spec.get("path")
        if given is None:
            continue
        path = base / given
        if fmt in DIRECTORY_FORMATS:
            need = DIRECTORY_FORMATS[fmt]
            if not path.is_dir():
                found = "a file" if path.exists() else "nothing there"
                out.append(f"datasets: {name}: path {given!r} is not a directory (format {fmt} "
                           f"is a directory holding {', '.join(need)}; found {found}; {where})")
                continue
            lacking = [f for f in need if not (path / f).is_file()]
            if lacking:
                out.append(f"datasets: {name}: directory {given!r} lacks {', '.join(lacking)} "
                           f"(format {fmt} needs {', '.join(need)}; {where})")
            continue
        files = [("path", given)]
        if fmt == "c45":
            files.append(("names", spec.get("names") or str(Path(given).with_suffix(".names"))))
        for key, value in files:
            if not (base / value).is_file():
                default = " (the default: path with .names)" if key == "names" and \
                    "names" not in spec else ""
                out.append(f"datasets: {name}: {key} {value!r}{default} is not a file (format "
                           f"{fmt} reads a file; {where})")
                break
    return out


def chain_settings(config, chain):
    """``config["chains"][chain]`` (defaults filled) with its keys, and those of its nested
    objects, in the schema's order: the rules' params of a chain (whose text is a rerun
    trigger) then do not depend on the order the keys are written in a config."""
    return _in_order(config["chains"][chain], schema()["properties"]["chains"]["properties"][chain])


def _in_order(value, subschema):
    props = subschema.get("properties")
    if not props or not isinstance(value, dict):
        return value
    return {k: _in_order(value[k], props[k]) for k in props if k in value}
