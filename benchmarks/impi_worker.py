"""Runs inside every Intel MPI rank for figure 9: collsweep's harness timing MPI_Allreduce.

Usage: python -m benchmarks.impi_worker WARMUP BYTES:ITERATIONS [...]
For each size, on one pair of written float32 buffers (MPI_SUM), exactly what a sweep times for
algorithm `impi`: runners.ranks.algorithms.create('impi') bound to the buffers, timed by
runners.ranks.harness.measure (Barrier before each iteration, max over ranks) with a rule that
stops after ITERATIONS. Rank 0 prints one JSON line per size with the median.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from mpi4py import MPI

from runners.domain.collectives.inputs import fill_input
from runners.domain.sweep.stats import StopRule
from runners.ranks.algorithms import create
from runners.ranks.harness import measure
from runners.ranks.mpi_ops import mpi_op


def time_size(comm: MPI.Comm, nbytes: int, iterations: int, warmup: int) -> dict:
    """The harness's median at one size."""
    send = np.empty(nbytes // 4, dtype=np.float32)
    fill_input(send, comm.Get_rank(), "sum")
    recv = np.zeros_like(send)
    call = create("impi").bind(comm, send, recv, mpi_op("sum"))
    rule = StopRule(iterations, iterations, target_rel_ci=1e-12, budget_s=1e9)
    samples = measure(comm, [call], rule, warmup)
    return {"bytes": nbytes, "iterations": len(samples), "median_s": float(np.median(samples))}


def main(argv: list[str]) -> None:
    """Time every BYTES:ITERATIONS named on the command line."""
    comm, warmup = MPI.COMM_WORLD, int(argv[0])
    for arg in argv[1:]:
        nbytes, iterations = (int(part) for part in arg.split(":"))
        line = time_size(comm, nbytes, iterations, warmup)
        if comm.Get_rank() == 0:
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
