"""A failing or hung rank must end its job, never hang the caller."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT

from runners.domain.sweep import launcher
from runners.host.machine import physical_cores
from runners.jobs import launch

PROGRAMS = {"PYTHONPATH": str(ROOT / "tests" / "mpi_programs")}


@pytest.mark.mpi
def test_an_exception_in_one_rank_aborts_the_whole_job() -> None:
    job = launch.Job(
        3, "crash_one_rank", knobs={**launcher.default_knobs(3, cores=physical_cores()), **PROGRAMS}
    )
    started = time.monotonic()
    result = launch.run(job, timeout=60)
    assert not result.timed_out
    assert result.returncode != 0
    assert "deliberate failure on rank 1" in result.stderr
    assert time.monotonic() - started < 30


@pytest.mark.mpi
def test_a_hung_job_is_killed_at_its_timeout() -> None:
    job = launch.Job(
        2, "hang", knobs={**launcher.default_knobs(2, cores=physical_cores()), **PROGRAMS}
    )
    started = time.monotonic()
    result = launch.run(job, timeout=3)
    assert result.timed_out
    assert time.monotonic() - started < 20


def test_oversubscribed_jobs_avoid_the_spinning_shared_memory_collectives() -> None:
    assert "MPIR_CVAR_DEVICE_COLLECTIVES" in launcher.default_knobs(3, cores=2)
    assert launcher.default_knobs(2, cores=2) == {"MPI4PY_RC_THREAD_LEVEL": "single"}


def test_launcher_template_takes_other_launchers() -> None:
    job = launch.Job(4, "m", launcher="srun --ntasks={ranks} --mpi=pmi2")
    cmd = launch.command(job)
    assert cmd[:3] == ["srun", "--ntasks=4", "--mpi=pmi2"]
    assert cmd[-3:] == ["mpi4py", "-m", "m"]


def test_a_job_file_left_by_a_killed_sweep_is_removed_by_the_next(tmp_path) -> None:
    """SIGKILL leaves the job file behind (no finally runs); the next sweep's clean-up removes
    it, and keeps those of a live process (this one's)."""
    program = (
        "import signal\n"
        "from runners.domain.sweep.job_file import VerifyJob\n"
        "from runners.jobs import launch\n"
        "with launch.job_file(VerifyJob(('ring',), ('int32',), ('sum',))) as path:\n"
        "    print(path, flush=True)\n"
        "    signal.pause()  # until the test kills it\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", program], stdout=subprocess.PIPE, text=True, env=env
    )
    left = child.stdout.readline().strip()  # the file exists once its path is printed
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert os.path.exists(left) and os.path.dirname(left) == str(tmp_path)
    mine = tmp_path / f"{launch.JOB_FILE_PREFIX}{os.getpid()}-live.json"
    mine.write_text("{}")
    assert [str(p) for p in launch.remove_orphan_job_files(tmp_path)] == [left]
    assert not os.path.exists(left) and mine.exists()


def test_a_folder_or_link_named_like_a_job_file_is_left_alone(tmp_path):
    """One stale name must not block every sweep on the host (a directory, a link, or another
    user's file in sticky /tmp named like a job file): it is skipped, never a traceback."""
    dead = 2**22 + 7  # above the largest pid Linux can give (2**22): never alive
    folder = tmp_path / f"{launch.JOB_FILE_PREFIX}{dead}-a.json"
    folder.mkdir()
    link = tmp_path / f"{launch.JOB_FILE_PREFIX}{dead}-b.json"
    link.symlink_to(tmp_path / "elsewhere")
    stale = tmp_path / f"{launch.JOB_FILE_PREFIX}{dead}-c.json"
    stale.write_text("{}")
    assert launch.remove_orphan_job_files(tmp_path) == [stale]
    assert folder.is_dir() and link.is_symlink() and not stale.exists()
