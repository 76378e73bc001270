"""Prints, gathered from every rank as one JSON list, the calls a counting user op received.

A forced MPICH algorithm leaves a fingerprint in how often, and on how many elements, the
local reduction runs: recursive doubling reduces the full count log2 p times on every rank,
ring reduces count/p elements p-1 times, reduce-scatter/allgather halves the count each time.
argv: the count (of the whole vector), then the collective (allreduce, the default; reduce to
rank 0; reduce_scatter: MPI_Reduce_scatter_block; allgather: MPI_Allgather of count elements
per rank, no op to count).
"""

import json
import sys

from counting import calls, counted_call
from mpi4py import MPI

comm = MPI.COMM_WORLD
count = int(sys.argv[1])
collective = sys.argv[2] if len(sys.argv) > 2 else "allreduce"
error = ""
try:
    ok = counted_call(comm, collective, count)
except MPI.Exception as exc:
    ok, error = False, exc.Get_error_string().splitlines()[0]
rows = comm.gather(
    {"rank": comm.Get_rank(), "calls": calls, "ok": ok and not error, "error": error}
)
if comm.Get_rank() == 0:
    print(json.dumps(rows), flush=True)
