"""Building the call recorder (runners/ranks/recorder/: the core collsweep_record.c, the MPI
wrappers wrappers.c, what they share recorder.h) with an MPI library's own mpicc, once per
source and compiler.

MPICH's wheel ships mpicc; its build also serves Intel MPI, whose ABI is MPICH's (the recorder
links `libmpi.so.12`, and Intel MPI's LD_LIBRARY_PATH makes that Intel's). Open MPI has another
ABI and needs its own mpicc, from its prefix. The library file is named by a digest of the
source and the compiler, so an edited source or another compiler builds afresh; it goes under
the Python environment (`<prefix>/lib/collsweep/`, where `make install` builds it) or, where
that is not writable (a system-wide install), under `~/.cache/collsweep/`. A build lands under
a temporary name and is renamed into place, so two records starting at once are safe.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from runners.domain.errors import CollsweepError
from runners.domain.libraries import LIBRARIES, RUNNABLE, LibrarySpec
from runners.host import libraries

FOLDER = Path(__file__).resolve().parents[1] / "ranks" / "recorder"
SOURCES = (FOLDER / "collsweep_record.c", FOLDER / "wrappers.c")
HEADER = FOLDER / "recorder.h"
FLAGS = ("-O2", "-Wall", "-shared", "-fPIC")


class RecorderBuildFailed(CollsweepError):
    """The recorder could not be built (no mpicc, no C compiler, a compile error)."""


def flavour(lib: LibrarySpec) -> str:
    """Whose ABI the recorder is built for: Open MPI's, or MPICH's (MPICH, Intel MPI)."""
    return lib.abi


def compiler(lib: LibrarySpec) -> Path | None:
    """The mpicc that builds the recorder for `lib`: that of the library whose ABI it has, in
    its prefix (for one installed into the environment itself, also one on PATH), or None
    where there is none."""
    abi = LIBRARIES[lib.abi]
    found = libraries.prefix(abi) / "bin" / "mpicc"
    if found.exists():
        return found
    on_path = None if abi.prefix_name else shutil.which("mpicc")
    return Path(on_path) if on_path else None


def build_folder() -> Path:
    """Where built recorders go: the Python environment's lib/collsweep where it can be
    written, else the user's cache."""
    inside = Path(sys.prefix) / "lib" / "collsweep"
    if os.access(inside if inside.is_dir() else inside.parent, os.W_OK):
        return inside
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "collsweep"


def library_path(lib: LibrarySpec, mpicc: Path) -> Path:
    """The recorder's file for this source, compiler and ABI."""
    text = b"".join(path.read_bytes() for path in (*SOURCES, HEADER))
    digest = hashlib.sha256(text + str(mpicc).encode()).hexdigest()[:12]
    return build_folder() / f"libcollsweep_record-{flavour(lib)}-{digest}.so"


def recorder(lib: LibrarySpec) -> Path:
    """The recorder for `lib`, built now unless it is there; RecorderBuildFailed otherwise."""
    mpicc = compiler(lib)
    if mpicc is None:
        abi = LIBRARIES[lib.abi]
        where = libraries.prefix(abi) / "bin" if abi.prefix_name else "beside Python or on PATH"
        raise RecorderBuildFailed(
            f"cannot build the recorder for {lib.title}: no mpicc {where} (`make install`)"
        )
    missing = [path.name for path in (*SOURCES, HEADER) if not path.is_file()]
    if missing:
        raise RecorderBuildFailed(
            f"cannot build the recorder: {', '.join(missing)} not installed in {FOLDER}"
        )
    target = library_path(lib, mpicc)
    if target.exists():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, staged = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=".so")
        os.close(fd)
    except OSError as exc:
        raise RecorderBuildFailed(
            f"cannot build the recorder in {target.parent}: {exc.strerror}"
        ) from None
    argv = [str(mpicc), *FLAGS, "-o", staged, *map(str, SOURCES)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        Path(staged).unlink(missing_ok=True)
        raise RecorderBuildFailed(f"cannot build the recorder: {exc}") from None
    if done.returncode != 0:
        Path(staged).unlink(missing_ok=True)
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RecorderBuildFailed(f"{mpicc} could not build the recorder: {last}")
    os.chmod(staged, 0o755)
    os.replace(staged, target)
    return target


def build_all() -> list[tuple[str, str]]:
    """Build the recorder for every installed library: (library, its file or why not)."""
    done: list[tuple[str, str]] = []
    for lib in RUNNABLE.values():
        if not libraries.installed(lib):
            done.append((lib.name, "not installed"))
            continue
        try:
            done.append((lib.name, str(recorder(lib))))
        except RecorderBuildFailed as exc:
            done.append((lib.name, f"not built: {exc}"))
    return done
