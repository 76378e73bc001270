"""The allreduce algorithms collsweep times, by name.

Every algorithm is a callable `allreduce(comm, sendbuf, recvbuf, op)` with MPI_Allreduce's
contract; `create(name)` gives a fresh instance with its own kept scratch buffers.
"""

from __future__ import annotations

from runners.domain.catalog import ALGORITHMS, known_names
from runners.ranks.algorithms.base import Allreduce, UnsupportedError
from runners.ranks.algorithms.binomial_tree import BinomialTree
from runners.ranks.algorithms.library import LibraryAllreduce
from runners.ranks.algorithms.rabenseifner import Rabenseifner
from runners.ranks.algorithms.recursive_doubling import RecursiveDoubling
from runners.ranks.algorithms.ring import Ring

REGISTRY: dict[str, type[Allreduce]] = {
    cls.name: cls for cls in (RecursiveDoubling, BinomialTree, Rabenseifner, Ring, LibraryAllreduce)
}


def create(name: str) -> Allreduce:
    """A new instance of the algorithm named `name` ('mpi:<forced>' runs the library's).

    Which algorithm the library runs for 'mpi:<forced>' is set by the job's environment
    (runners.domain.catalog.library_knobs), read when MPI starts.
    """
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; known: {known_names(ALGORITHMS)}")
    return REGISTRY["mpi" if ALGORITHMS[name].library else name]()


__all__ = ["REGISTRY", "Allreduce", "UnsupportedError", "create"]
