"""The MPI library's own collective calls (MPI_Allreduce, MPI_Reduce_scatter_block,
MPI_Allgather, MPI_Bcast, MPI_Reduce)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
from mpi4py import MPI

from runners.domain.collectives.collective import ROOT
from runners.ranks.algorithms.base import Allreduce, mpi_type


class LibraryAllreduce(Allreduce):
    """The library's own call: its autotuned choice, or the algorithm its environment forces."""

    def __init__(self, name: str = "mpi") -> None:
        super().__init__()
        self.name = name

    def _bound(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op | None
    ) -> Callable[[], None]:
        """The library call itself, with its [buffer, count, datatype] specs built once.

        Building the specs and the extra Python frame per call cost about 0.3-0.4 us, most of
        what the harness added to an 8-byte MPI_Allreduce (benchmarks, figure 1); mpi4py
        takes a memoryview's buffer about 0.1 us faster than a numpy array's.
        """
        dt = mpi_type(recvbuf)
        send = [sendbuf.data, sendbuf.size, dt]
        recv = [recvbuf.data, recvbuf.size, dt]
        collective = self.spec.collective
        if collective in ("allgather", "bcast"):
            if collective == "allgather":  # mpi4py counts the receive buffer per rank
                recv = [recvbuf.data, sendbuf.size, dt]
                return partial(comm.Allgather, send, recv)
            return partial(comm.Bcast, recv, ROOT)
        if op is None:
            raise ValueError(f"{self.spec.name} reduces, but no op was given")
        if collective == "reduce_scatter":  # mpi4py counts the send buffer per block
            send = [sendbuf.data, recvbuf.size, dt]
            return partial(comm.Reduce_scatter_block, send, recv, op)
        if collective == "reduce":
            return partial(comm.Reduce, send, recv, op, ROOT)
        return partial(comm.Allreduce, send, recv, op)
