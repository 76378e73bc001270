"""The MPI library's own MPI_Allreduce."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
from mpi4py import MPI

from runners.ranks.algorithms.base import Allreduce, mpi_type


class LibraryAllreduce(Allreduce):
    """comm.Allreduce: the library's autotuned choice, or the algorithm its environment forces."""

    name = "mpi"

    def _bound(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op
    ) -> Callable[[], None]:
        """comm.Allreduce itself, with its [buffer, count, datatype] specs built once.

        Building the specs and the extra Python frame per call cost about 0.3-0.4 us, most of
        what the harness added to an 8-byte MPI_Allreduce (benchmarks, figure 1); mpi4py
        takes a memoryview's buffer about 0.1 us faster than a numpy array's.
        """
        dt = mpi_type(recvbuf)
        send = [memoryview(sendbuf), sendbuf.size, dt]
        recv = [memoryview(recvbuf), recvbuf.size, dt]
        return partial(comm.Allreduce, send, recv, op)
