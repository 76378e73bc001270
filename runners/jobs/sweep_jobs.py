"""One sweep job at a time: launch the ranks of a group, follow their events, store the points.

No MPI here. A job that crashes or hangs (the watchdog) costs only the cell in flight: its points
are stored as failed or timed out with the reason, and the job is relaunched for the cells left.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from runners.domain.libraries import LIBRARIES, switching_mode_of
from runners.domain.libraries.catalog import has_forced
from runners.domain.libraries.switching import LAUNCH, RUNTIME
from runners.domain.model.calibration import calibration_row
from runners.domain.model.calibration_id import CalibrationId, CalibrationKind
from runners.domain.status import PointStatus
from runners.domain.sweep.events import (
    Calibrated,
    CellStarted,
    Done,
    Hello,
    PointMeasured,
    Probe,
    parse_event,
)
from runners.domain.sweep.job_file import SweepJob
from runners.domain.sweep.launcher import default_knobs
from runners.domain.sweep.plan import Cell, Group, Launch, plan_groups
from runners.domain.sweep.point_row import Measurement, PointRow
from runners.domain.sweep.records import PointKey
from runners.domain.sweep.spec import STARTUP_GRACE_S, SweepSpec
from runners.host.machine import hostname, physical_cores
from runners.host.tuning_files import file_record
from runners.jobs import calibrate, launch
from runners.jobs.point_history import PointHistory
from runners.jobs.progress import Progress
from runners.jobs.run_writer import RunWriter

PROBE_TIMEOUT_S = 60.0


def _timestamp(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None)


def event_rows(
    run_id: str, event: PointMeasured, cores: int, group: Group
) -> tuple[PointRow, list[dict]]:
    """Turn a worker's `point` event, measured in a launch of `group` on a host of `cores`
    physical cores, into its points row (before statistics) and this launch's samples
    (seconds and pass)."""
    key = PointKey(run_id, event.algorithm, event.ranks, event.nbytes, event.dtype, event.op)
    if event.point_id != key.point_id():
        raise ValueError(f"the ranks reported point {event.point_id!r} for {key}")
    measured = Measurement(
        warmup=event.warmup,
        sync_cadence=event.sync_cadence,
        cache_mode=event.cache_mode,
        verified=event.verified,
        started_at=_timestamp(event.started_at),
        finished_at=_timestamp(event.finished_at),
    )
    status = PointStatus(event.status)
    row = PointRow(
        key,
        status,
        event.reason,
        cores,
        group.switching,
        group.label,
        measured,
        ranks_per_node=group.ranks_per_node,
    )
    samples = [{"seconds": s, "pass": p} for s, p in zip(event.samples, event.passes, strict=True)]
    return row, samples


@dataclass(frozen=True)
class Broken:
    """Why a launch ended before its cells did, and what that makes of its cell in flight."""

    status: PointStatus  # TIMEOUT: the watchdog found it hung; FAILED: the job ended
    reason: str


@dataclass
class GroupRunner:
    """Runs one launch of a group's cells, relaunching after a crash or hang with the cells
    left; every point's row sums up all of its launches so far (PointHistory)."""

    spec: SweepSpec
    run_id: str
    writer: RunWriter
    progress: Progress
    cores: int  # the host's physical cores (a point with more ranks is oversubscribed)
    history: PointHistory = field(default_factory=PointHistory)
    stored: set[tuple[str, int]] = field(default_factory=set)  # (point_id, launch) this sweep
    failures: list[str] = field(default_factory=list)
    load_before: tuple[float, ...] = ()
    libraries: dict[str, dict[str, str]] = field(default_factory=dict)  # hellos stored so far
    switching: tuple[str, str] = (LAUNCH, "")  # the mode the sweep uses, and why

    def run(self, planned: Launch) -> None:
        """Measure every cell of the launch; a broken job costs only its in-flight cell."""
        cells = list(planned.group.cells)
        while cells:
            finished, broken = self._run_job(planned, cells)
            cells = cells[finished:]
            if broken is not None:
                self.failures.append(broken.reason)
                self._give_up_cell(planned, cells[0], broken)
                cells = cells[1:]

    def _run_job(self, planned: Launch, cells: list) -> tuple[int, Broken | None]:
        """One launch; returns how many cells finished and why it broke (None if it didn't)."""
        group, spec = planned.group, self.spec
        payload = SweepJob(
            run_id=self.run_id,
            launch=planned.index,
            library=group.library,
            switches=group.switches,
            cells=tuple(cells),
            timing=spec.timing,
            calibration=calibrate.launch_job(spec) if spec.launch_calibration else None,
        )
        with launch.job_file(payload) as path:
            job = launch.Job(
                group.ranks,
                launch.RANKS_ENTRY,
                ["sweep", path],
                group.knobs,
                spec.launcher,
                spec.launcher_shell,
                group.library,
                launch.network_wrapper(spec),
                spec.nodes.ranks_per_node,
            )
            return self._follow(launch.RunningJob(job), planned)

    def _follow(self, running: launch.RunningJob, planned: Launch) -> tuple[int, Broken | None]:
        """Store the job's events as they come; returns (cells finished, why it broke)."""
        group = planned.group
        where = f"ranks={group.ranks} launch {planned.index + 1} of {self.spec.timing.launches}"
        cells_started, done = 0, False
        timeout = STARTUP_GRACE_S + self.spec.point_timeout_s
        try:
            while (line := running.next_line(timeout, self.writer.flush_if_due)) is not None:
                event = parse_event(line)
                if isinstance(event, Hello):
                    self._save_provenance(event, group.library)
                elif isinstance(event, CellStarted):
                    cells_started += 1
                    timeout = self.spec.point_timeout_s
                elif isinstance(event, PointMeasured):
                    self._store_point(event, planned)
                elif isinstance(event, Probe):
                    self._store_probe(event, planned)
                elif isinstance(event, Calibrated):
                    self._store_calibration(event, planned)
                elif isinstance(event, Done):
                    done = True
        except launch.JobHung as exc:
            running.kill()
            grace = (
                f" (before its first point a launch gets {STARTUP_GRACE_S:g} s for start-up "
                f"on top of the point timeout of {self.spec.point_timeout_s:g} s)"
                if not cells_started
                else ""
            )
            hung = Broken(PointStatus.TIMEOUT, f"{where}: watchdog: {exc}{grace}")
            return max(cells_started - 1, 0), hung
        except BaseException:
            running.kill()
            raise
        code = running.wait()
        if done and code == 0:
            return cells_started, None
        why = f"{where}: {exit_reason(code, done, running.stderr_tail())}"
        return max(cells_started - 1, 0), Broken(PointStatus.FAILED, why)

    def _store_probe(self, event: Probe, planned: Launch) -> None:
        group = planned.group
        self.writer.add_probe(
            asdict(event)
            | {"job": group.label, "ranks": group.ranks, "launch": planned.index}
            | {"measured_at": _timestamp(event.measured_at)}
        )

    def _store_calibration(self, event: Calibrated, planned: Launch) -> None:
        """Queue the launch's calibration; one that cannot be fitted costs only its
        predictions, never the launch's points."""
        group = planned.group
        where = {"run_id": self.run_id, "job": group.label, "launch": planned.index}
        try:
            row = calibration_row(asdict(event), extra=where, host=hostname())
        except ValueError as exc:
            self.progress.out(
                f"ranks={group.ranks} launch {planned.index + 1}: its calibration "
                f"cannot be fitted ({exc}); predictions use the others"
            )
            return
        launch = CalibrationId(
            CalibrationKind.LAUNCH, self.run_id, group.label, planned.index, group.library
        )
        row["calibration_id"], row["source"] = str(launch), str(launch.source())
        self.writer.add_calibration(row)

    def _store_point(self, event: PointMeasured, planned: Launch) -> None:
        row, samples = event_rows(self.run_id, event, self.cores, planned.group)
        self._store(row, planned, samples)

    def _store(self, row: PointRow, planned: Launch, samples: list[dict]) -> None:
        launch = planned.index
        row, samples = self.history.merge(row, launch, samples, self.spec.timing)
        columns = row.columns()
        self.stored.add((row.point_id, launch))
        self.writer.add_point(columns, samples, wanted_launches=self.spec.timing.launches)
        self.progress.point(columns)

    def _give_up_cell(self, planned: Launch, cell: Cell, broken: Broken) -> None:
        """Store the broken cell's points (those without this launch yet) as failed or timed
        out, keeping their earlier launches' samples."""
        group = planned.group
        for alg in cell.algorithms:
            key = PointKey(self.run_id, alg, group.ranks, cell.nbytes, cell.dtype, cell.op)
            if (key.point_id(), planned.index) not in self.stored:
                row = PointRow(
                    key,
                    broken.status,
                    broken.reason,
                    self.cores,
                    group.switching,
                    group.label,
                    ranks_per_node=group.ranks_per_node,
                )
                self._store(row, planned, [])

    def _save_provenance(self, event: Hello, library: str) -> None:
        """The first hello of each library: its versions in runs.libraries; the spec's first
        library's also in the runs columns, with the sweep's environment record."""
        if library in self.libraries:
            return
        fields = {k: v for k, v in asdict(event).items() if k not in ("python_version", "ranks")}
        self.libraries[library] = {k: fields[k] for k in ("mpi_library", "mpi_version")}
        if library != self.spec.libraries[0]:
            self.writer.update_run({"libraries": dict(self.libraries)})
            return
        fields["environment"] = environment_record(self.spec, self.load_before, self.switching)
        self.writer.update_run(fields | {"libraries": dict(self.libraries)})


def exit_reason(code: int, done: bool, stderr_tail: str) -> str:
    """Why a job that ended did not finish its cells, in words."""
    if code == 0 and not done:
        why = "job exited with 0 without reporting its points (did the launcher run the ranks?)"
    else:
        why = f"job exited with {code}"
    return f"{why}: {stderr_tail}" if stderr_tail else why


def environment_record(
    spec: SweepSpec, load_before: tuple[float, ...] = (), switching: tuple[str, str] = (LAUNCH, "")
) -> dict:
    """Every knob the jobs of this sweep set, per job, MPI-related variables inherited, the
    machine's 1/5/15-minute load average before the sweep started (other work on the cores
    shows up as millisecond stalls in the samples), how library algorithms were forced, and
    the tuning file mpi:tuned followed."""
    mode, why = switching
    groups = plan_groups(spec, "env", switching=mode, cores=physical_cores())
    jobs = {g.label: g.knobs for g in groups}
    inherited = {
        k: v
        for k, v in os.environ.items()
        if k.startswith(
            ("MPIR_", "MPICH_", "MPI4PY_", "HYDRA_", "OMP_", "OPENBLAS_", "SLURM_", "I_MPI_", "FI_")
        )
    }
    record = {
        "jobs": jobs,
        "inherited": inherited,
        "load_average_before": list(load_before),
        "library_switching": {"mode": mode, "why": why},
    }
    if spec.tuning_file:
        record["tuning_file"] = file_record(spec.tuning_file)
    if spec.vendor_tuning_file:
        record["vendor_tuning_file"] = file_record(spec.vendor_tuning_file)
    record["library_forcing"] = {
        name: {
            "mode": switching_mode_of(LIBRARIES[name], mode, spec.library_switching),
            "how": LIBRARIES[name].runtime_forcing or "a launch per forced algorithm",
        }
        for name in spec.libraries
    }
    return record


def switching_mode(spec: SweepSpec) -> tuple[str, str]:
    """How this sweep forces library algorithms, and why: MPI_T in shared launches when the
    spec asks for it and a one-rank probe finds the library can, else launches of their own."""
    if not has_forced(spec.algorithms):
        return LAUNCH, "no forced library algorithm in the spec"
    if spec.library_switching == LAUNCH:
        return LAUNCH, "the spec asks for a launch per forced algorithm"
    probe = launch.Job(
        1,
        launch.RANKS_ENTRY,
        ["probe"],
        default_knobs(1, cores=physical_cores()),
        spec.launcher,
        spec.launcher_shell,
    )
    result = launch.run(probe, PROBE_TIMEOUT_S)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    found: dict[str, Any] = (
        json.loads(lines[-1]) if lines else {"available": False, "reason": result.stderr[-300:]}
    )
    if found["available"]:
        return RUNTIME, "MPI_T_cvar_write switches MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM per call"
    return LAUNCH, f"run-time switching unavailable: {found['reason'].strip() or 'probe failed'}"
