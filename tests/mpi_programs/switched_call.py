"""One call of a collective with its MPICH algorithm switched through MPI_T, as a sweep switches
it (runners.ranks.mpit.Switch, the values of runners.domain.libraries.mpich), on COUNT float64
elements: the counting op's calls (JSON, rank 0) show what ran, and MPICH prints a fallback
notice naming the algorithm where it cannot apply it (MPIR_CVAR_COLLECTIVE_FALLBACK=print).

argv: COLLECTIVE ALGORITHM COUNT (the collective: allreduce, reduce, reduce_scatter, allgather,
bcast; the algorithm: one of MPICH's names for it, or auto).
"""

import json
import sys

from counting import calls, counted_call
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
ok = counted_call(comm, collective, count)
rows = comm.gather({"rank": comm.Get_rank(), "calls": list(calls), "ok": ok})
if comm.Get_rank() == 0:
    print(json.dumps(rows), flush=True)
