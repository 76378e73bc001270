"""Ring allreduce: ring reduce-scatter followed by ring allgather."""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from runners.algorithms.base import Allreduce, block_bounds, mpi_type, sendrecv


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
        bounds = block_bounds(recvbuf.size, size)
        tmp = self.scratch("tmp", recvbuf, bounds[1] - bounds[0])
        right, left = (rank + 1) % size, (rank - 1) % size

        def block(i: int) -> np.ndarray:
            return recvbuf[bounds[i] : bounds[i + 1]]

        for step in range(size - 1):
            target = block((rank - step - 1) % size)
            incoming = tmp[: target.size]
            sendrecv(comm, block((rank - step) % size), right, incoming, left, dt)
            op.Reduce_local(incoming, target)
        for step in range(size - 1):
            sendrecv(
                comm, block((rank + 1 - step) % size), right, block((rank - step) % size), left, dt
            )
