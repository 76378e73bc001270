"""Binomial-tree reduce to rank 0 followed by a binomial-tree broadcast from rank 0."""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from runners.ranks.algorithms.base import Allreduce, combine, mpi_type


class BinomialTree(Allreduce):
    """Binomial-tree reduce + binomial-tree broadcast, for any p.

    Reduce: in round k a rank whose lowest set bit is 2^k sends its partial result (covering
    ranks [r, r + 2^k)) to r - 2^k, which appends it on the right, so noncommutative ops
    keep rank order. Broadcast: the same tree in reverse. Critical path for any p:
    2 ceil(log2 p) messages, 2 ceil(log2 p) * n bytes sent, ceil(log2 p) * n bytes reduced.
    """

    name = "binomial_tree"

    def _run(self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op) -> None:
        recvbuf[...] = sendbuf
        if comm.Get_size() == 1:
            return
        dt = mpi_type(recvbuf)
        self._reduce(comm, recvbuf, self.scratch("tmp", recvbuf), op, dt)
        self._broadcast(comm, recvbuf, dt)

    @staticmethod
    def _reduce(
        comm: MPI.Comm, buf: np.ndarray, tmp: np.ndarray, op: MPI.Op, dt: MPI.Datatype
    ) -> None:
        rank, size = comm.Get_rank(), comm.Get_size()
        mask = 1
        while mask < size:
            if rank & mask:
                comm.Send([buf, buf.size, dt], rank - mask, 3)
                return
            if rank + mask < size:
                comm.Recv([tmp, tmp.size, dt], rank + mask, 3)
                combine(op, buf, tmp, mine_is_left=True)
            mask <<= 1

    @staticmethod
    def _broadcast(comm: MPI.Comm, buf: np.ndarray, dt: MPI.Datatype) -> None:
        rank, size = comm.Get_rank(), comm.Get_size()
        mask = 1
        while mask < size:
            if rank & mask:
                comm.Recv([buf, buf.size, dt], rank - mask, 4)
                break
            mask <<= 1
        mask >>= 1
        while mask > 0:
            if rank + mask < size:
                comm.Send([buf, buf.size, dt], rank + mask, 4)
            mask >>= 1
