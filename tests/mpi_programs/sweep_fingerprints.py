"""Prints, as one JSON object, per algorithm the calls a counting user op received on every
rank when each algorithm runs on the communicator the sweep's ranks give it
(runners.ranks.sweep_worker.Library, with the switches the plan makes: Open MPI's
communicators; none for a library forced by the launch's environment, Intel MPI).

argv: COUNT JOB_FILE (the job file holds "library" and "switches", as a sweep job's does).
"""

import json
import sys

import numpy as np
from counting import COUNTING_SUM, calls
from mpi4py import MPI

from runners.ranks.sweep_worker import Library

comm = MPI.COMM_WORLD
count = int(sys.argv[1])
with open(sys.argv[2]) as handle:
    job = json.load(handle)
library = Library.of(comm, job)
out = {}
for algorithm in job["algorithms"]:
    here = library.turn(algorithm)
    send = np.full(count, comm.Get_rank() + 1.0)
    recv = np.zeros(count)
    calls.clear()
    here.Allreduce(send, recv, COUNTING_SUM)
    ok = bool(np.all(recv == comm.Get_size() * (comm.Get_size() + 1) / 2))
    out[algorithm] = comm.gather({"rank": comm.Get_rank(), "calls": list(calls), "ok": ok})
library.close()
if comm.Get_rank() == 0:
    print(json.dumps(out), flush=True)
