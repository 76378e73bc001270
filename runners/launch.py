"""Starting MPI jobs: the launcher command, the environment knobs, timeouts and clean kills.

No MPI is imported here: the parent process only starts and watches the ranks.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from runners.machine import physical_cores

DEFAULT_LAUNCHER = "mpiexec -n {ranks}"


@dataclass(frozen=True)
class Job:
    """One MPI job: how many ranks, which Python module they run, and their environment."""

    ranks: int
    module: str
    args: Sequence[str] = ()
    knobs: Mapping[str, str] = field(default_factory=dict)
    launcher: str = DEFAULT_LAUNCHER


@dataclass(frozen=True)
class JobResult:
    """What a finished (or killed) job left behind."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def is_oversubscribed(ranks: int, cores: int | None = None) -> bool:
    """True when more ranks than physical cores would share this machine."""
    return ranks > (physical_cores() if cores is None else cores)


def default_knobs(ranks: int, thread_level: str = "single") -> dict[str, str]:
    """Environment knobs a job needs for honest numbers on this machine.

    mpi4py asks for MPI_THREAD_MULTIPLE unless told otherwise, and MPICH then skips its fast
    shared-memory collectives, so the thread level is set explicitly. With more ranks than
    cores MPICH's shared-memory collectives spin (milliseconds per call), so oversubscribed
    jobs use the generic algorithms instead.
    """
    knobs = {"MPI4PY_RC_THREAD_LEVEL": thread_level}
    if is_oversubscribed(ranks):
        knobs["MPIR_CVAR_DEVICE_COLLECTIVES"] = "none"
    return knobs


def _mpiexec() -> str:
    beside_python = Path(sys.executable).with_name("mpiexec")
    if beside_python.exists():
        return str(beside_python)
    return shutil.which("mpiexec") or "mpiexec"


def command(job: Job) -> list[str]:
    """The full command line: the launcher template, then Python under mpi4py's abort guard.

    `python -m mpi4py` calls MPI_Abort when any rank raises, so one failing rank ends the
    whole job instead of leaving the others blocked.
    """
    launcher = shlex.split(job.launcher.format(ranks=job.ranks))
    if launcher and launcher[0] == "mpiexec":
        launcher[0] = _mpiexec()
    return [*launcher, sys.executable, "-m", "mpi4py", "-m", job.module, *job.args]


def run(job: Job, timeout: float) -> JobResult:
    """Run `job` to completion, killing every rank if it outlives `timeout` seconds."""
    env = {**os.environ, **job.knobs}
    proc = subprocess.Popen(
        command(job),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
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
