"""Forcing MPICH's allreduce algorithm at run time through the MPI tool interface (no MPI).

MPICH reads `MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM` and `MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE`
on every MPI_Allreduce (its generated MPIR_Allreduce checks them per call), and both have scope
MPI_T_SCOPE_ALL_EQ: written with MPI_T_cvar_write to the same value on every rank, they switch
the algorithm of the next call. So hand-written algorithms, the autotuned `mpi` and every forced
MPICH algorithm can share one launch and take turns in the same passes: their comparisons are
paired in time instead of across machine states. Where that is not possible (another library or
MPICH version, MPI_T missing) a sweep falls back to a launch per forced algorithm, configured
by environment (runners.domain.catalog.library_knobs), and records which it used.

The enum values are the order of the cvar's description in MPICH's src/mpi/coll/cvars.txt
(identical in v5.0.1 and main); tests/test_library_forcing.py proves each one used here with a
counting user op, and reduce_scatter_allgather by MPICH's own fallback message naming it.
Open MPI's algorithms are forced per communicator instead (runners.domain.algorithms.openmpi);
library_config says for both libraries how a point's algorithm was forced.
"""

from __future__ import annotations

from runners.domain.algorithms.openmpi import environment
from runners.domain.catalog import ALGORITHMS
from runners.domain.descriptor import MPICH

ALGORITHM_CVAR = "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"
DEVICE_CVAR = "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE"
CVARS = (ALGORITHM_CVAR, DEVICE_CVAR)
ALGORITHM_VALUES = (
    "auto",
    "nb",
    "smp",
    "recursive_doubling",
    "recursive_multiplying",
    "reduce_scatter_allgather",
    "tree",
    "recexch",
    "ring",
    "k_reduce_scatter_allgather",
    "ccl",
)
VERIFIED_LIBRARIES = ("MPICH 5.0.",)  # runs.mpi_version prefixes whose enum order is checked
FALLBACK_KNOB = {"MPIR_CVAR_COLLECTIVE_FALLBACK": "print"}  # a fallback says so on stderr
RUNTIME, LAUNCH = "runtime", "launch"


def settings(algorithm: str) -> dict[str, int]:
    """The cvar values that make the next MPI_Allreduce run `algorithm`'s library code.

    A forced algorithm also turns the device (shared-memory) allreduce off, or MPICH would
    bypass its algorithm selection; everything else gets MPICH's defaults back. An Open MPI
    algorithm's values are written before its communicator is duplicated instead.
    """
    forced = ALGORITHMS[algorithm].forced
    if ALGORITHMS[algorithm].runs_on != MPICH:  # a communicator of its own, set before its dup
        return dict(ALGORITHMS[algorithm].settings)
    return {ALGORITHM_CVAR: ALGORITHM_VALUES.index(forced or "auto"), DEVICE_CVAR: int(not forced)}


def supported(mpi_version: str) -> bool:
    """Whether this library's enum order is the verified one (runs.mpi_version form)."""
    return mpi_version.startswith(VERIFIED_LIBRARIES)


def library_config(algorithm: str, switching: str) -> str:
    """How a point's library algorithm was forced, as stored in points.library_config."""
    spec = ALGORITHMS[algorithm]
    if spec.own_launch:
        return "env MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE (the run's tuning_file)"
    if not spec.forced:
        return ""
    if spec.runs_on != MPICH:
        if switching == RUNTIME:
            values = " ".join(f"{name}={value}" for name, value in spec.settings)
            return f"MPI_T {values} before MPI_Comm_dup (a communicator of its own)"
        return "env " + " ".join(f"{name}={value}" for name, value in environment(spec).items())
    how = "MPI_T" if switching == RUNTIME else "env"
    return f"{how} {ALGORITHM_CVAR}={spec.forced}"
