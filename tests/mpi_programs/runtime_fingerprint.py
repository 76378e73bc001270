"""Switches MPICH's allreduce algorithm through MPI_T (runners.ranks.mpit) in one launch and
prints, gathered as one JSON object, the calls a counting user op received per algorithm.

Each forced algorithm leaves its fingerprint (see library_fingerprint.py); 'mpi' (auto) must
come back to the library's default between them. stderr carries MPICH's fallback notices.
"""

import json
import sys

import numpy as np
from counting import COUNTING_SUM, calls
from mpi4py import MPI

from runners.domain.libraries import switching
from runners.ranks.mpit import allreduce_switch

comm = MPI.COMM_WORLD
count = int(sys.argv[1])
op = COUNTING_SUM
switch = allreduce_switch()
seen = {}
for algorithm in sys.argv[2:]:
    switch.apply(switching.settings(algorithm))
    calls.clear()
    send, recv = np.full(count, comm.Get_rank() + 1.0), np.zeros(count)
    comm.Allreduce(send, recv, op)
    ok = bool(np.all(recv == comm.Get_size() * (comm.Get_size() + 1) / 2))
    seen[algorithm] = {"calls": list(calls), "ok": ok}
rows = comm.gather(seen)
if comm.Get_rank() == 0:
    print(json.dumps(rows), flush=True)
