"""Rank 1 raises while rank 0 waits for a message that never comes."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
if comm.Get_rank() == 1:
    raise RuntimeError("deliberate failure on rank 1")
buf = np.empty(1)
comm.Recv(buf, source=MPI.ANY_SOURCE)
