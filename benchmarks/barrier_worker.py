"""Runs inside every rank for figure 3's factor study: a Barrier before every call, or none.

Usage: python -m benchmarks.barrier_worker ALGORITHM ROUNDS BYTES [BYTES ...]
For each size the algorithm gets its buffers and is run and checked once as a sweep does
(runners.ranks.sweep_worker.first_call), then timed in ROUNDS rounds, each two blocks of the
same number of calls in alternating order:
- synchronised: an MPI_Barrier before every call, each call timed alone, max over ranks (the
  sweep's harness, runners.ranks.harness);
- back to back: one MPI_Barrier, then the calls with nothing between them; per call = the
  block's time / calls, max over ranks (how OSU's older versions and nccl-tests time).
The results are checked again afterwards. Rank 0 prints one JSON line per size: the median per
call of each mode and the median over rounds of the two modes' ratio in the same round.
"""

from __future__ import annotations

import json
import sys
from time import perf_counter

import numpy as np
from mpi4py import MPI

from runners.domain.collectives.datatypes import ops_of
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.status import PointStatus
from runners.ranks.algorithms import create
from runners.ranks.mpi_ops import mpi_op
from runners.ranks.sweep_worker import Buffers, check_results, first_call

DTYPE, OP, WARMUP = "float32", "sum", 10
BLOCK_S = 2e-3  # a block's length: long enough to hold several calls, short against a state


def synchronised(comm: MPI.Comm, call, calls: int) -> float:
    """Median over the block of each call's time (Barrier before each), max over ranks."""
    times = np.empty(calls)
    for i in range(calls):
        comm.Barrier()
        start = perf_counter()
        call()
        times[i] = perf_counter() - start
    comm.Allreduce(MPI.IN_PLACE, times, op=MPI.MAX)
    return float(np.median(times))


def back_to_back(comm: MPI.Comm, call, calls: int) -> float:
    """The block's time per call (one Barrier before it), max over ranks."""
    comm.Barrier()
    start = perf_counter()
    for _ in range(calls):
        call()
    elapsed = np.array([(perf_counter() - start) / calls])
    comm.Allreduce(MPI.IN_PLACE, elapsed, op=MPI.MAX)
    return float(elapsed[0])


def calls_per_block(comm: MPI.Comm, call) -> int:
    """How many calls fill BLOCK_S: the same on every rank, as `synchronised` already takes
    the maximum over ranks."""
    one = synchronised(comm, call, 5)
    return int(max(5, min(500, BLOCK_S / max(one, 1e-7))))


def time_size(comm: MPI.Comm, name: str, nbytes: int, rounds: int) -> dict:
    """Both modes at one size, interleaved round by round."""
    (op,) = ops_of(ALGORITHMS[name].collective, [OP])
    collective = ALGORITHMS[name].collective
    impl, buffers = create(name), Buffers.make(comm, collective, DTYPE, op, nbytes // 4, False)
    status, why = first_call(comm, name, impl, buffers, op)
    if status != PointStatus.OK:
        return {"bytes": nbytes, "skipped": why}
    call = impl.bind(comm, *buffers.pairs[0], mpi_op(op))
    buffers.clear_results()
    for _ in range(WARMUP):
        call()
    calls = calls_per_block(comm, call)
    pairs = []
    for r in range(rounds):
        first, second = (synchronised, back_to_back) if r % 2 == 0 else (back_to_back, synchronised)
        a, b = first(comm, call, calls), second(comm, call, calls)
        pairs.append((a, b) if first is synchronised else (b, a))
    if wrong := check_results(comm, buffers):
        return {"bytes": nbytes, "skipped": wrong}
    synced, b2b = np.array(pairs).T
    return {
        "bytes": nbytes,
        "calls": calls,
        "synchronised_s": float(np.median(synced)),
        "back_to_back_s": float(np.median(b2b)),
        "paired_ratio": float(np.median(b2b / synced)),
    }


def main(argv: list[str]) -> None:
    """Time the algorithm at every size named on the command line."""
    name, rounds = argv[0], int(argv[1])
    comm = MPI.COMM_WORLD
    for nbytes in (int(arg) for arg in argv[2:]):
        line = time_size(comm, name, nbytes, rounds)
        if comm.Get_rank() == 0:
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
