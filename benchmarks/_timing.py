"""Timing helper shared by the benchmark scripts (``from benchmarks._timing import best_of``)."""
from __future__ import annotations

import time
from typing import Any, NamedTuple


class Timing(NamedTuple):
    wall: float   # best wall seconds per call
    cpu: float    # best CPU seconds of this process per call (steadier on a shared machine)
    out: Any      # the last call's result


def best_of(fn, repeats=1, number=1):
    """Best wall and CPU seconds per call of ``fn`` over ``repeats`` rounds of ``number`` calls."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(number):
            out = fn()
        wall = min(wall, (time.perf_counter() - t) / number)
        cpu = min(cpu, (time.process_time() - c) / number)
    return Timing(wall, cpu, out)
