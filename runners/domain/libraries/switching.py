"""How a sweep forces library algorithms, per library (no MPI): RUNTIME (MPI_T in shared
launches, where the library allows it) or LAUNCH (a launch per forced algorithm, configured by
environment), and what each point's `library_config` says of it.

Each library's own rules are in its module of runners.domain.libraries: MPICH switches per call
(its cvars and their verified enum values are there), Open MPI per communicator, Intel MPI only
per launch. This module answers for an algorithm by asking its library.
"""

from __future__ import annotations

from runners.domain.libraries import LAUNCH, LIBRARIES, RUNTIME
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.libraries.mpich import (
    ALGORITHM_CVAR,
    ALGORITHM_VALUES,
    CVARS,
    FALLBACK_KNOB,
    runtime_supported,
)

__all__ = [
    "ALGORITHM_CVAR",
    "ALGORITHM_VALUES",
    "CVARS",
    "FALLBACK_KNOB",
    "LAUNCH",
    "RUNTIME",
    "library_config",
    "settings",
    "supported",
]


def settings(algorithm: str) -> dict[str, int]:
    """The MPI_T values that make `algorithm` run: before each call (MPICH: a forced one by
    name with the device allreduce off, everything else MPICH's defaults) or before its
    communicator is duplicated (Open MPI's forced ones)."""
    spec = ALGORITHMS[algorithm]
    return LIBRARIES[spec.runs_on].settings(spec)


def supported(mpi_version: str) -> bool:
    """Whether MPICH's enum order is the verified one for this library (runs.mpi_version)."""
    return runtime_supported(mpi_version)


def library_config(algorithm: str, switching: str) -> str:
    """How a point's library algorithm was forced, as stored in points.library_config."""
    spec = ALGORITHMS[algorithm]
    return LIBRARIES[spec.runs_on].forced_by(spec, switching)
