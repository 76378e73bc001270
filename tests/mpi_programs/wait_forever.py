"""An MPI program that never ends: each rank writes its process ids to a file in the folder
it is given (itself, its parent, its parent's parent), then waits for a signal, for the tests
that stop `collsweep record` while the program runs."""

import os
import signal
import sys
from pathlib import Path

from mpi4py import MPI


def parent_of(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[1])


rank = MPI.COMM_WORLD.Get_rank()
MPI.COMM_WORLD.Barrier()
ids = [os.getpid(), os.getppid(), parent_of(os.getppid())]
Path(sys.argv[1], f"rank{rank}.tmp").write_text(" ".join(map(str, ids)))
Path(sys.argv[1], f"rank{rank}.tmp").rename(Path(sys.argv[1], f"rank{rank}"))
while True:  # only a signal ends it (the default action of SIGTERM and SIGKILL)
    signal.pause()
