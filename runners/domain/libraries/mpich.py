"""MPICH: the `mpich` wheel in the Python environment itself, mpi4py's own library.

Forcing at run time through the MPI tool interface: MPICH reads
`MPIR_CVAR_<COLL>_INTRA_ALGORITHM` and `MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE` on every call of
the collective (its generated MPIR_<Coll> checks them per call), and both have scope
MPI_T_SCOPE_ALL_EQ: written with MPI_T_cvar_write to the same value on every rank, they switch
the algorithm of the next call. So hand-written algorithms, the autotuned `mpi` and every forced
MPICH algorithm can share one launch and take turns in the same passes. Where that is not
possible (another MPICH version, MPI_T missing) a sweep falls back to a launch per forced
algorithm, configured by environment, and records which it used.

The enum values are the order of each cvar's description in MPICH's src/mpi/coll/cvars.txt
of v5.0.1 (the order differs on main for bcast and reduce; VERIFIED_LIBRARIES keeps run-time
switching to MPICH 5.0). tests/libraries/test_library_forcing.py proves each one used here: with a
counting user op (allreduce's, reduce-scatter's and reduce's), or by MPICH's own fallback
message naming the algorithm it cannot apply (allreduce's reduce_scatter_allgather, reduce's
reduce_scatter_gather, allgather's recursive_doubling, bcast's smp).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runners.domain.algorithms.library import is_composition
from runners.domain.collectives.descriptor import MPICH, AlgorithmSpec
from runners.domain.libraries.base import PER_CALL, RUNTIME, LibrarySpec
from runners.domain.libraries.mpich_tuning import (
    FILE_CVAR,
    mpich_tables,
    posix_path,
    tables_problem,
    tuning_knobs,
)
from runners.domain.libraries.tuning import Placements

ALGORITHM_CVAR = "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"
DEVICE_CVAR = "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE"
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
# Each collective's algorithm cvar, its values in enum order (src/mpi/coll/cvars.txt of v5.0.1,
# the order of each description: MPICH exposes no enum item names through MPI_T to read them
# back), and its device-collective cvar, all read by MPICH on every call.
INTRA_CVARS = {
    "allreduce": ALGORITHM_CVAR,
    "reduce_scatter": "MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM",
    "allgather": "MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM",
    "bcast": "MPIR_CVAR_BCAST_INTRA_ALGORITHM",
    "reduce": "MPIR_CVAR_REDUCE_INTRA_ALGORITHM",
}
INTRA_VALUES = {
    "allreduce": ALGORITHM_VALUES,
    "reduce_scatter": (
        "auto",
        "noncommutative",
        "recursive_doubling",
        "pairwise",
        "recursive_halving",
        "nb",
    ),
    "allgather": (
        "auto",
        "brucks",
        "k_brucks",
        "nb",
        "recursive_doubling",
        "ring",
        "recexch_doubling",
        "recexch_halving",
    ),
    "bcast": (
        "auto",
        "binomial",
        "nb",
        "smp",
        "scatter_recursive_doubling_allgather",
        "scatter_ring_allgather",
        "pipelined_tree",
        "tree",
    ),
    "reduce": ("auto", "binomial", "nb", "smp", "reduce_scatter_gather"),
}
DEVICE_CVARS = {
    collective: cvar.replace("_INTRA_ALGORITHM", "_DEVICE_COLLECTIVE")
    for collective, cvar in INTRA_CVARS.items()
}
CVARS = (*INTRA_CVARS.values(), *DEVICE_CVARS.values())  # every cvar a switch writes
VERIFIED_LIBRARIES = ("MPICH 5.0.",)  # runs.mpi_version prefixes whose enum order is checked
FALLBACK_KNOB = {"MPIR_CVAR_COLLECTIVE_FALLBACK": "print"}  # a fallback says so on stderr


def runtime_supported(mpi_version: str) -> bool:
    """Whether this MPICH's enum order is the verified one (runs.mpi_version form)."""
    return mpi_version.startswith(VERIFIED_LIBRARIES)


class Mpich(LibrarySpec):
    """MPICH is installed into the environment itself: its launcher is the environment's
    mpiexec (runners.host.libraries), or the spec's launcher template."""

    def keys_nodes(self) -> str:
        """MPICH's tables test the communicator's average ranks per node."""
        return "comm_avg_ppn (MPICH's average ranks per node of the communicator)"

    def tuning_env(self, tuning_file: str | Path) -> dict[str, str]:
        """The tuning file and its shared-memory table (runners.domain.libraries.mpich_tuning)."""
        return tuning_knobs(tuning_file)

    def tuning_tables(
        self,
        out: Path,
        placements: Placements,
        specs: Mapping[str, AlgorithmSpec],
    ) -> dict[Path, Any]:
        """MPICH's whole table with each tuned collective's subtree replaced (keyed by ranks
        per node too, where a run had nodes), and its shared-memory table beside it
        (runners.domain.libraries.mpich_tuning)."""
        mpir, posix = mpich_tables(placements)
        return {out: mpir, posix_path(out): posix}

    def tuning_files(self, tuning_file: str | Path) -> tuple[Path, ...]:
        """The whole table and its shared-memory table beside it
        (runners.domain.libraries.mpich_tuning)."""
        return Path(tuning_file), posix_path(tuning_file)

    def tuning_problem(self, contents: Mapping[Path, bytes]) -> str | None:
        """A whole MPICH table and its shared-memory table, both readable JSON."""
        return tables_problem(contents)

    def forcing_env(self, spec: AlgorithmSpec) -> dict[str, str]:
        """MPIR_CVAR_<COLLECTIVE>_INTRA_ALGORITHM for a forced algorithm with its settings (a
        tree's type and radix), device-level (shared-memory) collectives off, or MPICH would
        bypass the generic algorithm selection; for a composition, its cvar with the device
        collectives on."""
        if not spec.forced:
            return {}
        settings = {name: str(value) for name, value in spec.settings}
        if is_composition(spec):
            return {**settings, "MPIR_CVAR_DEVICE_COLLECTIVES": "all", **FALLBACK_KNOB}
        return {
            INTRA_CVARS[spec.collective]: spec.forced,
            **settings,
            "MPIR_CVAR_DEVICE_COLLECTIVES": "none",
            **FALLBACK_KNOB,
        }

    def shared_env(self) -> dict[str, str]:
        """A fallback says so on stderr (the ranks skip such points)."""
        return dict(FALLBACK_KNOB)

    def settings(self, spec: AlgorithmSpec) -> dict[str, int]:
        """A forced algorithm by name, with the device allreduce off; MPICH's defaults back
        for everything else."""
        forced, collective = spec.forced, spec.collective
        return {
            INTRA_CVARS[collective]: INTRA_VALUES[collective].index(forced or "auto"),
            DEVICE_CVARS[collective]: int(not forced),
        }

    def forcing_text(self, spec: AlgorithmSpec) -> str:
        """MPIR_CVAR_<COLLECTIVE>_INTRA_ALGORITHM=<name> and its settings (a composition's:
        its cvar=<value> alone)."""
        if is_composition(spec):
            return super().forcing_text(spec)
        settings = "".join(f", {name}={value}" for name, value in spec.settings)
        return f"{INTRA_CVARS[spec.collective]}={spec.forced}{settings}"

    def switches_at_run_time(self, spec: AlgorithmSpec) -> bool:
        """A forced algorithm with settings (a composition: the device collectives on; a
        tree's type and radix) needs them for the whole launch: env only."""
        return not spec.settings

    def tunable(self, spec: AlgorithmSpec) -> bool:
        """MPICH's MPIR table names algorithms, not the device's compositions."""
        return not is_composition(spec)

    def forced_by(self, spec: AlgorithmSpec, switching: str) -> str:
        """'MPI_T <cvar>=<name>' or 'env <cvar>=<name>'; the tuning file for mpi:tuned."""
        if spec.own_launch:
            return f"env {FILE_CVAR} (the run's tuning_file)"
        if not spec.forced:
            return ""
        how = "MPI_T" if switching == RUNTIME and self.switches_at_run_time(spec) else "env"
        return f"{how} {self.forcing_text(spec)}"


LIBRARY = Mpich(
    MPICH,
    "MPICH",
    "mpi",
    package="mpich",
    runtime_forcing=PER_CALL,
    version_prefix="MPICH",
    tuned="mpi:tuned",
    tuning_versions="MPICH 5.0.",
    # the tables collsweep ships (runners/domain/libraries/mpich_tables/)
    tuning_collectives=tuple(INTRA_CVARS),
)
