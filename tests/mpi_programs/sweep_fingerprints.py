"""Prints, as one JSON object, per algorithm the calls a counting user op received on every
rank when each algorithm runs on the communicator the sweep's ranks give it
(runners.ranks.sweep_worker.Library, with the switches the plan makes: Open MPI's
communicators; none for a library forced by the launch's environment, Intel MPI).

argv: COUNT JOB_FILE [COLLECTIVE] (the job file holds "library" and "switches", as a sweep
job's does; the collective: allreduce, the default; reduce to rank 0; reduce_scatter:
MPI_Reduce_scatter_block of COUNT elements in all).
"""

import json
import sys

from counting import calls, counted_call
from mpi4py import MPI

from runners.ranks.sweep_worker import Library

comm = MPI.COMM_WORLD
count = int(sys.argv[1])
collective = sys.argv[3] if len(sys.argv) > 3 else "allreduce"
with open(sys.argv[2]) as handle:
    job = json.load(handle)
library = Library.of(comm, job)
out = {}
for algorithm in job["algorithms"]:
    ok = counted_call(library.turn(algorithm), collective, count)
    out[algorithm] = comm.gather({"rank": comm.Get_rank(), "calls": list(calls), "ok": ok})
library.close()
if comm.Get_rank() == 0:
    print(json.dumps(out), flush=True)
