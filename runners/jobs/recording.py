"""`collsweep record`: run a program under the call recorder and write the workload it made.

The command after `--` runs as given (no shell), with the recorder preloaded into every process
it starts (LD_PRELOAD; ranks inherit it from the launcher, which passes its environment on) and
a temporary folder for the ranks' records. Which MPI library the ranks run decides which build
of the recorder is preloaded (MPICH's also serves Intel MPI; Open MPI needs its own): `--library`
names it, else the launcher's location does (a launcher from Open MPI's or Intel MPI's prefix
means that library, anything else MPICH), and that library's own environment is added as
collsweep's launches add it (its libmpi for mpi4py, Intel MPI's LD_LIBRARY_PATH). The output is
checked before anything starts; a program that fails leaves nothing written and its exit status
becomes collsweep's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from runners.domain.errors import BadInput, CollsweepError
from runners.domain.libraries import (
    DEFAULT,
    LIBRARIES,
    RUNNABLE,
    LibrarySpec,
    short_library_version,
)
from runners.domain.outputs import check_outputs, write_texts
from runners.domain.workload.file import MAX_ORDER, Workload
from runners.domain.workload.recorded import recorded_workload
from runners.domain.workload.recording import read_records
from runners.host import libraries
from runners.jobs.recorder_build import recorder
from runners.process.reaper import Reaper, reaped

DIR_ENV = "COLLSWEEP_RECORD_DIR"  # the folder the ranks write their records into
MAX_ORDER_ENV = "COLLSWEEP_RECORD_MAX_ORDER"  # order runs a rank keeps


class BadCommand(BadInput):
    """A command `collsweep record` cannot start (exit 2, nothing started)."""


class ProgramFailed(CollsweepError):
    """The recorded program failed: nothing is written, and collsweep exits with its status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.exit_status = status


def search_path() -> str:
    """PATH with this Python's bin first, as collsweep's launches have it (the wheel's
    mpiexec and this Python for a bare `mpiexec` or `python`)."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def resolved_program(argv: Sequence[str]) -> Path:
    """The command's program file; BadCommand when there is no command or it is not found."""
    if not argv:
        raise BadCommand("no command to record: give it after --, e.g. -- mpiexec -n 2 ./a.out")
    found = shutil.which(argv[0], path=search_path())
    if found is None:
        raise BadCommand(f"program {argv[0]!r} not found (is it installed and on PATH?)")
    return Path(found)


def library_for(program: Path, asked: str | None = None) -> LibrarySpec:
    """The MPI library the ranks run: the one asked for, else the one whose prefix holds the
    launcher, else MPICH."""
    if asked:
        return LIBRARIES[asked]
    real = program.resolve()
    for lib in RUNNABLE.values():
        if lib.prefix_name and real.is_relative_to(libraries.prefix(lib).resolve()):
            return lib
    return DEFAULT


def default_name(argv: Sequence[str]) -> str:
    """The workload's name from the command: the module of `python -m M`, the first Python
    file, or the first executable file after the launcher; else the last word."""
    words = list(argv[1:])
    for at, word in enumerate(words):
        path = Path(word)
        if word == "-m" and at + 1 < len(words):
            return words[at + 1][:200]
        if path.suffix == ".py":
            return path.stem[:200]
        is_program = path.is_file() and os.access(path, os.X_OK) and os.sep in word
        if is_program and not path.name.startswith("python"):
            return path.name[:200]
    return Path(argv[-1]).name[:200] or "recorded"


def program_env(lib: LibrarySpec, preload: Path, folder: Path) -> dict[str, str]:
    """The program's environment: ours, the library's, the recorder preloaded before anything
    the caller preloads, and where the ranks write their records."""
    env = {**os.environ, "PATH": search_path(), **libraries.launch_env(lib)}
    libmpi = libraries.install(lib).libmpi
    if libmpi is not None:
        env["MPI4PY_LIBMPI"] = str(libmpi)
    earlier = os.environ.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = f"{preload}:{earlier}" if earlier else str(preload)
    env[DIR_ENV] = str(folder)
    env[MAX_ORDER_ENV] = str(MAX_ORDER)
    return env


def run_program(argv: Sequence[str], env: dict[str, str], reaper: Reaper) -> None:
    """Run the command to its end in a process group of its own, its output on ours, the
    group killed however this ends (a stop, or collsweep killed outright: the reaper);
    ProgramFailed when it fails."""
    try:
        proc = subprocess.Popen(list(argv), env=env, start_new_session=True)
    except OSError as exc:
        raise BadCommand(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
    reaper.watch(proc.pid)
    try:
        status = proc.wait()
    except BaseException:  # a stop: the program's launcher and every rank it started
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    if status < 0:
        raise ProgramFailed(
            f"the program was killed by signal {-status}: nothing written", 128 - status
        )
    if status > 0:
        raise ProgramFailed(f"the program exited with status {status}: nothing written", status)


def record(
    argv: Sequence[str], out: Path, name: str | None = None, library: str | None = None
) -> Workload:
    """Run `argv` under the recorder and write its workload to `out` (rank 0's view; notes on
    disagreeing ranks and on calls not recorded)."""
    check_outputs([out])
    program = resolved_program(argv)
    lib = library_for(program, library)
    preload = recorder(lib)
    with (
        tempfile.TemporaryDirectory(
            prefix="collsweep-record-", ignore_cleanup_errors=True
        ) as folder,
        reaped(Path(folder)) as reaper,
    ):
        run_program(argv, program_env(lib, preload, Path(folder)), reaper)
        records = read_records(Path(folder))
    source = {
        "kind": "recorded",
        "command": list(argv),
        "library": short_library_version(records[0].library),
        "ranks": records[0].world_size,
    }
    workload = recorded_workload(records, name or default_name(argv), source)
    write_texts({out: workload.to_text()})
    return workload
