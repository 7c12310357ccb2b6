"""Parquet bag store: one directory per dataset.

``instances.parquet``  bag_id, instance (position inside the bag), [instance_label],
                       one fixed-size-list<float32> column per view
``bags.parquet``       bag_id, label, name
``edges.parquet``      src, dst, weight, level (bag | instance) — only when there is a graph
``meta.json``          source, sha256 of raw inputs, shapes, views, creation parameters

Writes go to a temporary directory that is renamed into place, so a failed write never leaves a
half-written dataset behind.  The swap holds an exclusive ``flock`` on ``.<name>.lock`` beside
the store and a read a shared one, so two runs in one directory (``--nolock``) that build the
same store at once leave one whole store, and a read never sees a swap half-done.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from milbench.data.bags import Bags

FILES = ("instances.parquet", "bags.parquet", "meta.json")


class StoreError(ValueError):
    """A bag store that is missing, truncated or not laid out as the module docstring says."""


def write_bags(bags: Bags, outdir, extra_meta=None):
    outdir = Path(outdir)
    outdir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", dir=outdir.parent))
    try:
        sizes = bags.sizes
        cols = {
            "bag_id": pa.array(np.repeat(bags.bag_ids, sizes)),
            "instance": pa.array(np.concatenate([np.arange(s) for s in sizes]).astype(np.int32)),
        }
        if bags.instance_labels is not None:
            cols["instance_label"] = pa.array(np.asarray(bags.instance_labels, dtype=np.int8))
        for name, (a, b) in bags.views.items():
            block = np.ascontiguousarray(bags.instances[:, a:b], dtype=np.float32)
            cols[f"view_{name}"] = pa.FixedSizeListArray.from_arrays(pa.array(block.ravel()), b - a)
        pq.write_table(pa.table(cols), tmp / "instances.parquet")
        names = bags.names if bags.names is not None else bags.bag_ids
        pq.write_table(pa.table({"bag_id": pa.array(bags.bag_ids), "label": pa.array(bags.labels),
                                 "name": pa.array(np.asarray(names).astype(str))}),
                       tmp / "bags.parquet")
        if bags.edges is not None:
            pq.write_table(pa.Table.from_pandas(bags.edges, preserve_index=False),
                           tmp / "edges.parquet")
        meta = dict(bags.meta)
        meta.update(extra_meta or {})
        meta.update(n_bags=len(bags), n_instances=int(len(bags.instances)),
                    n_positive=int(bags.labels.sum()),
                    views={k: [int(a), int(b)] for k, (a, b) in bags.views.items()},
                    view_order=list(bags.views))
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=str))
        old = tmp.with_name(tmp.name + ".old")
        with store_lock(outdir, shared=False):
            if outdir.exists():
                os.replace(outdir, old)
            try:
                os.replace(tmp, outdir)
            except BaseException:
                if old.exists():
                    os.replace(old, outdir)
                raise
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return outdir


@contextlib.contextmanager
def store_lock(store, shared):
    """``flock`` on ``.<name>.lock`` beside a store: exclusive for the writer's swap (the file
    made if absent), shared for a reader.  None where a reader cannot open the file (no writer
    ever made it: a store written by hand, a read-only folder) or the file system has no
    ``flock`` (Lustre mounted without it): the swap is then two renames, unguarded."""
    lock = Path(store).parent / f".{Path(store).name}.lock"
    try:
        fd = os.open(lock, os.O_RDONLY if shared else os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        if not shared:
            raise
        yield
        return
    try:
        with contextlib.suppress(OSError):    # ENOLCK, EOPNOTSUPP, ENOSYS: no locks here
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_frame(frame, path):
    """A DataFrame to Parquet at ``path`` through a temporary file beside it, renamed into place:
    a reader, or a second writer of the same file, never sees it half-written."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _check_store(indir):
    if not indir.is_dir():
        what = "a file" if indir.exists() else "nothing there"
        raise StoreError(f"{indir}: expected a bag-store directory holding {', '.join(FILES)}; "
                         f"found {what}")
    missing = [f for f in FILES if not (indir / f).is_file()]
    if missing:
        raise StoreError(f"{indir}: bag store lacks {', '.join(missing)} (expected {', '.join(FILES)})")


def _read_table(path, columns=None, schema_only=False):
    try:
        return pq.read_schema(path) if schema_only else pq.read_table(path, columns=columns)
    except Exception as e:                       # ArrowInvalid (truncated), KeyError-like columns
        raise StoreError(f"{path}: cannot read as a bag-store Parquet table "
                         f"({type(e).__name__}: {e})") from e


def read_bags(indir, views=None) -> Bags:
    """Read a dataset directory; ``views`` restricts to some named views (column groups).
    Raises :class:`StoreError` naming the file for a missing, truncated or malformed store."""
    indir = Path(indir)
    with store_lock(indir, shared=True):
        return _read_bags(indir, views)


def _read_bags(indir, views):
    _check_store(indir)
    try:
        meta = json.loads((indir / "meta.json").read_text())
        all_views = meta.get("view_order", list(meta["views"]))
    except (ValueError, KeyError, TypeError) as e:
        raise StoreError(f"{indir / 'meta.json'}: not a bag-store meta file "
                         f"({type(e).__name__}: {e})") from e
    views = all_views if views is None else list(views)
    unknown = set(views) - set(all_views)
    if unknown:
        raise StoreError(f"{indir}: unknown view(s) {sorted(unknown)}; available {all_views}")
    schema_names = _read_table(indir / "instances.parquet", schema_only=True).names
    cols = ["bag_id"] + [f"view_{v}" for v in views]
    if "instance_label" in schema_names:
        cols.append("instance_label")
    inst = _read_table(indir / "instances.parquet", columns=cols)
    blocks, view_ranges, start = [], {}, 0
    for v in views:
        col = inst.column(f"view_{v}").combine_chunks()
        d = col.type.list_size
        blocks.append(col.flatten().to_numpy(zero_copy_only=False).reshape(-1, d))
        view_ranges[v] = (start, start + d)
        start += d
    X = np.hstack(blocks) if len(blocks) > 1 else blocks[0]
    bag_tab = _read_table(indir / "bags.parquet", columns=["bag_id", "label", "name"]).to_pandas()
    inst_bag = inst.column("bag_id").to_numpy(zero_copy_only=False)
    ids = bag_tab["bag_id"].to_numpy().astype(str)
    # instances are stored grouped by bag in bag order; verify and derive offsets
    change = np.flatnonzero(inst_bag[1:] != inst_bag[:-1]) + 1
    starts = np.concatenate([[0], change])
    if len(starts) != len(ids) or not (inst_bag[starts].astype(str) == ids).all():
        raise StoreError(f"{indir}/instances.parquet: instances are not grouped in bags.parquet order")
    sizes = np.diff(np.concatenate([starts, [len(inst_bag)]]))
    edges = None
    if (indir / "edges.parquet").exists():
        edges = _read_table(indir / "edges.parquet").to_pandas()
    il = inst.column("instance_label").to_numpy() if "instance_label" in cols else None
    return Bags(X, np.concatenate([[0], np.cumsum(sizes)]), bag_tab["label"].to_numpy(), ids,
                names=bag_tab["name"].to_numpy(), instance_labels=il, views=view_ranges,
                edges=edges, meta=meta)
