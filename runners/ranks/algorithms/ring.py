"""Ring allreduce: ring reduce-scatter followed by ring allgather."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from mpi4py import MPI

from runners.ranks.algorithms.base import Allreduce, block_bounds, mpi_type, sendrecv


class Ring(Allreduce):
    """Ring reduce-scatter + ring allgather over p near-equal datatype-aligned blocks.

    Works for any p. Each block's partial sum travels around the ring starting after its
    owner, so the reduction order wraps around rank p-1 -> 0: commutative ops only.
    Critical path: 2 (p-1) messages, 2 (p-1)/p * n bytes sent, (p-1)/p * n bytes reduced
    (with uneven blocks, the largest block sets each step).
    """

    name = "ring"

    def _run(self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op) -> None:
        recvbuf[...] = sendbuf
        rank, size = comm.Get_rank(), comm.Get_size()
        if size == 1:
            return
        dt = mpi_type(recvbuf)
        scatter, gather, largest = schedule(rank, size, recvbuf.size)
        tmp = self.scratch("tmp", recvbuf, largest)
        right, left = (rank + 1) % size, (rank - 1) % size
        for sent, target, into in scatter:
            incoming = tmp[into]
            sendrecv(comm, recvbuf[sent], right, incoming, left, dt)
            op.Reduce_local(incoming, recvbuf[target])
        for sent, received in gather:
            sendrecv(comm, recvbuf[sent], right, recvbuf[received], left, dt)


@lru_cache(maxsize=256)
def schedule(rank: int, size: int, count: int) -> tuple[tuple, tuple, int]:
    """This rank's steps as element ranges, worked out once per (rank, size, count).

    Reduce-scatter steps are (slice sent, slice reduced into, slice of the scratch buffer
    received into); allgather steps are (slice sent, slice received); last, the largest
    block (the scratch size). A timed call only slices and sends.
    """
    bounds = block_bounds(count, size)

    def block(i: int) -> slice:
        return slice(bounds[i % size], bounds[i % size + 1])

    scatter = []
    for step in range(size - 1):
        target = block(rank - step - 1)
        scatter.append((block(rank - step), target, slice(0, target.stop - target.start)))
    gather = tuple((block(rank + 1 - step), block(rank - step)) for step in range(size - 1))
    return tuple(scatter), gather, bounds[1] - bounds[0]
