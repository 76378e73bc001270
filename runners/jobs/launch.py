"""Starting MPI jobs: the launcher command, the environment knobs, timeouts and clean kills.

No MPI is imported here: the parent process only starts and watches the ranks.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from runners.domain.collectives.descriptor import MPICH
from runners.domain.libraries import DEFAULT, LIBRARIES, RUNNABLE
from runners.domain.sweep.job_file import JobFile
from runners.domain.sweep.launcher import (
    DEFAULT_LAUNCHER,
    PARENT_ENV,
    launcher_syntax_problem,
    launcher_text,
)
from runners.domain.sweep.spec import SweepSpec
from runners.host import libraries
from runners.process import faults
from runners.process.children import python
from runners.process.network_namespace import wrapper


@dataclass(frozen=True)
class Job:
    """One MPI job: how many ranks, which Python module they run, and their environment."""

    ranks: int
    module: str
    args: Sequence[str] = ()
    knobs: Mapping[str, str] = field(default_factory=dict)
    launcher: str = DEFAULT_LAUNCHER
    launcher_shell: bool = False
    library: str = MPICH  # another library's ranks start with its own mpiexec
    wrap: tuple[str, ...] = ()  # words the launcher runs under (a network namespace's entry)
    ranks_per_node: int = 0  # what a cluster launcher's {ranks_per_node} says (0: all on one)


WAITING_TICK_S = 1.0  # how often a job that prints nothing gives its reader a turn
RANKS_ENTRY = "runners.ranks"  # `python -m runners.ranks KIND JOB`: every job's rank program


JOB_FILE_PREFIX = "collsweep-job-"


@contextlib.contextmanager
def job_file(job: JobFile) -> Iterator[str]:
    """The job's record (runners.domain.sweep.job_file) as the ranks' JSON job file, removed when
    the block ends. Its name carries this process's id (collsweep-job-<pid>-*.json), so one
    that a killed process left behind is found by the next sweep (remove_orphan_job_files)."""
    text = job.to_json()  # checked as the ranks will check it, before the file exists
    prefix = f"{JOB_FILE_PREFIX}{os.getpid()}-"
    with tempfile.NamedTemporaryFile("w", prefix=prefix, suffix=".json", delete=False) as handle:
        handle.write(text)
    try:
        yield handle.name
    finally:
        os.unlink(handle.name)


def remove_orphan_job_files(folder: Path | None = None) -> list[Path]:
    """Remove the job files whose process is gone (a SIGKILLed sweep cannot remove its own)
    from `folder` (the temporary folder); the paths removed."""
    removed = []
    for path in Path(folder or tempfile.gettempdir()).glob(f"{JOB_FILE_PREFIX}*-*.json"):
        pid = path.name.removeprefix(JOB_FILE_PREFIX).split("-", 1)[0]
        if pid.isdigit() and _ours(path) and not _alive(int(pid)):
            try:
                path.unlink()
            except OSError:  # gone meanwhile, or not ours to remove (sticky /tmp)
                continue
            removed.append(path)
    return removed


def _ours(path: Path) -> bool:
    """A regular file of this user: a directory, link or another user's file named like a
    job file is left where it is."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


@dataclass(frozen=True)
class JobResult:
    """What a finished (or killed) job left behind."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def launcher_problem(template: str, shell: bool = False) -> str | None:
    """Why the launcher cannot start jobs here (syntax, or its program not found), or None."""
    problem = launcher_syntax_problem(template, shell)
    if problem or shell:
        return problem
    program = shlex.split(launcher_text(template, 2, 1))[0]
    resolved = str(libraries.mpiexec(DEFAULT)) if program == "mpiexec" else program
    if shutil.which(resolved) is None:
        return f"launcher program {program!r} not found (is it installed and on PATH?)"
    return None


def installed_libraries() -> list[str]:
    """The MPI libraries whose ranks can start here (MPICH's mpiexec, the others' prefixes)."""
    return [name for name, lib in RUNNABLE.items() if libraries.installed(lib)]


def libraries_problem(libraries: Sequence[str]) -> str | None:
    """Why a sweep cannot run on these libraries here (one not installed), or None."""
    here = installed_libraries()
    missing = [name for name in libraries if name not in here]
    if not missing:
        return None
    wheels = ", ".join(lib.package for lib in RUNNABLE.values())
    return (
        f"library {', '.join(missing)} is not installed here (installed: "
        f"{', '.join(here) or 'none'}); `make install` installs {wheels}"
    )


def command(job: Job) -> list[str]:
    """The full command line: the job's wrapper (if any), the launcher template, then Python
    under mpi4py's abort guard."""
    return [*job.wrap, *_launch_words(job)]


def _launch_words(job: Job) -> list[str]:
    """The launcher template, then Python under mpi4py's abort guard.

    `python -m mpi4py` calls MPI_Abort when any rank raises, so one failing rank ends the
    whole job instead of leaving the others blocked. A shell launcher runs with sh -c, the
    rank program passed as its arguments.
    """
    program = python("-m", "mpi4py", "-m", job.module, *job.args)
    passed = [*job.knobs, PARENT_ENV, *(["PYTHONPATH"] if "PYTHONPATH" in os.environ else [])]
    own = libraries.command(LIBRARIES[job.library], job.ranks, program, passed)
    if own is not None:  # a library with a launcher of its own (Open MPI, Intel MPI)
        return own
    text = launcher_text(job.launcher, job.ranks, job.ranks_per_node or job.ranks)
    if job.launcher_shell:
        return ["sh", "-c", f'{text} "$@"', "sh", *program]
    launcher = shlex.split(text)
    if launcher and launcher[0] == "mpiexec":
        launcher[0] = str(libraries.mpiexec(DEFAULT))
    return [*launcher, *program]


def network_wrapper(spec: SweepSpec) -> tuple[str, ...]:
    """The words a launch on the spec's emulated nodes runs under: a private network namespace
    whose loopback is the spec's network (runners.process.network_namespace); () on one host."""
    return tuple(wrapper(spec.shaped_network.qdisc())) if spec.nodes.emulated else ()


def job_env(job: Job) -> dict[str, str]:
    """The job's environment: ours, its knobs, the venv's bin first (a shell launcher's
    `mpiexec` is the wheel's), and our pid, so ranks can leave when this process is gone."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    parent = f"{socket.gethostname()}:{os.getpid()}"
    extra = libraries.launch_env(LIBRARIES[job.library])
    ours = faults.without_disabled_hooks(os.environ)
    return {**ours, **job.knobs, **extra, "PATH": path, PARENT_ENV: parent}


def start(job: Job) -> subprocess.Popen:
    """Start `job` in a session of its own (a terminal's Ctrl-C reaches only collsweep, which
    then kills the whole group), its output piped back as text."""
    return subprocess.Popen(
        command(job),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=job_env(job),
        start_new_session=True,
    )


def run(job: Job, timeout: float) -> JobResult:
    """Run `job` to completion, killing every rank if it outlives `timeout` seconds."""
    proc = start(job)
    try:
        out, err = proc.communicate(timeout=timeout)
        return JobResult(proc.returncode, out, err, timed_out=False)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        return JobResult(proc.returncode, out, err, timed_out=True)
    except BaseException:
        kill_group(proc)
        proc.communicate()
        raise


def kill_group(proc: subprocess.Popen) -> None:
    """Kill a job's whole process group (the launcher and every rank it started)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


class JobHung(Exception):
    """A streaming job printed nothing for longer than its watchdog allows."""


class RunningJob:
    """A job started in the background whose stdout is read line by line as it runs."""

    def __init__(self, job: Job) -> None:
        self.proc = start(job)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=200)
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        self._stderr_thread = threading.Thread(target=self._pump_stderr, daemon=True)
        self._stderr_thread.start()

    def _pump_stdout(self) -> None:
        for line in self.proc.stdout or ():
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        for line in self.proc.stderr or ():
            self._stderr.append(line.rstrip("\n"))

    def next_line(
        self, idle_timeout: float, while_waiting: Callable[[], None] | None = None
    ) -> str | None:
        """The next stdout line, None at EOF; JobHung after `idle_timeout` s of silence.
        `while_waiting` is called about once a second while no line comes."""
        deadline = time.monotonic() + idle_timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                return self._lines.get(timeout=min(left, WAITING_TICK_S))
            except queue.Empty:
                if while_waiting is not None:
                    while_waiting()
        raise JobHung(f"no progress for {idle_timeout:g} s")

    def wait(self, timeout: float = 30) -> int:
        """The exit status, killing the job if it does not end within `timeout`."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.wait()

    def kill(self) -> None:
        """Kill every process of the job and reap the launcher."""
        kill_group(self.proc)
        self.proc.wait()

    def stderr_tail(self, lines: int = 5) -> str:
        """The last lines the job wrote to stderr, joined for a reason column."""
        self._stderr_thread.join(timeout=2)
        return " | ".join(list(self._stderr)[-lines:])
