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

import numpy as np
from counting import COUNTING_SUM, calls
from mpi4py import MPI

comm = MPI.COMM_WORLD
count = int(sys.argv[1])
collective = sys.argv[2] if len(sys.argv) > 2 else "allreduce"
op = COUNTING_SUM
send = np.full(count, comm.Get_rank() + 1.0)
recv = np.zeros(count // comm.Get_size() if collective == "reduce_scatter" else count)
error = ""
try:
    if collective == "allgather":
        recv = np.zeros(count * comm.Get_size())
        comm.Allgather(send, recv)
    elif collective == "reduce":
        comm.Reduce(send, recv, op, root=0)
    elif collective == "reduce_scatter":
        comm.Reduce_scatter_block(send, recv, op)
    else:
        comm.Allreduce(send, recv, op)
except MPI.Exception as exc:
    error = exc.Get_error_string().splitlines()[0]
total = comm.Get_size() * (comm.Get_size() + 1) / 2
has_result = collective != "reduce" or comm.Get_rank() == 0
if collective == "allgather":
    ok = bool(np.all(recv == np.repeat(np.arange(1.0, comm.Get_size() + 1), count)))
else:
    ok = bool(np.all(recv == total)) if has_result else True
ok = ok and not error
rows = comm.gather({"rank": comm.Get_rank(), "calls": calls, "ok": ok, "error": error})
if comm.Get_rank() == 0:
    print(json.dumps(rows), flush=True)
