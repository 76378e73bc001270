"""One call of a collective with its MPICH algorithm switched through MPI_T, as a sweep switches
it (runners.ranks.mpit.Switch, the values of runners.domain.libraries.mpich), on COUNT float64
elements: the counting op's calls (JSON, rank 0) show what ran, and MPICH prints a fallback
notice naming the algorithm where it cannot apply it (MPIR_CVAR_COLLECTIVE_FALLBACK=print).

argv: COLLECTIVE ALGORITHM COUNT (the collective: allreduce, reduce, reduce_scatter, allgather,
bcast; the algorithm: one of MPICH's names for it, or auto).
"""

import json
import sys

import numpy as np
from counting import COUNTING_SUM, calls
from mpi4py import MPI

from runners.domain.libraries.mpich import DEVICE_CVARS, INTRA_CVARS, INTRA_VALUES
from runners.ranks.mpit import Switch

collective, algorithm, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
comm = MPI.COMM_WORLD
switch = Switch([INTRA_CVARS[collective], DEVICE_CVARS[collective]])
switch.apply(
    {
        INTRA_CVARS[collective]: INTRA_VALUES[collective].index(algorithm),
        DEVICE_CVARS[collective]: int(algorithm == "auto"),
    }
)
size = comm.Get_size()
send = np.full(count, comm.Get_rank() + 1.0)
if collective == "allgather":
    recv = np.zeros(count * size)
    comm.Allgather(send, recv)
elif collective == "bcast":
    comm.Bcast(send, 0)
elif collective == "reduce":
    recv = np.zeros(count)
    comm.Reduce(send, recv, COUNTING_SUM, root=0)
elif collective == "reduce_scatter":
    recv = np.zeros(count // size)
    comm.Reduce_scatter_block(send, recv, COUNTING_SUM)
else:
    recv = np.zeros(count)
    comm.Allreduce(send, recv, COUNTING_SUM)
rows = comm.gather({"rank": comm.Get_rank(), "calls": list(calls)})
if comm.Get_rank() == 0:
    print(json.dumps(rows), flush=True)
