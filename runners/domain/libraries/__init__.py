"""The MPI libraries collsweep runs on, one module each (no MPI imported here).

Adding a library is one module here (its LibrarySpec) and its algorithms' descriptors in
runners.domain.algorithms; everything else reads them from LIBRARIES. RUNNABLE holds those
collsweep can launch: every one but the libraries it only imports results of (NCCL).
"""

from __future__ import annotations

from runners.domain.libraries import impi, mpich, nccl, openmpi
from runners.domain.libraries.base import (
    LAUNCH,
    PER_CALL,
    PER_COMMUNICATOR,
    RUNTIME,
    Install,
    LibrarySpec,
)

LIBRARIES: dict[str, LibrarySpec] = {
    lib.name: lib for lib in (mpich.LIBRARY, openmpi.LIBRARY, impi.LIBRARY, nccl.LIBRARY)
}
RUNNABLE: dict[str, LibrarySpec] = {name: lib for name, lib in LIBRARIES.items() if lib.runnable}
DEFAULT = mpich.LIBRARY  # mpi4py's own library; its algorithm names stand for every library's

__all__ = [
    "DEFAULT",
    "LAUNCH",
    "LIBRARIES",
    "PER_CALL",
    "PER_COMMUNICATOR",
    "RUNNABLE",
    "RUNTIME",
    "Install",
    "LibrarySpec",
    "imported_only",
    "short_library_version",
    "switching_mode_of",
]


def short_library_version(full: str) -> str:
    """MPI_Get_library_version's text, shortened by the library that wrote it: 'MPICH 5.0.2',
    'Open MPI 5.0.11', 'Intel MPI 2021.19.0'; another library's first line, squeezed."""
    text = full.replace("\x00", "").strip()
    first = text.splitlines()[0] if text else "unknown"
    for lib in LIBRARIES.values():
        short = lib.short_version(first)
        if short:
            return short
    return " ".join(first.replace("Version:", " ").split())


def imported_only(name: str) -> str:
    """Why collsweep cannot run a library of LIBRARIES that RUNNABLE leaves out."""
    return (
        f"{LIBRARIES[name].title} results can only be imported (`collsweep import`): "
        "collsweep never launches it"
    )


def switching_mode_of(lib: LibrarySpec, probed: str, asked: str) -> str:
    """How a library's forced algorithms are forced in a sweep: per call when the probe found
    MPI_T works (`probed`), per communicator as the spec asks (Open MPI always allows it),
    else a launch each."""
    if lib.runtime_forcing == PER_CALL:
        return probed
    if lib.runtime_forcing == PER_COMMUNICATOR:
        return asked
    return LAUNCH
