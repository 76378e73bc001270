"""What collsweep knows about one MPI library, in one place (no MPI imported).

A library is one `LibrarySpec`: its names, where its wheel is installed and how its ranks start
(its mpiexec, the libmpi that mpi4py loads, the environment every rank needs: from its Install,
which runners.host.libraries finds on this host), how one of its
algorithms is forced (for a whole launch by environment; at run time through MPI_T, per call or
per communicator, where the library allows it), how its version string reads, and the suffix
of the calibrations measured on its ranks. Its algorithms are AlgorithmSpecs whose `runs_on`
names it (runners.domain.algorithms). Each library is a module of runners.domain.libraries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runners.domain.collectives.descriptor import MPICH, AlgorithmSpec
from runners.domain.libraries.tuning import Placements

RUNTIME, LAUNCH = "runtime", "launch"  # how a sweep forces library algorithms (spec values)
PER_CALL, PER_COMMUNICATOR = "per_call", "per_communicator"  # how MPI_T forcing takes hold


@dataclass(frozen=True)
class Install:
    """Where one library is installed on this host (runners.host.libraries reads it): its
    prefix, launcher and the libmpi mpi4py loads (None: mpi4py's own), this process's library
    search path (LD_LIBRARY_PATH) and the libfabric providers in the prefix (lib/prov), if any."""

    prefix: Path
    mpiexec: Path
    libmpi: Path | None = None
    loader_path: tuple[str, ...] = ()
    providers: Path | None = None


@dataclass(frozen=True)
class LibrarySpec:
    """One MPI library. `prefix_name`: the folder inside the Python environment its wheel was
    installed into ("" = the environment itself); `libmpi_name`: the library file mpi4py loads
    from the prefix's lib/ ("" = mpi4py's own); `runtime_forcing`: PER_CALL (MPI_T before each
    call), PER_COMMUNICATOR (MPI_T before a communicator is made) or "" (a launch per forced
    algorithm, forced by environment)."""

    name: str
    title: str
    autotuned: str
    package: str
    prefix_name: str = ""
    libmpi_name: str = ""
    runtime_forcing: str = ""
    calibration_suffix: str = ""
    version_prefix: str = ""
    tuned: str = ""  # the entry that follows a tuning file collsweep wrote ("" = none yet)
    keeps_default: bool = True  # its tuning file can leave a size to the library's own choice
    vendor_tuned: str = ""  # the entry that follows a file the library's own autotuner wrote
    # The versions (runs.mpi_version prefix) whose tuning-file format collsweep writes and has
    # proven the library follows, with the counting op on both sides of a boundary
    tuning_versions: str = ""
    tuning_collectives: tuple[str, ...] = ("allreduce",)  # the collectives its file can tune
    # The library whose ABI C code built for this one follows (its mpicc builds the recorder):
    # Intel MPI's is MPICH's; Open MPI has its own
    abi: str = MPICH
    # False: collsweep only imports its results (another tool ran it); no sweep, tune, record
    # or verify launches it, and its algorithms are never offered to one
    runnable: bool = True
    # True: its reductions run inside the kernels that move the data (a GPU library's), so a
    # fit to its timings that cannot tell gamma from beta takes gamma = 0, beta carrying both
    reduces_while_copying: bool = False

    def version_text(self, version: str) -> str:
        """A version of the wheel in the runs.mpi_version form ('Intel MPI 2021.18.1')."""
        return f"{self.title} {version}"

    def tuning_env(self, tuning_file: str | Path) -> dict[str, str]:
        """Environment that makes the library follow a tuning file collsweep wrote."""
        raise NotImplementedError(f"{self.title} has no tuning file collsweep writes")

    def tuning_tables(
        self,
        out: Path,
        placements: Placements,
        specs: Mapping[str, AlgorithmSpec],
    ) -> dict[Path, Any]:
        """The file(s) of a tuning, by path (JSON-ready): per placement (ranks a node, 0: one
        host), collective (among `tuning_collectives`) and communicator size its bands, each
        naming one of the library's algorithms (`specs` describes them) or None for its
        default where `keeps_default`. A format that can tell placements apart keys the bands
        by them (keys_nodes()); the others hold one placement (only_placement)."""
        raise NotImplementedError(f"{self.title} has no tuning file collsweep writes")

    def vendor_tuning_env(self, tuning_file: str | Path) -> dict[str, str]:
        """Environment that makes the library follow a file its own autotuner wrote."""
        raise NotImplementedError(f"{self.title} has no autotuner file collsweep can load")

    def tuning_files(self, tuning_file: str | Path) -> tuple[Path, ...]:
        """The files a tuning file consists of, which runners.host.tuning_files reads for
        tuning_problem (none: the library has no tuning file)."""
        return ()

    def tuning_problem(self, contents: Mapping[Path, bytes]) -> str | None:
        """Why a tuning file cannot be followed by this library, or None, given the contents of
        its files read so far, in tuning_files' order (each checked as it is read)."""
        return f"{self.title} has no tuning file collsweep writes"

    def forcing_env(self, spec: AlgorithmSpec) -> dict[str, str]:
        """Environment that makes every call of a launch run `spec` (empty when not forced)."""
        return {}

    def shared_env(self) -> dict[str, str]:
        """Environment of a launch whose forced algorithms are switched at run time."""
        return {}

    def settings(self, spec: AlgorithmSpec) -> dict[str, int]:
        """The MPI_T values that make `spec` run (where runtime_forcing allows it)."""
        return {}

    def switches_at_run_time(self, spec: AlgorithmSpec) -> bool:
        """Whether MPI_T can force `spec` in a shared launch (where runtime_forcing allows it
        at all); False: it needs a launch of its own, forced by environment."""
        return True

    def keys_nodes(self) -> str:
        """How its tuning file tells ranks per node apart ("": it cannot)."""
        return ""

    def tunable(self, spec: AlgorithmSpec) -> bool:
        """Whether this library's tuning file can name `spec` (a forced algorithm of its own)."""
        return True

    def forcing_text(self, spec: AlgorithmSpec) -> str:
        """The settings that force `spec`, as NAME=VALUE words."""
        return " ".join(f"{name}={value}" for name, value in spec.settings)

    def forced_by(self, spec: AlgorithmSpec, switching: str) -> str:
        """How a point's algorithm was forced, as stored in points.library_config."""
        return ""

    def launch_env(self, install: Install) -> dict[str, str]:
        """Environment every launch of this library, installed as `install`, needs (its
        libmpi, its transport)."""
        return {}

    def command(
        self, install: Install, ranks: int, argv: Sequence[str], exports: Sequence[str] = ()
    ) -> list[str] | None:
        """The command that starts `argv` on `ranks` ranks of this library, installed as
        `install`, passing on the named environment variables; None: the sweep's launcher
        template starts them."""
        return None

    def unlisted_forcing(self, collective: str, selectors: Mapping[str, str]) -> str | None:
        """The name of imported points whose file shows `selectors` forcing an algorithm of
        `collective` the catalog does not list, stored and drawn but not analysed; None: such
        a file is refused."""
        return None

    def short_version(self, first_line: str) -> str | None:
        """MPI_Get_library_version's first line, shortened ('MPICH 5.0.2'); None when the
        line is not this library's."""
        if not first_line.startswith(self.version_prefix):
            return None
        return " ".join(first_line.replace("Version:", " ").split())
