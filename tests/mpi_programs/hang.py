"""Every rank waits for a message that never comes."""

import numpy as np
from mpi4py import MPI

buf = np.empty(1)
MPI.COMM_WORLD.Recv(buf, source=MPI.ANY_SOURCE)
