"""Intel MPI: the `impi-rt` wheel in a prefix of its own, its ranks started by its own mpiexec.

`make install` puts the wheel (it ships its libfabric) in `.venv/impi`: its `bin/mpiexec`
(Hydra) and `lib/libmpi.so.12` would clash with MPICH's in the environment itself. mpi4py loads
it through `MPI4PY_LIBMPI`; the loader finds its other libraries through `LD_LIBRARY_PATH`.
Hydra passes the whole environment to every rank. Its transport is shared memory
(`I_MPI_FABRICS=shm`): one node only.

Forcing: `I_MPI_ADJUST_ALLREDUCE=<preset>` selects an allreduce preset for a whole launch.
Intel MPI exposes the same setting as the MPI_T control variable MPIR_CVAR_USE_ALLREDUCE, but
writing it at run time changes nothing (seen on 2021.18.1 and 2021.19.0: the value reads back,
the calls keep their algorithm, on the world and on a new communicator alike), so each forced
preset runs in launches of its own, paired with the others by round. The presets' numbers and
names are those of Intel's documentation of I_MPI_ADJUST_ALLREDUCE
(runners.domain.algorithms.impi); tests/libraries/test_impi.py proves each one with a
counting user op.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from runners.domain.algorithms.impi import PRESET_VARIABLE
from runners.domain.collectives.descriptor import IMPI, AlgorithmSpec
from runners.domain.inputs import BadInputFile, load_json_bytes
from runners.domain.libraries.base import Install, LibrarySpec
from runners.domain.libraries.tuning import Band, Placements, only_placement

TUNING_VARIABLE = "I_MPI_TUNING"  # a JSON tuning file Intel MPI reads at start-up
BINARY_TUNING_VARIABLE = "I_MPI_TUNING_BIN"  # a binary one, as Intel's autotuner writes it
VERSION = re.compile(r"Intel\(R\) MPI Library (\d[\d.]*)")
COLLECTIVE = "coll=Allreduce"


def tuning_table(per_ranks: Mapping[int, Sequence[Band]], presets: Mapping[str, int]) -> dict:
    """Intel MPI's JSON tuning tree for allreduce (read from I_MPI_TUNING at start-up): per
    communicator size on one node (ppn = comm_size), one `msg_size=<upto>` entry per band, the
    preset that runs up to and including that many bytes of the whole buffer, the last band
    `msg_size=-1`. Every band names a preset: `ALLREDUCE=0` is not the default's choice (it
    ran recursive doubling at 16 KiB on 4 ranks where the default runs Rabenseifner), and the
    file is the whole decision (a communicator size it lacks takes the nearest one's)."""
    sizes: dict[str, Any] = {}
    for ranks in sorted(per_ranks):
        bands: dict[str, Any] = {
            f"msg_size={-1 if b.upto is None else b.upto}": {
                f"ALLREDUCE={presets[b.algorithm or '']}": {}
            }
            for b in per_ranks[ranks]
        }
        sizes[f"ppn={ranks}"] = {f"comm_size={ranks}": {"comm_id=-1": bands}}
    return {COLLECTIVE: sizes}


class IntelMpi(LibrarySpec):
    """Intel MPI started by its own Hydra mpiexec, on shared memory."""

    def tuning_env(self, tuning_file: str | Path) -> dict[str, str]:
        """I_MPI_TUNING=<the JSON file>."""
        return {TUNING_VARIABLE: str(Path(tuning_file).resolve())}

    def tuning_tables(
        self,
        out: Path,
        placements: Placements,
        specs: Mapping[str, AlgorithmSpec],
    ) -> dict[Path, Any]:
        """One JSON tree (tuning_table), every band naming a forced preset; keyed by
        communicator size only here (one placement; the provenance says so)."""
        presets = {
            name: int(dict(spec.settings)[PRESET_VARIABLE])
            for name, spec in specs.items()
            if PRESET_VARIABLE in dict(spec.settings)
        }
        per_collective = only_placement(placements)
        return {out: tuning_table(per_collective.get("allreduce", {}), presets)}

    def vendor_tuning_env(self, tuning_file: str | Path) -> dict[str, str]:
        """I_MPI_TUNING_BIN=<the binary file Intel's autotuner wrote>."""
        return {BINARY_TUNING_VARIABLE: str(Path(tuning_file).resolve())}

    def tuning_files(self, tuning_file: str | Path) -> tuple[Path, ...]:
        """One JSON file."""
        return (Path(tuning_file),)

    def tuning_problem(self, contents: Mapping[Path, bytes]) -> str | None:
        """Readable JSON whose top level holds Intel MPI's allreduce tree."""
        ((path, data),) = contents.items()
        try:
            table = load_json_bytes(data, "tuning file", path)
        except BadInputFile as exc:
            return f"tuning file {path} is not readable JSON: {exc.reason}"
        if not isinstance(table, dict) or COLLECTIVE not in table:
            return f"tuning file {path} is not an Intel MPI tuning file (no {COLLECTIVE})"
        return None

    def forcing_env(self, spec: AlgorithmSpec) -> dict[str, str]:
        """I_MPI_ADJUST_ALLREDUCE=<preset> for a forced preset."""
        return {name: str(value) for name, value in spec.settings} if spec.forced else {}

    def forced_by(self, spec: AlgorithmSpec, switching: str) -> str:
        """The launch's I_MPI_ADJUST_ALLREDUCE, or the tuning file for impi:tuned."""
        if spec.name == self.vendor_tuned:
            return f"env {BINARY_TUNING_VARIABLE} (the run's vendor_tuning_file)"
        if spec.own_launch:
            return f"env {TUNING_VARIABLE} (the run's tuning_file)"
        return f"env {self.forcing_text(spec)}" if spec.forced else ""

    def launch_env(self, install: Install) -> dict[str, str]:
        """Its libmpi for mpi4py, its lib/ before the loader's path, shared memory as the
        transport, and its libfabric providers where the wheel has them."""
        paths = [str(install.prefix / "lib"), *install.loader_path]
        env = {
            "MPI4PY_LIBMPI": str(install.libmpi),
            "LD_LIBRARY_PATH": os.pathsep.join(dict.fromkeys(paths)),
            "I_MPI_FABRICS": "shm",
        }
        if install.providers is not None:
            env["FI_PROVIDER_PATH"] = str(install.providers)
        return env

    def command(
        self, install: Install, ranks: int, argv: Sequence[str], exports: Sequence[str] = ()
    ) -> list[str]:
        """Hydra's mpiexec; it passes the whole environment on, so `exports` need no flag."""
        return [str(install.mpiexec), "-n", str(ranks), *argv]

    def short_version(self, first_line: str) -> str | None:
        """'Intel(R) MPI Library 2021.19.0 for Linux* OS' -> 'Intel MPI 2021.19.0'."""
        found = VERSION.match(first_line)
        return f"Intel MPI {found.group(1)}" if found else None


LIBRARY = IntelMpi(
    IMPI,
    "Intel MPI",
    "impi",
    package="impi-rt",
    prefix_name="impi",
    libmpi_name="libmpi.so.12",
    calibration_suffix=f"@{IMPI}",
    version_prefix="Intel(R) MPI Library",
    tuned="impi:tuned",
    keeps_default=False,
    vendor_tuned="impi:autotuned",
    tuning_versions="Intel MPI 2021.",
)
