"""Bags -> WEKA's multi-instance ARFF (the form :func:`milbench.data.sources.read_arff` reads): a
nominal bag-id attribute, one relational attribute holding the bag's instances, the class.

    python -m milbench.data.arff musk1 musk1.arff --data ../shared/data     # a built-in data set
    python -m milbench.data.arff results/bags/musk1 musk1.arff              # a bag store (pipeline)

Values are written with enough digits to read back bit for bit (9 significant digits for
float32, 17 for float64), so :func:`read_arff` returns the same bags (tested).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from milbench.data.sources import load_builtin, load_dataset
from milbench.data.store import read_bags

_PLAIN = re.compile(r"[A-Za-z0-9_.+\-]+")


def arff_quote(s):
    """A nominal value or name as ARFF writes it: bare when plain, else in single quotes with
    backslash escapes."""
    s = str(s)
    if _PLAIN.fullmatch(s) and s != "?":
        return s
    esc = s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
    return f"'{esc}'"


def _rows(X):
    """One 'v,v,...' string per instance row; exact for the array's dtype."""
    fmt = "%.9g" if X.dtype == np.float32 else "%.17g"
    cells = np.char.mod(fmt, X)
    return [",".join(r) for r in cells]


def write_mi_arff(bags, path, relation=None, bag_id_values=None, class_values=("0", "1")):
    """Write ``bags`` (a :class:`milbench.data.bags.Bags`) as a multi-instance ARFF file.

    relation : the @relation name (default: the data set's name in ``bags.meta``, else "bags").
    bag_id_values : the declared domain of the bag-id attribute (default: this file's bag ids).
        WEKA refuses train / test files whose headers differ, so a fold's two files declare all
        bag ids of the data set.
    class_values : (negative, positive) spellings of the class.
    """
    ids = [str(b) for b in bags.bag_ids]
    domain = ids if bag_id_values is None else [str(v) for v in bag_id_values]
    missing = sorted(set(ids) - set(domain))
    if missing:
        raise ValueError(f"bag ids {missing[:3]} are not among bag_id_values")
    relation = relation or bags.meta.get("dataset", "bags")
    X = bags.instances if bags.instances.dtype in (np.float32, np.float64) \
        else bags.instances.astype(np.float64)
    rows = _rows(X)
    header = [f"@relation {arff_quote(relation)}",
              f"@attribute bag_id {{{','.join(arff_quote(v) for v in domain)}}}",
              "@attribute bag relational"]
    header += [f"  @attribute f{k + 1} numeric" for k in range(X.shape[1])]
    header += ["@end bag",
               f"@attribute class {{{','.join(arff_quote(v) for v in class_values)}}}",
               "@data"]
    cls = [arff_quote(class_values[int(v)]) for v in bags.labels]
    off = bags.offsets
    sep = "\\n"                       # ARFF's escaped newline between a bag's instances
    data = [f'{arff_quote(ids[b])},"{sep.join(rows[off[b]:off[b + 1]])}",{cls[b]}'
            for b in range(len(ids))]
    Path(path).write_text("\n".join(header + data) + "\n")
    return Path(path)


def main(argv=None):
    """Export a built-in data set or a bag store to multi-instance ARFF."""
    ap = argparse.ArgumentParser(prog="python -m milbench.data.arff", description=main.__doc__)
    ap.add_argument("source", help="a built-in data set name (musk1, fox, ...) or a bag-store "
                                   "directory (results/bags/<dataset>)")
    ap.add_argument("out", help="the .arff file to write")
    ap.add_argument("--data", help="directory laid out like the manifest's raw files (else the "
                                   "offline copy a PyPI dependency ships)")
    args = ap.parse_args(argv)
    if Path(args.source).is_dir():
        bags = read_bags(args.source)
        bags.meta.setdefault("dataset", Path(args.source).name)
    elif args.data:
        bags = load_dataset(args.source, args.data)
    else:
        bags = load_builtin(args.source, offline=True)
    out = write_mi_arff(bags, args.out)
    print(f"{out}: {len(bags)} bags, {len(bags.instances)} instances, {bags.n_features} features")


if __name__ == "__main__":
    main()
