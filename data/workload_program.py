"""A tiny data-parallel training job, the program behind the preset workload data/workload.json.

Rank 0 broadcasts the "parameters" (2.5 MiB float32), then each of 20 steps sums the gradients
over the ranks in four buckets, as DDP does (two of 1 MiB, one of 256 KiB, one of 4 KiB, float32,
MPI_SUM, largest first), and the loss (one float32), and takes an SGD step. Every result is
checked on every rank (exact: small integers and binary fractions in float32); a wrong one
aborts the job with status 1. Recorded with

    collsweep record --name data-parallel-demo --out data/workload.json -- \\
        mpiexec -n 2 python data/workload_program.py

(tests/workload/test_record.py records it again and holds the result against the committed file).
"""

import numpy as np
from mpi4py import MPI

STEPS = 20
PARAMETERS = 5 * 2**17  # 2.5 MiB of float32
BUCKETS = (2**18, 2**18, 2**16, 2**10)  # elements: 1 MiB, 1 MiB, 256 KiB, 4 KiB of float32
LEARNING_RATE = np.float32(2.0**-10)

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()


def check(ok: bool, what: str) -> None:
    """Abort the whole job on a wrong result."""
    if not ok:
        print(f"rank {rank}: wrong {what}", flush=True)
        world.Abort(1)


params = (
    np.arange(PARAMETERS, dtype=np.float32) % 64 if rank == 0 else np.zeros(PARAMETERS, np.float32)
)
world.Bcast(params, root=0)
check(bool(np.all(params == np.arange(PARAMETERS, dtype=np.float32) % 64)), "parameters")

ranks_sum = size * (size + 1) // 2  # sum over ranks of (rank + 1)
buckets = [np.empty(n, np.float32) for n in BUCKETS]
summed = [np.empty(n, np.float32) for n in BUCKETS]
for step in range(STEPS):
    for bucket, total in zip(buckets, summed, strict=True):
        pattern = (np.arange(bucket.size) + step) % 8
        bucket[:] = (rank + 1) * pattern
        world.Allreduce(bucket, total, op=MPI.SUM)
        check(bool(np.all(total == ranks_sum * pattern)), f"gradients at step {step}")
    loss = np.array([(rank + 1) * 0.25], np.float32)
    mean_loss = np.empty(1, np.float32)
    world.Allreduce(loss, mean_loss, op=MPI.SUM)
    check(bool(mean_loss[0] == ranks_sum * 0.25), f"loss at step {step}")
    gradient = np.concatenate(summed)[: params.size]
    params[: gradient.size] -= LEARNING_RATE * gradient / np.float32(size)
