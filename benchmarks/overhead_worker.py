"""Runs inside every rank for figure 1: collsweep's harness vs the C timing loop, in turns.

Usage: python -m benchmarks.overhead_worker LIBRARY WARMUP REPS BYTES:ITERATIONS [...]
For each size, on one pair of written float32 buffers (MPI_SUM): REPS rounds, each timing
ITERATIONS iterations with the C loop of LIBRARY (benchmarks/allreduce_timer.c, called
through ctypes) and ITERATIONS with the harness, the order alternating per round. The
harness side is exactly what a sweep times for algorithm `mpi`: runners.ranks.algorithms.create
('mpi') bound to the buffers, timed by runners.ranks.harness.measure with a rule that stops after
ITERATIONS (one batch, as the C loop). Same process, same buffers, same MPI: only the timing
code differs. Rank 0 prints one JSON line per size with each round's two medians.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from benchmarks.ctimer import loop
from runners.domain.collectives.inputs import fill_input
from runners.domain.sweep.stats import StopRule
from runners.ranks.algorithms import create
from runners.ranks.harness import measure
from runners.ranks.mpi_ops import mpi_op


def time_size(comm: MPI.Comm, time_c, nbytes: int, iterations: int, plan: tuple[int, int]) -> dict:
    """Both sides' median per round at one size."""
    warmup, reps = plan
    send = np.empty(nbytes // 4, dtype=np.float32)
    fill_input(send, comm.Get_rank(), "sum")
    recv = np.empty_like(send)
    recv.fill(0)
    call = create("mpi").bind(comm, send, recv, mpi_op("sum"))
    rule = StopRule(iterations, iterations, target_rel_ci=1e-12, budget_s=1e9)
    medians: dict[str, list[float]] = {"c": [], "py": []}
    for rep in range(reps):
        for side in ("c", "py") if rep % 2 == 0 else ("py", "c"):
            if side == "c":
                samples = time_c(send, recv, iterations, warmup)
            else:
                samples = measure(comm, [call], rule, warmup)
            medians[side].append(float(np.median(samples)))
    return {"bytes": nbytes, "iterations": iterations, **medians}


def main(argv: list[str]) -> None:
    """Time every BYTES:ITERATIONS named on the command line."""
    time_c = loop(Path(argv[0]))
    plan = (int(argv[1]), int(argv[2]))
    comm = MPI.COMM_WORLD
    for arg in argv[3:]:
        nbytes, iterations = (int(part) for part in arg.split(":"))
        line = time_size(comm, time_c, nbytes, iterations, plan)
        if comm.Get_rank() == 0:
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
