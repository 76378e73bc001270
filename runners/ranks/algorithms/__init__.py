"""The algorithms collsweep times, by name, for every collective.

Every algorithm is a callable `algorithm(comm, sendbuf, recvbuf, op)` with its collective's
MPI call's contract; `create(name)` gives a fresh instance with its own kept scratch buffers. The
hand-written ones all run their descriptor's schedule (runners.domain.algorithms).
"""

from __future__ import annotations

from runners.domain.libraries.catalog import ALGORITHMS, known_names
from runners.ranks.algorithms.base import Allreduce, UnsupportedError
from runners.ranks.algorithms.library import LibraryAllreduce
from runners.ranks.algorithms.scheduled import ScheduledAllreduce


def create(name: str) -> Allreduce:
    """A new instance of the algorithm named `name` ('mpi:<forced>' runs the library's).

    Which algorithm the library runs for 'mpi:<forced>' is set by the job's environment
    (runners.domain.libraries.catalog.library_knobs), read when MPI starts.
    """
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; known: {known_names(ALGORITHMS)}")
    spec = ALGORITHMS[name]
    return LibraryAllreduce(name) if spec.library else ScheduledAllreduce(spec)


__all__ = ["Allreduce", "UnsupportedError", "create"]
