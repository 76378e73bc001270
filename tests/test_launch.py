"""A failing or hung rank must end its job, never hang the caller."""

from __future__ import annotations

import time

import pytest
from conftest import ROOT

from runners.domain import launcher
from runners.jobs import launch

PROGRAMS = {"PYTHONPATH": str(ROOT / "tests" / "mpi_programs")}


@pytest.mark.mpi
def test_an_exception_in_one_rank_aborts_the_whole_job() -> None:
    job = launch.Job(3, "crash_one_rank", knobs={**launcher.default_knobs(3), **PROGRAMS})
    started = time.monotonic()
    result = launch.run(job, timeout=60)
    assert not result.timed_out
    assert result.returncode != 0
    assert "deliberate failure on rank 1" in result.stderr
    assert time.monotonic() - started < 30


@pytest.mark.mpi
def test_a_hung_job_is_killed_at_its_timeout() -> None:
    job = launch.Job(2, "hang", knobs={**launcher.default_knobs(2), **PROGRAMS})
    started = time.monotonic()
    result = launch.run(job, timeout=3)
    assert result.timed_out
    assert time.monotonic() - started < 20


def test_oversubscribed_jobs_avoid_the_spinning_shared_memory_collectives() -> None:
    assert "MPIR_CVAR_DEVICE_COLLECTIVES" in launcher.default_knobs(10_000)
    assert launcher.default_knobs(1) == {"MPI4PY_RC_THREAD_LEVEL": "single"}


def test_launcher_template_takes_other_launchers() -> None:
    job = launch.Job(4, "m", launcher="srun --ntasks={ranks} --mpi=pmi2")
    cmd = launch.command(job)
    assert cmd[:3] == ["srun", "--ntasks=4", "--mpi=pmi2"]
    assert cmd[-3:] == ["mpi4py", "-m", "m"]
