"""Runs inside every rank for figure 5: memory copy and local reduction throughput.

Usage: python -m benchmarks.limits_worker BYTES BUDGET_S
Every rank works at once (as the ranks of an allreduce do), timed by runners.ranks.harness.measure:
numpy.copyto between two BYTES buffers, then op.Reduce_local(inbuf, inoutbuf) with MPI_SUM
per datatype, as the algorithms combine blocks (on smaller buffers where one call would
take over a tenth of BUDGET_S). Rank 0 prints one JSON line per measurement with the median
seconds (max over ranks) and the bytes of one buffer.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from time import perf_counter

import numpy as np
from mpi4py import MPI

from runners.domain.collectives.datatypes import DTYPES
from runners.domain.collectives.inputs import fill_input
from runners.domain.sweep.stats import StopRule, summarize
from runners.ranks.harness import measure
from runners.ranks.mpi_ops import reduction_op


def copy_call(nbytes: int) -> Callable[[], None]:
    """numpy.copyto between two written buffers of `nbytes`."""
    src = np.full(nbytes, 7, dtype=np.uint8)
    dst = np.ones(nbytes, dtype=np.uint8)
    return lambda: np.copyto(dst, src)


def reduce_call(rank: int, dtype: str, nbytes: int) -> Callable[[], None]:
    """MPI_SUM's Reduce_local over written buffers of `nbytes` of `dtype`."""
    inbuf = np.empty(nbytes // DTYPES[dtype].itemsize, dtype=DTYPES[dtype])
    inoutbuf = np.empty_like(inbuf)
    fill_input(inbuf, rank + 1, "sum")
    fill_input(inoutbuf, rank, "sum")
    reduce_local = reduction_op("sum").Reduce_local
    return lambda: reduce_local(inbuf, inoutbuf)


def affordable_bytes(comm: MPI.Comm, rank: int, dtype: str, nbytes: int, budget_s: float) -> int:
    """`nbytes`, or less for a slow reduction (float16): a call should take <= budget / 10.

    A slow reduction is compute-bound, so a smaller buffer gives the same rate.
    """
    probe = min(nbytes, 2**20)
    call = reduce_call(rank, dtype, probe)
    call()
    start = perf_counter()
    call()
    rate = probe / max(comm.allreduce(perf_counter() - start, op=MPI.MAX), 1e-9)
    fitting = int(rate * budget_s / 10) // probe * probe
    return max(probe, min(nbytes, fitting))


def timed(comm: MPI.Comm, call: Callable[[], None], budget_s: float) -> float:
    """Median seconds of `call` over the ranks (the slower rank's each iteration)."""
    rule = StopRule(min_iterations=5, max_iterations=200, target_rel_ci=0.01, budget_s=budget_s)
    return summarize(measure(comm, [call], rule, warmup=2)).median_s


def main(argv: list[str]) -> None:
    """Copy, then every datatype's reduction; one JSON line each from rank 0."""
    nbytes, budget_s = int(argv[0]), float(argv[1])
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    report(comm, "copy", "uint8", nbytes, timed(comm, copy_call(nbytes), budget_s))
    for dtype in DTYPES:
        size = affordable_bytes(comm, rank, dtype, nbytes, budget_s)
        seconds = timed(comm, reduce_call(rank, dtype, size), budget_s)
        report(comm, "reduce_local sum", dtype, size, seconds)


def report(comm: MPI.Comm, kind: str, dtype: str, nbytes: int, seconds: float) -> None:
    """One JSON line from rank 0."""
    if comm.Get_rank() == 0:
        line = {"kind": kind, "dtype": dtype, "bytes": nbytes, "median_s": seconds}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
