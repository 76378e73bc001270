"""The allreduce algorithms collsweep times, by name.

Every algorithm is a callable `allreduce(comm, sendbuf, recvbuf, op)` with MPI_Allreduce's
contract; `create(name)` gives a fresh instance with its own kept scratch buffers.
"""

from __future__ import annotations

from runners.algorithms.base import Allreduce, UnsupportedError
from runners.algorithms.binomial_tree import BinomialTree
from runners.algorithms.library import LibraryAllreduce
from runners.algorithms.rabenseifner import Rabenseifner
from runners.algorithms.recursive_doubling import RecursiveDoubling
from runners.algorithms.ring import Ring
from runners.catalog import ALGORITHMS, known_names

REGISTRY: dict[str, type[Allreduce]] = {
    cls.name: cls for cls in (RecursiveDoubling, BinomialTree, Rabenseifner, Ring, LibraryAllreduce)
}


def create(name: str) -> Allreduce:
    """A new instance of the algorithm named `name` ('mpi:<forced>' runs the library's).

    Which algorithm the library runs for 'mpi:<forced>' is set by the job's environment
    (runners.catalog.library_knobs), read when MPI starts.
    """
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; known: {known_names(ALGORITHMS)}")
    return REGISTRY["mpi" if ALGORITHMS[name].library else name]()


__all__ = ["REGISTRY", "Allreduce", "UnsupportedError", "create"]
