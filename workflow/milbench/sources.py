"""Dataset sources (SPEC §4): loaders for every supported format, checksummed downloads from the
canonical host or a mirror, safe archive extraction, and the offline copies in the `mil` package.

Every loader returns a :class:`~milbench.bags.Bags` and raises :class:`SourceError` naming the
file and line of malformed input.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

import numpy as np

from .bags import Bags, BagError

MANIFEST = Path(__file__).resolve().parents[2] / "resources" / "sources.yaml"
FORMATS = ("csv", "arff", "c45", "mat", "uci-musk", "parquet")


class SourceError(ValueError):
    """Bad raw input or a failed download / checksum / extraction."""


def load_manifest(path=MANIFEST):
    import yaml
    return yaml.safe_load(Path(path).read_text())


# ----------------------------------------------------------------------------- downloads
def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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
        got = sha256_of(tmp)
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
def _bags_from_rows(X, bag_keys, labels, path, bag_labels=None):
    """Group stacked rows by bag key (first-appearance order); bag label = max instance label."""
    keys, first, inverse = np.unique(np.asarray(bag_keys).astype(str), return_index=True,
                                     return_inverse=True)
    order = np.argsort(first)                     # bags in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    bag_of_row = rank[inverse]
    rows = np.argsort(bag_of_row, kind="stable")
    sizes = np.bincount(bag_of_row, minlength=len(keys))
    if bag_labels is None:
        y = np.zeros(len(keys), dtype=np.int8)
        np.maximum.at(y, bag_of_row, (np.asarray(labels) > 0).astype(np.int8))
    else:
        y = np.asarray(bag_labels)
    try:
        return Bags(np.asarray(X, dtype=np.float32)[rows], np.concatenate([[0], np.cumsum(sizes)]),
                    y, keys[order], meta={"raw": [str(path)]})
    except BagError as e:
        raise SourceError(f"{path}: {e}") from e


def _parse_float_rows(path, first_feature, n_tail, min_cols=3):
    """Read a comma-separated file; return (key columns, float features, tail columns)."""
    keys, feats, tails = [], [], []
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
            if not np.isfinite(vals).all():
                raise SourceError(f"{path}, line {lineno}: NaN or inf feature value")
            keys.append(parts[:first_feature])
            feats.append(vals)
            tails.append(tail)
    if not feats:
        raise SourceError(f"{path}: no data rows")
    return np.array(keys, dtype=object), np.array(feats), np.array(tails)


def read_csv(path):
    """MIL CSV without header: label, bag, features... (the `mil` package's layout)."""
    import pandas as pd
    try:
        df = pd.read_csv(path, header=None)
    except Exception as e:
        raise SourceError(f"{path}: cannot parse as CSV ({e})") from e
    if df.shape[1] < 3:
        raise SourceError(f"{path}: expected columns label, bag, features...; got {df.shape[1]}")
    feats = df.iloc[:, 2:]
    bad = feats.apply(pd.to_numeric, errors="coerce").isna() | ~np.isfinite(
        feats.apply(pd.to_numeric, errors="coerce").fillna(0))
    if bad.any(axis=None):
        r = int(np.flatnonzero(bad.any(axis=1).to_numpy())[0])
        raise SourceError(f"{path}, line {r + 1}: missing, non-numeric, NaN or inf feature value")
    bad_lab = ~df[0].isin([0, 1, -1])
    if bad_lab.any():
        r = int(np.flatnonzero(bad_lab.to_numpy())[0])
        raise SourceError(f"{path}, line {r + 1}: label must be 0/1 or -1/1, got {df.iat[r, 0]!r}")
    return _bags_from_rows(feats.to_numpy(float), df[1].to_numpy(), df[0].to_numpy(), path)


def read_uci_musk(path):
    """UCI Musk: molecule name, conformation name, 166 features, class (bag = molecule)."""
    keys, X, tail = _parse_float_rows(path, first_feature=2, n_tail=1)
    return _bags_from_rows(X, keys[:, 0], tail[:, 0], path)


def read_c45(data_path, names_path=None):
    """C4.5 ``bag_id,inst_id,f...,label.`` with feature columns in the order of the ``.names``
    file, which lists attributes sorted as strings ("1","10","100",...): reorder numerically."""
    data_path = Path(data_path)
    names_path = Path(names_path or data_path.with_suffix(".names"))
    attrs = []
    for lineno, line in enumerate(names_path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("|") or ":" not in line:
            continue
        attrs.append(line.split(":", 1)[0].strip())
    if attrs[:2] != ["bag_id", "inst_id"]:
        raise SourceError(f"{names_path}: expected bag_id and inst_id as first attributes, got {attrs[:2]}")
    feat_names = attrs[2:]
    keys, X, tail = _parse_float_rows(data_path, first_feature=1, n_tail=1)
    X = X[:, 1:]  # drop inst_id
    if X.shape[1] != len(feat_names):
        raise SourceError(f"{data_path}: {X.shape[1]} feature columns but {names_path} names "
                          f"{len(feat_names)}")
    try:
        order = np.argsort([int(n) for n in feat_names])
    except ValueError:
        order = np.arange(len(feat_names))  # non-numeric names: keep file order
    return _bags_from_rows(X[:, order], keys[:, 0], tail[:, 0], data_path)


def read_mat(directory):
    """MATLAB copy: X (inst × d), Bag2 (1-based bag id per instance), BagI (bag labels)."""
    from scipy.io import loadmat
    directory = Path(directory)

    def one(name):
        f = directory / f"{name}.mat"
        if not f.exists():
            raise SourceError(f"{f}: missing (a .mat dataset needs X.mat, Bag2.mat, BagI.mat)")
        m = {k: v for k, v in loadmat(f).items() if not k.startswith("__")}
        if len(m) != 1:
            raise SourceError(f"{f}: expected one variable, found {sorted(m)}")
        return np.asarray(next(iter(m.values())))

    X, bag, lab = one("X").astype(float), one("Bag2").ravel().astype(int), one("BagI").ravel()
    if len(bag) != len(X):
        raise SourceError(f"{directory}/Bag2.mat: {len(bag)} bag ids for {len(X)} instances")
    if bag.min() < 1 or bag.max() > len(lab):
        raise SourceError(f"{directory}/Bag2.mat: bag ids must be in 1..{len(lab)}")
    order = np.argsort(bag, kind="stable")
    sizes = np.bincount(bag - 1, minlength=len(lab))
    try:
        return Bags(X[order], np.concatenate([[0], np.cumsum(sizes)]), (lab > 0).astype(np.int8),
                    np.arange(1, len(lab) + 1).astype(str), meta={"raw": [str(directory)]})
    except BagError as e:
        raise SourceError(f"{directory}: {e}") from e


def read_arff(path):
    """Multi-instance ARFF (Weka): bag id, relational attribute of instances, class."""
    path = Path(path)
    text = path.read_text(errors="strict").splitlines()
    in_data, in_rel, n_inst_attrs, bags, labels, ids = False, False, 0, [], [], []
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
            elif low.startswith("@data"):
                in_data = True
            continue
        try:
            first, rest = line.split(",", 1)
            q = rest.index('"') if '"' in rest else rest.index("'")
            quote = rest[q]
            end = rest.rindex(quote)
            inner, label = rest[q + 1:end], rest[end + 1:].strip(" ,")
            inst = [[float(v) for v in r.split(",")] for r in inner.replace("\\n", "\n").split("\n") if r.strip()]
        except ValueError as e:
            raise SourceError(f"{path}, line {lineno}: malformed multi-instance row ({e})") from None
        if not inst:
            raise SourceError(f"{path}, line {lineno}: bag {first!r} has no instances")
        if any(len(r) != n_inst_attrs for r in inst):
            raise SourceError(f"{path}, line {lineno}: expected {n_inst_attrs} values per instance")
        bags.append(np.array(inst))
        ids.append(first.strip())
        labels.append(label)
    if not bags:
        raise SourceError(f"{path}: no @data rows")
    y = np.array([1 if str(v).strip("'\"") in ("1", "+1", "true", "pos", "positive") else 0
                  for v in labels], dtype=np.int8)
    try:
        return Bags.from_list(bags, y, bag_ids=ids, meta={"raw": [str(path)]})
    except BagError as e:
        raise SourceError(f"{path}: {e}") from e


def read_any(fmt, path, names=None):
    """Load a dataset of a given format (user datasets; SPEC §4 table)."""
    from .store import read_bags
    readers = {"csv": read_csv, "uci-musk": read_uci_musk, "mat": read_mat, "arff": read_arff,
               "parquet": read_bags, "c45": lambda p: read_c45(p, names)}
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
                         sha256={path.name: sha256_of(path)})
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
