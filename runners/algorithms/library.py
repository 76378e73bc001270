"""The MPI library's own MPI_Allreduce."""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from runners.algorithms.base import Allreduce, mpi_type


class LibraryAllreduce(Allreduce):
    """comm.Allreduce: the library's autotuned choice, or the algorithm its environment forces."""

    name = "mpi"

    def _run(self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op) -> None:
        dt = mpi_type(recvbuf)
        comm.Allreduce([sendbuf, sendbuf.size, dt], [recvbuf, recvbuf.size, dt], op)
