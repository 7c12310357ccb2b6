"""Dataset sources: loaders for every supported format, checksummed downloads from the
canonical host or a mirror, safe archive extraction, and the offline copies in the `mil` package.

Every loader returns a :class:`~milbench.data.bags.Bags` and raises :class:`SourceError` naming the
file and line of malformed input.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from milbench.data.bags import BagError, Bags
from milbench.utils.hashing import sha256_file

MANIFEST = Path(__file__).resolve().parents[3] / "resources" / "sources.yaml"
FORMATS = ("csv", "arff", "c45", "mat", "uci-musk", "parquet")


class SourceError(ValueError):
    """Bad raw input or a failed download / checksum / extraction."""


def load_manifest(path=MANIFEST):
    return yaml.safe_load(Path(path).read_text())


# ----------------------------------------------------------------------------- downloads
def source_url(entry, mirror=None):
    """Where to fetch one manifest file: the mirror (dir or URL) + its path, else canonical URL."""
    if not mirror:
        return entry["url"]
    mirror = str(mirror)
    if mirror.startswith(("http://", "https://", "file://")):
        return mirror.rstrip("/") + "/" + entry["path"]
    return Path(mirror, entry["path"]).resolve().as_uri()


def fetch(entry, dest, mirror=None, timeout=60):
    """Download one manifest file to ``dest``: into a temp file, verified, then renamed.

    A checksum mismatch removes the temp file and raises; ``dest`` is never half-written.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    url = source_url(entry, mirror)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            shutil.copyfileobj(resp, out, 1 << 20)
        got = sha256_file(tmp)
        if got != entry["sha256"]:
            raise SourceError(f"checksum mismatch for {url}: expected sha256 {entry['sha256']}, "
                              f"got {got}; file discarded")
        os.replace(tmp, dest)
    except Exception as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, SourceError):
            raise
        raise SourceError(f"download of {url} failed: {e}") from e
    return dest


def safe_extract(archive, dest):
    """Extract a tar/zip archive into ``dest`` refusing absolute paths, '..', and links that
    point outside ``dest``. Extraction goes to a temp dir renamed into place at the end."""
    dest = Path(dest).resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))

    def check(name, link=None):
        p = Path(name)
        if p.is_absolute() or ".." in p.parts:
            raise SourceError(f"{archive}: refusing unsafe member path {name!r}")
        if link is not None:
            target = (tmp / p.parent / link).resolve()
            if Path(link).is_absolute() or not target.is_relative_to(tmp.resolve()):
                raise SourceError(f"{archive}: refusing link {name!r} -> {link!r} outside the target")

    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                for n in z.namelist():
                    check(n)
                z.extractall(tmp)
        else:
            with tarfile.open(archive) as t:
                members = t.getmembers()
                for m in members:
                    if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
                        raise SourceError(f"{archive}: refusing special member {m.name!r}")
                    check(m.name, m.linkname if (m.issym() or m.islnk()) else None)
                t.extractall(tmp, members=members, filter="tar")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise SourceError(f"{archive}: cannot extract: truncated or not a tar/zip archive "
                          f"({type(e).__name__}: {e})") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def offline_path(offline):
    """Path of a data file a PyPI package ships, found without importing the package."""
    spec = importlib.util.find_spec(offline["package"])
    if spec is None or not spec.submodule_search_locations:
        raise SourceError(f"offline source needs the PyPI package {offline['package']!r}; "
                          "install requirements.txt")
    path = Path(list(spec.submodule_search_locations)[0], offline["member"])
    if not path.exists():
        raise SourceError(f"{path} not found in package {offline['package']}")
    return path


# ----------------------------------------------------------------------------- loaders
POSITIVE = ("1", "+1", "true", "pos", "positive", "yes")
NEGATIVE = ("0", "-1", "false", "neg", "negative", "no")
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _bags_from_rows(X, bag_keys, labels, path, lines, mixed_labels="error"):
    """Bags from stacked instance rows: each bag's rows must be contiguous (a bag id that
    reappears after another bag is an error, not a silent merge), and every row of a bag must
    carry the same label unless ``mixed_labels="max"`` (bag label = max instance label)."""
    keys = np.asarray(bag_keys).astype(str)
    labels = (np.asarray(labels) > 0).astype(np.int8)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    run_keys = keys[starts]
    _, first_run, run_key = np.unique(run_keys, return_index=True, return_inverse=True)
    again = np.flatnonzero(first_run[run_key] != np.arange(len(run_keys)))
    if len(again):
        i = again[0]
        raise SourceError(
            f"{path}, line {lines[starts[i]]}: bag {str(run_keys[i])!r} appears again (its rows began "
            f"at line {lines[starts[first_run[run_key[i]]]]}, other bags came between); expected "
            f"each bag's rows to be contiguous: sort the file by bag id")
    low = np.minimum.reduceat(labels, starts)
    high = np.maximum.reduceat(labels, starts)
    mixed = np.flatnonzero(low != high)
    if len(mixed) and mixed_labels != "max":
        b = mixed[0]
        stop = starts[b + 1] if b + 1 < len(starts) else len(keys)
        row = starts[b] + int(np.flatnonzero(labels[starts[b]:stop] != labels[starts[b]])[0])
        raise SourceError(
            f"{path}, line {lines[row]}: bag {str(run_keys[b])!r} has instances of both labels "
            f"({len(mixed)} such bags); expected one label per bag, or set `mixed_labels: max` "
            f"for this dataset to label a bag positive when any instance is")
    if len(mixed):
        logging.getLogger(__name__).warning(
            "%s: %d bags have instances of both labels; labelled by their max (mixed_labels: max)",
            path, len(mixed))
    try:
        return Bags(np.asarray(X, dtype=np.float32), np.r_[starts, len(keys)], high, run_keys,
                    meta={"raw": [str(path)]})
    except BagError as e:
        raise SourceError(f"{path}: {e}") from e


def _plain(v):
    """A value as the file wrote it: 3, not np.int64(3)."""
    return v.item() if hasattr(v, "item") else v


def _check_values(X, lines, path, unit="line"):
    """Every feature finite and representable as float32 (the store's type); ``lines`` holds
    each row's line (or, with ``unit="row"``, row) number."""
    bad = ~np.isfinite(X)
    big = ~bad & (np.abs(X) > FLOAT32_MAX)
    for mask, what in ((bad, "NaN or inf feature value"),
                       (big, f"beyond the float32 range (|x| > {FLOAT32_MAX:.3g})")):
        if mask.any():
            r, c = np.argwhere(mask)[0]
            raise SourceError(f"{path}, {unit} {lines[r]}: feature {c + 1} = {float(X[r, c])!r}: {what}")


def _check_labels(values, lines, path, allowed, what, unit="line", shown=None):
    """Labels must be among ``allowed`` (numbers); name the first line (or row) that is not,
    with its value as ``shown`` holds it (default: ``values``)."""
    bad = ~np.isin(values, allowed)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        v = (values if shown is None else shown)[r]
        raise SourceError(f"{path}, {unit} {lines[r]}: {what} must be one of "
                          f"{', '.join(f'{a:g}' for a in allowed)}, got {_plain(v)!r}")


def _parse_float_rows(path, first_feature, n_tail, min_cols=3):
    """Read a comma-separated file; return (key columns, float features, tail columns, line
    numbers of the rows)."""
    keys, feats, tails, lines = [], [], [], []
    with open(path, encoding="utf-8", errors="strict") as f:
        ncols = None
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith(("%", "#")):
                continue
            parts = [p.strip() for p in line.rstrip(".").split(",")] if line.endswith(".") and \
                not line.endswith("..") else [p.strip() for p in line.split(",")]
            if ncols is None:
                ncols = len(parts)
                if ncols < min_cols:
                    raise SourceError(f"{path}, line {lineno}: expected at least {min_cols} "
                                      f"comma-separated columns, got {ncols}")
            if len(parts) != ncols:
                raise SourceError(f"{path}, line {lineno}: expected {ncols} columns, got {len(parts)}")
            try:
                vals = [float(v) for v in parts[first_feature:len(parts) - n_tail]]
                tail = [float(v) for v in parts[len(parts) - n_tail:]]
            except ValueError as e:
                raise SourceError(f"{path}, line {lineno}: non-numeric value ({e})") from None
            keys.append(parts[:first_feature])
            feats.append(vals)
            tails.append(tail)
            lines.append(lineno)
    if not feats:
        raise SourceError(f"{path}: no data rows")
    X = np.array(feats)
    _check_values(X, lines, path)
    return np.array(keys, dtype=object), X, np.array(tails), np.array(lines)


def read_csv(path, mixed_labels="error"):
    """MIL CSV without header, one instance a row: label (0/1 or -1/1), bag id, features...
    (the `mil` package's layout). A bag's rows are contiguous and share its label."""
    try:
        df = pd.read_csv(path, header=None)
        with open(path, encoding="utf-8") as f:   # line numbers of the rows pandas kept
            lines = np.array([i for i, t in enumerate(f, 1) if t.strip()])
    except Exception as e:
        raise SourceError(f"{path}: cannot parse as CSV ({e})") from e
    if len(lines) != len(df):
        lines = np.arange(1, len(df) + 1)
    if df.shape[1] < 3:
        raise SourceError(f"{path}: expected columns label, bag, features...; got {df.shape[1]}")
    feats = df.iloc[:, 2:].apply(pd.to_numeric, errors="coerce")
    missing = feats.isna().to_numpy()
    if missing.any():
        r, c = np.argwhere(missing)[0]
        raise SourceError(f"{path}, line {lines[r]}: feature {c + 1} = "
                          f"{_plain(df.iat[r, c + 2])!r}: missing or non-numeric")
    X = feats.to_numpy(float)
    _check_values(X, lines, path)
    y = pd.to_numeric(df[0], errors="coerce").to_numpy(float)       # text -> NaN, refused
    _check_labels(y, lines, path, (0, 1, -1), "label (column 1)", shown=df[0].to_numpy())
    return _bags_from_rows(X, df[1].to_numpy(), y, path, lines, mixed_labels)


def read_uci_musk(path, mixed_labels="error"):
    """UCI Musk: molecule name, conformation name, features, class 0/1 (bag = molecule)."""
    keys, X, tail, lines = _parse_float_rows(path, first_feature=2, n_tail=1)
    if np.isin(keys[:, 0].astype(str), ("0", "1", "-1")).all():
        raise SourceError(f"{path}, line {lines[0]}: the first column holds only 0/1 where UCI "
                          f"musk has molecule names; expected name, conformation, features, "
                          f"class (a label, bag, features file is format csv)")
    _check_labels(tail[:, 0], lines, path, (0, 1), "class (last column)")
    return _bags_from_rows(X, keys[:, 0], tail[:, 0], path, lines, mixed_labels)


def read_c45(data_path, names_path=None, mixed_labels="error"):
    """C4.5 ``bag_id,inst_id,f...,label.`` with feature columns in the order of the ``.names``
    file, which lists attributes sorted as strings ("1","10","100",...): reorder numerically."""
    data_path = Path(data_path)
    names_path = Path(names_path or data_path.with_suffix(".names"))
    if not names_path.exists():
        raise SourceError(f"{names_path}: not found (a c45 dataset is a .data file and its "
                          f".names file; set `names:` for another path)")
    attrs = []
    for lineno, line in enumerate(names_path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("|") or ":" not in line:
            continue
        attrs.append(line.split(":", 1)[0].strip())
    if attrs[:2] != ["bag_id", "inst_id"]:
        raise SourceError(f"{names_path}: expected bag_id and inst_id as first attributes, got {attrs[:2]}")
    feat_names = attrs[2:]
    keys, X, tail, lines = _parse_float_rows(data_path, first_feature=1, n_tail=1)
    X = X[:, 1:]  # drop inst_id
    if X.shape[1] != len(feat_names):
        raise SourceError(f"{data_path}: {X.shape[1]} feature columns but {names_path} names "
                          f"{len(feat_names)}")
    _check_labels(tail[:, 0], lines, data_path, (0, 1, -1), "label (last column)")
    try:
        order = np.argsort([int(n) for n in feat_names])
    except ValueError:
        order = np.arange(len(feat_names))  # non-numeric names: keep file order
    return _bags_from_rows(X[:, order], keys[:, 0], tail[:, 0], data_path, lines, mixed_labels)


def read_mat(directory):
    """MATLAB copy: X (inst × d), Bag2 (1-based bag id per instance), BagI (bag labels)."""
    # not at import: every workflow parse imports this module (load_manifest)
    from scipy.io import loadmat

    directory = Path(directory)

    def one(name):
        f = directory / f"{name}.mat"
        if not f.exists():
            raise SourceError(f"{f}: missing (a .mat dataset needs X.mat, Bag2.mat, BagI.mat)")
        try:
            m = {k: v for k, v in loadmat(f).items() if not k.startswith("__")}
        except Exception as e:
            raise SourceError(f"{f}: cannot read as a MATLAB file ({type(e).__name__}: {e})") from e
        if len(m) != 1:
            raise SourceError(f"{f}: expected one variable, found {sorted(m)}")
        return np.asarray(next(iter(m.values())))

    X, bag, lab = one("X").astype(float), one("Bag2").ravel().astype(int), one("BagI").ravel()
    if len(bag) != len(X):
        raise SourceError(f"{directory}/Bag2.mat: {len(bag)} bag ids for {len(X)} instances")
    if bag.min() < 1 or bag.max() > len(lab):
        raise SourceError(f"{directory}/Bag2.mat: bag ids must be in 1..{len(lab)}")
    _check_labels(lab, np.arange(1, len(lab) + 1), directory / "BagI.mat", (0, 1, -1),
                  "bag label", unit="row")
    order = np.argsort(bag, kind="stable")
    _check_values(X[order], order + 1, directory / "X.mat", unit="row")
    sizes = np.bincount(bag - 1, minlength=len(lab))
    try:
        return Bags(X[order], np.concatenate([[0], np.cumsum(sizes)]), (lab > 0).astype(np.int8),
                    np.arange(1, len(lab) + 1).astype(str), meta={"raw": [str(directory)]})
    except BagError as e:
        raise SourceError(f"{directory}: {e}") from e


def _class_coding(values, positive, where):
    """{class value: 0/1} for an ARFF class attribute: the declared ``positive`` value, or one
    documented positive and one documented negative spelling. Anything else is ambiguous."""
    values = list(dict.fromkeys(values))
    if positive is not None:
        positive = str(positive)
        if positive not in values or len(values) > 2:
            raise SourceError(f"{where}: class values {values}; expected two, one of them "
                              f"the declared positive value {positive!r}")
        return {v: int(v == positive) for v in values}
    pos = [v for v in values if v.lower() in POSITIVE]
    neg = [v for v in values if v.lower() in NEGATIVE]
    if len(values) > 2 or len(pos) > 1 or len(neg) > 1 or len(pos) + len(neg) != len(values):
        raise SourceError(f"{where}: class values {values}: cannot tell which is positive; "
                          f"expected one of {'/'.join(POSITIVE)} and one of {'/'.join(NEGATIVE)} "
                          f"(any case), or `positive: <value>` in this dataset's config")
    return {v: int(v in pos) for v in values}


def _nominal_values(decl):
    """The values of a nominal ``@attribute name {a,b}`` declaration, or None."""
    if "{" not in decl or "}" not in decl:
        return None
    inner = decl[decl.index("{") + 1:decl.rindex("}")]
    return [v.strip().strip("'\"") for v in inner.split(",") if v.strip()]


def _arff_first_value(line):
    """(first value, rest of the row) of an ARFF data row; the value may be quoted ('a b')."""
    if line[:1] not in ("'", '"'):
        first, rest = line.split(",", 1)
        return first.strip(), rest
    m = re.match(r"""(['"])((?:\\.|(?!\1).)*)\1\s*,""", line)
    if m is None:
        raise ValueError("unterminated quoted bag id")
    return re.sub(r"\\(.)", lambda e: {"n": "\n", "r": "\r"}.get(e[1], e[1]), m[2]), line[m.end():]


def read_arff(path, positive=None):
    """Multi-instance ARFF (Weka): bag id, relational attribute of instances, class. The class
    values map to 0/1 by :func:`_class_coding`; a row whose class is not declared is an error."""
    path = Path(path)
    text = path.read_text(errors="strict").splitlines()
    in_data, in_rel, n_inst_attrs, bags, labels, ids, lines = False, False, 0, [], [], [], []
    class_decl = class_line = None
    for lineno, raw in enumerate(text, 1):
        line = raw.strip()
        low = line.lower()
        if not line or line.startswith("%"):
            continue
        if not in_data:
            if low.startswith("@attribute") and "relational" in low:
                in_rel = True
            elif low.startswith("@end"):
                in_rel = False
            elif low.startswith("@attribute") and in_rel:
                n_inst_attrs += 1
            elif low.startswith("@attribute"):
                class_decl, class_line = line, lineno     # the last top-level attribute
            elif low.startswith("@data"):
                in_data = True
            continue
        try:
            first, rest = _arff_first_value(line)
            q = rest.index('"') if '"' in rest else rest.index("'")
            quote = rest[q]
            end = rest.rindex(quote)
            inner, label = rest[q + 1:end], rest[end + 1:].strip(" ,").strip("'\"")
            inst = [[float(v) for v in r.split(",")] for r in inner.replace("\\n", "\n").split("\n") if r.strip()]
        except ValueError as e:
            raise SourceError(f"{path}, line {lineno}: malformed multi-instance row ({e})") from None
        if not inst:
            raise SourceError(f"{path}, line {lineno}: bag {first!r} has no instances")
        if any(len(r) != n_inst_attrs for r in inst):
            raise SourceError(f"{path}, line {lineno}: expected {n_inst_attrs} values per instance")
        bags.append(np.array(inst))
        ids.append(first)
        labels.append(label)
        lines.append(lineno)
    if not bags:
        raise SourceError(f"{path}: no @data rows")
    _check_values(np.vstack(bags), np.repeat(lines, [len(b) for b in bags]), path)
    declared = _nominal_values(class_decl or "")
    if declared is not None:
        undeclared = [i for i, v in enumerate(labels) if v not in declared]
        if undeclared:
            i = undeclared[0]
            raise SourceError(f"{path}, line {lines[i]}: class {labels[i]!r} is not among the "
                              f"declared values {declared} (line {class_line})")
    where = f"{path}, line {class_line}" if declared is not None else f"{path}"
    coding = _class_coding(declared if declared is not None else labels, positive, where)
    y = np.array([coding[v] for v in labels], dtype=np.int8)
    try:
        return Bags.from_list(bags, y, bag_ids=ids, meta={"raw": [str(path)]})
    except BagError as e:
        raise SourceError(f"{path}: {e}") from e


def read_any(fmt, path, names=None, positive=None, mixed_labels="error"):
    """Load a dataset of a given format (user datasets; the formats are laid out in docs/usage.md, "Your own data").
    ``positive`` declares the positive class value (arff); ``mixed_labels="max"`` accepts bags
    whose instance rows carry both labels (csv, uci-musk, c45)."""
    def parquet(p):
        # not at import: Snakemake's parse reads the manifest, never a Parquet file
        from milbench.data.store import StoreError, read_bags

        try:
            return read_bags(p)
        except StoreError as e:
            raise SourceError(str(e)) from e

    readers = {"csv": lambda p: read_csv(p, mixed_labels),
               "uci-musk": lambda p: read_uci_musk(p, mixed_labels),
               "mat": read_mat, "arff": lambda p: read_arff(p, positive),
               "parquet": parquet, "c45": lambda p: read_c45(p, names, mixed_labels)}
    if fmt not in readers:
        raise SourceError(f"unknown format {fmt!r}; supported: {sorted(readers)}")
    if not Path(path).exists():
        raise SourceError(f"{path}: not found")
    return readers[fmt](path)


def check_expected(bags, expect, where):
    got = {"n_bags": len(bags), "n_instances": len(bags.instances),
           "n_positive": int(bags.labels.sum()), "n_features": bags.n_features}
    bad = {k: (v, got[k]) for k, v in (expect or {}).items() if got[k] != v}
    if bad:
        raise SourceError(f"{where}: shape check failed (expected, got): {bad}")
    return bags


def load_builtin(name, raw_dir=None, offline=False, manifest=None):
    """A built-in dataset from downloaded raw files under ``raw_dir`` (manifest paths) or, with
    ``offline=True``, from the copy a PyPI dependency ships."""
    manifest = manifest or load_manifest()
    if name not in manifest:
        raise SourceError(f"unknown built-in dataset {name!r}; known: {sorted(manifest)}")
    entry = manifest[name]
    if offline:
        if "offline" not in entry:
            raise SourceError(f"{name} has no offline copy; set offline: false and a mirror or network")
        path = offline_path(entry["offline"])
        bags = read_any(entry["offline"]["format"], path)
        bags.meta.update(source=f"PyPI package {entry['offline']['package']}",
                         sha256={path.name: sha256_file(path)})
    else:
        files = [Path(raw_dir, f["path"]) for f in entry["files"]]
        fmt = entry["format"]
        target = {"mat": files[0].parent, "c45": files[0]}.get(fmt, files[0])
        bags = read_c45(files[0], files[1]) if fmt == "c45" else read_any(fmt, target)
        bags.meta.update(source="download", sha256={f["path"]: f["sha256"] for f in entry["files"]})
    bags.meta["dataset"] = name
    return check_expected(bags, entry.get("expect"), f"{name} ({bags.meta['source']})")


def load_dataset(name, data_root):
    """A built-in dataset straight from a directory laid out like ``../shared/data`` (tests and
    benchmarks). Verifies the manifest's sha256 of each file first."""
    manifest = load_manifest()
    for f in manifest[name]["files"]:
        p = Path(data_root, f["path"])
        if not p.exists():
            raise SourceError(f"{p}: not found")
    return load_builtin(name, raw_dir=data_root, manifest=manifest)
