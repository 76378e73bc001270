"""Known collective calls for tests/workload/test_record.py through mpi4py, each result checked
(MPI_Abort(1) on a wrong one): the same calls as record_calls.c, see expected() there.

Usage: python record_calls.py [calls|disagree|fail]
"""

import sys

import numpy as np
from mpi4py import MPI

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
mode = sys.argv[1] if len(sys.argv) > 1 else "calls"


def check(ok: bool, what: str) -> None:
    if not ok:
        print(f"rank {rank}: wrong result of {what}", file=sys.stderr, flush=True)
        world.Abort(1)


root = 1 if size > 1 else 0
params = np.arange(256, dtype=np.float32) if rank == root else np.full(256, -1, np.float32)
world.Bcast(params, root=root)
check(bool(np.all(params == np.arange(256))), "bcast")

pattern = np.arange(1024) % 5
for _step in range(3):
    grads = (rank + pattern).astype(np.float32)
    summed = np.empty_like(grads)
    world.Allreduce(grads, summed, op=MPI.SUM)
    check(bool(np.all(summed == size * (size - 1) // 2 + size * pattern)), "allreduce")
    loss, total = np.array([rank + 0.5]), np.empty(1)
    world.Allreduce(loss, total, op=MPI.SUM)
    check(total[0] == size * (size - 1) / 2 + 0.5 * size, "scalar allreduce")

flags = (rank * 100 + np.arange(100)).astype(np.int32)
world.Allreduce(MPI.IN_PLACE, flags, op=MPI.SUM if mode == "disagree" and rank == 0 else MPI.MAX)
if mode != "disagree":
    check(bool(np.all(flags == (size - 1) * 100 + np.arange(100))), "in-place allreduce")

for times in range(2):
    values = rank + np.arange(8.0) + times
    reduced = np.empty(8) if rank == 0 else None
    world.Reduce(values, reduced, op=MPI.SUM, root=0)
    if rank == 0:
        expect = size * (size - 1) / 2 + size * (np.arange(8.0) + times)
        check(bool(np.all(reduced == expect)), "reduce")

mine = (rank * 10 + np.arange(4)).astype(np.int32)
gathered = np.empty(4 * size, np.int32)
world.Allgather(mine, gathered)
expect = (np.repeat(np.arange(size), 4) * 10 + np.tile(np.arange(4), size)).astype(np.int32)
check(bool(np.all(gathered == expect)), "allgather")
gathered[:] = -1
gathered[4 * rank : 4 * rank + 4] = mine
world.Allgather(MPI.IN_PLACE, gathered)
check(bool(np.all(gathered == expect)), "in-place allgather")

blocks = (rank + np.arange(2 * size)).astype(np.float32)
block = np.empty(2, np.float32)
world.Reduce_scatter_block(blocks, block, op=MPI.SUM)
check(bool(np.all(block == size * (size - 1) // 2 + size * (2 * rank + np.arange(2)))), "rsb")

out = (rank * 100 + np.arange(size)).astype(np.int32)
into = np.empty(size, np.int32)
world.Barrier()
world.Alltoall(out, into)
check(bool(np.all(into == np.arange(size) * 100 + rank)), "alltoall")

half = world.Split(rank % 2, rank)
ones, counted = np.ones(16, np.float32), np.empty(16, np.float32)
half.Allreduce(ones, counted, op=MPI.SUM)
check(bool(np.all(counted == half.Get_size())), "allreduce on half the ranks")
half.Free()

grads = np.ones(1024, np.float32)
world.Allreduce(grads, summed, op=MPI.SUM)
check(bool(np.all(summed == size)), "last allreduce")

if mode == "fail":
    MPI.Finalize()
    sys.exit(3)
