"""Memory planning of blocked computations over stacked bags: the row blocks of whole bags
(a large bag split into chunks of rows), the size of the blocks that fit a memory limit, and
the error naming the data set's largest bag when not even one row fits."""
from __future__ import annotations

import numpy as np


class MemoryLimitError(MemoryError):
    """A computation's estimated peak memory is over the limit it may use."""


def memory_limit_error(what, need, limit, offsets, setting):
    """:class:`MemoryLimitError` for ``what`` (the computation and its sizes), estimated to
    peak at ``need`` bytes over ``limit``, naming the data set's largest bag (from the stacked
    bag ``offsets``) and ``setting``, what to change."""
    sizes = np.diff(np.asarray(offsets))
    big = int(np.argmax(sizes)) if len(sizes) else 0
    largest = (f"its largest bag is bag {big} with {int(sizes[big])} instances "
               f"({len(sizes)} bags, {int(sizes.sum())} instances)") if len(sizes) else "no bags"
    return MemoryLimitError(f"{what}: needs about {need / 2**30:.2f} GiB at its peak but the "
                            f"limit is {limit / 2**30:.2f} GiB; {largest}. {setting}")


def bag_blocks(off, block_rows):
    """Consecutive blocks of whole bags of about ``block_rows`` instances (at least one bag):
    yields (first bag, end bag, first row, end row)."""
    n = len(off) - 1
    s = 0
    while s < n:
        e = int(np.searchsorted(off, off[s] + block_rows, side="right")) - 1
        e = min(max(e, s + 1), n)
        yield s, e, off[s], off[e]
        s = e


def row_blocks(off, block_rows, split):
    """:func:`bag_blocks`; with ``split``, a bag of more than ``block_rows`` instances comes
    in chunks of ``block_rows`` rows, each yielded as (bag, bag + 1, first row, end row)."""
    for s, e, r0, r1 in bag_blocks(off, block_rows):
        if split and r1 - r0 > block_rows:          # one bag (bag_blocks groups up to rows)
            for c in range(r0, r1, block_rows):
                yield s, e, c, min(c + block_rows, r1)
        else:
            yield s, e, r0, r1


def largest_block(off, block_rows, cols, triangular=False):
    """Entries of the largest row block of :func:`bag_blocks`: its rows × ``cols`` (the
    instances it is compared with; ``triangular``: those from its first row on)."""
    return max(((r1 - r0) * (cols - (r0 if triangular else 0))
                for _, _, r0, r1 in bag_blocks(off, block_rows)), default=0)


def block_plan(block_rows, block, cols, fixed, per, max_bytes, offsets, what, setting):
    """(rows, split) of a blocked computation whose default blocks of ``block_rows`` peak at
    ``fixed`` bytes (results) + ``per`` bytes × ``block`` entries (its largest block): the
    default when that fits ``max_bytes`` (None: no limit); else the rows of ``cols`` entries
    that fit, with ``split`` (bags larger than that are split into chunks of rows); else
    :class:`MemoryLimitError` naming ``what``, the largest bag of
    ``offsets`` and ``setting``."""
    if max_bytes is None or fixed + per * block <= max_bytes:
        return block_rows, False
    fit = int((max_bytes - fixed) // (per * max(cols, 1)))
    if fit < 1:
        raise memory_limit_error(what, fixed + per * cols, max_bytes, offsets, setting)
    return min(block_rows, fit), True
