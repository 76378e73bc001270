"""One MPI_Bcast of COUNT float64 from rank 0 on MPI_COMM_WORLD, checked on every rank: the
call whose messages Open MPI's pml/monitoring writes out at MPI_Finalize (tests/helpers/
fingerprints.py, openmpi_sends).

argv: COUNT
"""

import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
count = int(sys.argv[1])
buf = np.arange(count, dtype=np.float64) if comm.Get_rank() == 0 else np.zeros(count)
comm.Bcast(buf, root=0)
assert np.array_equal(buf, np.arange(count, dtype=np.float64)), comm.Get_rank()
