"""The job file (plan -> ranks) as typed records, checked on both sides: what the jobs write
reads back equal, and a file that does not match its kind's record is refused, by the parent
before it writes it and by the ranks before they measure."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT

from runners.domain.sweep.job_file import (
    JOB_FILES,
    CalibrationJob,
    MalformedJobFile,
    ReplayCall,
    ReplayJob,
    SweepJob,
    VerifyJob,
)
from runners.domain.sweep.plan import plan_groups
from runners.domain.sweep.records import TimingPolicy
from runners.domain.sweep.replay import ReplayLaunch, replay_job
from runners.domain.sweep.spec import parse_spec
from runners.domain.workload.file import Call
from runners.jobs import calibrate, verify

SPEC = parse_spec(
    "sizes = [8, 64]\nranks = [2]\nalgorithms = ['ring', 'mpi', 'mpi:ring']\npasses = 3\n"
    "library_switching = 'runtime'\n"
)


def sweep_job() -> SweepJob:
    """A sweep launch's job as runners.jobs.sweep_jobs builds it."""
    [group] = plan_groups(SPEC, "r1", switching="runtime", cores=8)
    return SweepJob(
        "r1", 1, group.library, group.switches, tuple(group.cells), SPEC.timing,
        calibrate.launch_job(SPEC),
    )  # fmt: skip


def every_kind() -> list:
    """One job file of every kind, each built by the code that writes it for the ranks."""
    plan = verify.VerifyPlan(ranks=(2,), algorithms=("ring",), counts=(1, 7))
    launch = ReplayLaunch("mpich", {}, {"default": ["mpi", "mpi"], "ring": ["ring", "ring"]})
    calls = [Call("allreduce", 64, "float32", "sum", 2, 3), Call("bcast", 8, "int32", "none", 2, 1)]
    return [
        sweep_job(),
        replace(sweep_job(), calibration=None),
        calibrate.worker_job([8, 64, 8], [65536], ["float32"], ["sum", "max"], 1.0),
        verify._job(plan, plan.algorithms),
        replay_job(calls, [0, 1, 0], launch, 2, 5),
    ]


@pytest.mark.parametrize("job", every_kind(), ids=lambda job: job.KIND)
def test_every_job_file_reads_back_as_the_record_written(job) -> None:
    text = job.to_json()
    assert json.loads(text)["kind"] == job.KIND
    assert JOB_FILES[job.KIND].from_json(text) == job
    assert set(JOB_FILES) == {"sweep", "calibrate", "verify", "replay"}


def test_the_sweep_job_carries_the_cells_and_the_timing_policy_nested() -> None:
    job = SweepJob.from_json(sweep_job().to_json())
    assert isinstance(job.timing, TimingPolicy) and job.timing.passes == 3
    assert isinstance(job.calibration, CalibrationJob) and job.calibration.sizes[0] == 8
    assert {a for cell in job.cells for a in cell.algorithms} == {"ring", "mpi", "mpi:ring"}
    assert job.cells[0].count == job.cells[0].nbytes // 4 and job.switches["mpi:ring"]


def _edited(job, edit) -> str:
    raw = json.loads(job.to_json())
    edit(raw)
    return json.dumps(raw)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda raw: raw.pop("launch"), r"sweep: missing \['launch'\]"),
        (lambda raw: raw.update(extra=1), r"sweep: missing \[\], unexpected \['extra'\]"),
        (lambda raw: raw.update(launch="1"), r"sweep.launch: expected int, got '1'"),
        (lambda raw: raw.update(launch=True), r"sweep.launch: expected int"),
        (lambda raw: raw["timing"].update(passes=2.5), r"sweep.timing.passes: expected int"),
        (lambda raw: raw["timing"].pop("warmup"), r"sweep.timing: missing \['warmup'\]"),
        (lambda raw: raw["cells"][0].update(algorithms="ring"), r"cells\[0\].algorithms"),
        (lambda raw: raw["switches"].update(ring=[1]), r"sweep.switches.ring: expected an object"),
        (lambda raw: raw["calibration"].update(sizes=[8, "x"]), r"calibration.sizes\[1\]"),
        (lambda raw: raw.update(kind="verify"), r"a sweep job file, but its kind is 'verify'"),
    ],
)
def test_a_malformed_sweep_job_file_is_refused_saying_where(edit, message: str) -> None:
    with pytest.raises(MalformedJobFile, match=message):
        SweepJob.from_json(_edited(sweep_job(), edit))


def test_text_that_is_no_job_file_is_refused() -> None:
    for text, message in (("{", "not JSON"), ("[1]", "holds an object"), ("{}", "kind is None")):
        with pytest.raises(MalformedJobFile, match=message):
            VerifyJob.from_json(text)
    assert SweepJob.from_json(sweep_job().to_json().replace(", ", ",  "))  # whitespace is fine


def test_the_parent_never_writes_a_job_file_the_ranks_would_refuse() -> None:
    with pytest.raises(MalformedJobFile, match=r"replay.calls\[0\].nbytes: expected int"):
        call = ReplayCall("allreduce", "8", "float32", "sum")
        ReplayJob((call,), (0,), {}, 1, 0, "mpich").to_json()
    with pytest.raises(MalformedJobFile, match=r"verify\.counts\[0\]: expected int"):
        VerifyJob(("ring",), ("int32",), ("sum",), counts=(1.5,)).to_json()


def test_the_ranks_refuse_a_malformed_job_file_before_they_measure(tmp_path: Path) -> None:
    """`python -m runners.ranks KIND JOB` reads the file as its kind's record first: a bad one
    ends the job at once with what is wrong (no MPI needed to see it)."""
    bad = tmp_path / "job.json"
    bad.write_text(_edited(sweep_job(), lambda raw: raw["timing"].update(passes="3")))
    for argv, message in (
        (["sweep", str(bad)], "sweep.timing.passes: expected int, got '3'"),
        (["verify", str(bad)], "a verify job file, but its kind is 'sweep'"),
        (["sweep", str(tmp_path / "missing.json")], "No such file"),
        (["calibrate"], "a calibrate job takes a job file"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "runners.ranks", *argv],
            capture_output=True, text=True, cwd=ROOT, timeout=60,
        )  # fmt: skip
        assert done.returncode != 0 and message in done.stderr, (argv, done.stderr)
        assert "refused" in done.stderr or "takes a job file" in done.stderr
