"""Where the MPI libraries are installed on this host, read from it: each library's prefix in
this Python environment, its launcher and libmpi, whether they are there, the installed wheel's
version, and the environment and command its launches take (the library's own rules, given the
Install found here: runners.domain.libraries).

A library installed into the environment itself (no prefix of its own: MPICH) is started by the
mpiexec beside this Python, else the first one on PATH; the others by the mpiexec in their
prefix.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runners.domain.libraries import Install, LibrarySpec


def prefix(lib: LibrarySpec) -> Path:
    """Where the library's wheel is installed: its folder in this Python environment, or the
    environment itself."""
    return Path(sys.prefix) / lib.prefix_name if lib.prefix_name else Path(sys.prefix)


def mpiexec(lib: LibrarySpec) -> Path:
    """The library's own launcher: in its prefix, or for one installed into the environment
    itself the mpiexec beside this Python, else the first one on PATH."""
    if lib.prefix_name:
        return prefix(lib) / "bin" / "mpiexec"
    beside_python = Path(sys.executable).with_name("mpiexec")
    if beside_python.exists():
        return beside_python
    return Path(shutil.which("mpiexec") or "mpiexec")


def install(lib: LibrarySpec) -> Install:
    """How the library is installed here, as its launches need it."""
    lib_dir = prefix(lib) / "lib"
    providers = lib_dir / "prov"
    return Install(
        prefix=prefix(lib),
        mpiexec=mpiexec(lib),
        libmpi=lib_dir / lib.libmpi_name if lib.libmpi_name else None,
        loader_path=tuple(filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep))),
        providers=providers if providers.is_dir() else None,
    )


def installed(lib: LibrarySpec) -> bool:
    """Whether the library's launcher (and libmpi) are where collsweep looks for them; for one
    installed into the environment itself, whether an mpiexec can be found; never for one
    collsweep only imports results of (NCCL)."""
    if not lib.runnable:
        return False
    found = install(lib)
    if not lib.prefix_name:
        return shutil.which(str(found.mpiexec)) is not None
    return found.mpiexec.exists() and (found.libmpi is None or found.libmpi.exists())


def installed_version(lib: LibrarySpec) -> str:
    """The installed wheel's version in the runs.mpi_version form ('Intel MPI 2021.18.1'), from
    its metadata in the prefix; '' when it is not installed."""
    pattern = re.compile(rf"{re.escape(lib.package.replace('-', '_'))}-([\d.]+)\.dist-info")
    for folder in sorted(prefix(lib).glob("lib/python*/site-packages/*.dist-info")):
        found = pattern.fullmatch(folder.name)
        if found:
            return lib.version_text(found.group(1))
    return ""


def launch_env(lib: LibrarySpec) -> dict[str, str]:
    """The environment every launch of the library needs here (LibrarySpec.launch_env)."""
    return lib.launch_env(install(lib))


def command(
    lib: LibrarySpec, ranks: int, argv: Sequence[str], exports: Sequence[str] = (), **options: Any
) -> list[str] | None:
    """The command that starts `argv` on `ranks` ranks of the library here, passing on the
    named variables (LibrarySpec.command; `options` such as Open MPI's mca); None: the sweep's
    launcher template starts them."""
    return lib.command(install(lib), ranks, argv, exports, **options)
