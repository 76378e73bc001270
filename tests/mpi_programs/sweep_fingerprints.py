"""Prints, as one JSON object, per algorithm the calls a counting user op received on every
rank when each algorithm runs on the communicator the sweep's ranks give it
(runners.ranks.sweep_worker.Library, with the switches the plan makes: Open MPI's
communicators; none for a library forced by the launch's environment, Intel MPI).

argv: COUNT JOB_FILE [COLLECTIVE] (a sweep's job file, runners.domain.sweep.job_file.SweepJob: its
library, its switches and its first cell's algorithms; the collective: allreduce, the default;
reduce to rank 0; reduce_scatter: MPI_Reduce_scatter_block of COUNT elements in all).
"""

import json
import sys
from pathlib import Path

from counting import calls, counted_call
from mpi4py import MPI

from runners.domain.sweep.job_file import SweepJob
from runners.ranks.sweep_worker import Library

comm = MPI.COMM_WORLD
count = int(sys.argv[1])
collective = sys.argv[3] if len(sys.argv) > 3 else "allreduce"
job = SweepJob.from_json(Path(sys.argv[2]).read_text())
library = Library.of(comm, job.library, job.switches)
out = {}
for algorithm in job.cells[0].algorithms:
    ok = counted_call(library.turn(algorithm), collective, count)
    out[algorithm] = comm.gather({"rank": comm.Get_rank(), "calls": list(calls), "ok": ok})
library.close()
if comm.Get_rank() == 0:
    print(json.dumps(out), flush=True)
