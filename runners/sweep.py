"""`collsweep sweep`: launch the ranks per (ranks, library configuration), stream into the store.

No MPI here. The parent starts jobs, watches them (a watchdog per point), stores each
finished point as it arrives, and survives Ctrl-C, SIGTERM and crashed or hung ranks with
every finished point kept and the run marked with the reason.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from runners import __version__, analysis, launch, run_writer, store
from runners.journal import RunLock
from runners.machine import cpu_model, hostname, physical_cores
from runners.plan import Group, all_point_ids, plan_groups, skeleton_point, skipped_points
from runners.run_writer import RunWriter
from runners.spec import SweepSpec, parse_spec

STARTUP_GRACE_S = 60.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class Interrupted(Exception):
    """The sweep received SIGINT, SIGTERM, SIGHUP or SIGQUIT."""


class ForceQuit(Interrupted):
    """A second stop signal: leave at once, whatever is still unstored stays in the journal."""


@dataclass
class SweepOutcome:
    """How a sweep ended."""

    run_id: str
    status: str
    reason: str
    measured: int
    total: int
    stored: bool = True  # False: left on a second signal with writes still in the journal


def new_run_id() -> str:
    """A short unique id that sorts by start time."""
    return datetime.now(UTC).strftime("r%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def code_version() -> str:
    """The git commit of this checkout (+dirty), or the package version outside git."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return f"collsweep {__version__}"
    suffix = "+dirty" if dirty.stdout.strip() else ""
    return f"collsweep {__version__} git {commit.stdout.strip()}{suffix}"


def run_row(spec: SweepSpec, run_id: str, command_line: str) -> dict:
    """The runs row as far as the parent knows it (the ranks add the library's facts)."""
    return {
        "run_id": run_id,
        "status": "running",
        "status_reason": "",
        "started_at": datetime.now(UTC).replace(tzinfo=None),
        "spec_toml": spec.to_toml(),
        "command_line": command_line,
        "host": hostname(),
        "cpu_model": cpu_model(),
        "physical_cores": physical_cores(),
        "code_version": code_version(),
        "environment": {},
        "python_version": sys.version.split()[0],
    }


def _timestamp(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None)


def event_rows(run_id: str, event: dict) -> tuple[dict, list[dict]]:
    """Turn a worker's `point` event into a points row and its samples rows."""
    base = skeleton_point(
        run_id, event["algorithm"], event["ranks"], event["bytes"], event["dtype"], event["op"]
    )
    extra = {
        k: v
        for k, v in event.items()
        if k not in ("type", "samples", "passes", "algorithm", "ranks", "bytes", "dtype", "op")
    }
    extra["started_at"] = _timestamp(extra["started_at"])
    extra["finished_at"] = _timestamp(extra["finished_at"])
    row = base | extra
    samples = [
        {"point_id": row["point_id"], "run_id": run_id, "iteration": i, "seconds": s, "pass": p}
        for i, (s, p) in enumerate(zip(event["samples"], event["passes"], strict=True))
    ]
    return row, samples


@dataclass
class Progress:
    """Progress with an ETA on stderr."""

    total: int
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    out: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)

    def point(self, row: dict) -> None:
        """Report one finished point."""
        self.done += 1
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        median = row.get("median_s")
        shown = f"{median * 1e6:10.2f} us" if median else f"{row['status']:>13}"
        self.out(
            f"[{self.done:>4}/{self.total}] p={row['ranks']:<3} {row['algorithm']:<27}"
            f"{row['bytes']:>11} B {row['dtype']:<8}{row['op']:<14}{shown}"
            f"   ETA {int(eta // 60)}:{int(eta % 60):02d}"
        )


@contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Turn the stop signals into Interrupted (the first) and ForceQuit (any later one)."""
    received = 0

    def handler(signum: int, _frame: object) -> None:
        nonlocal received
        received += 1
        name = signal.Signals(signum).name
        raise (Interrupted if received == 1 else ForceQuit)(name)

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@dataclass
class GroupRunner:
    """Runs one group's cells, relaunching after a crash or hang with the cells left."""

    spec: SweepSpec
    run_id: str
    writer: RunWriter
    progress: Progress
    failures: list[str] = field(default_factory=list)
    provenance_saved: bool = False
    load_before: tuple[float, ...] = ()

    def run(self, group: Group) -> None:
        """Measure every cell of `group`; a broken job costs only its in-flight cell."""
        cells = list(group.cells)
        while cells:
            finished, failure = self._run_job(group, cells)
            cells = cells[finished:]
            if failure:
                self.failures.append(failure)
                self._give_up_cell(group, cells[0], failure)
                cells = cells[1:]

    def _run_job(self, group: Group, cells: list) -> tuple[int, str]:
        """One launch; returns how many cells finished and why it broke ('' if it didn't)."""
        job_group = Group(group.ranks, group.config, group.knobs, cells)
        spec = self.spec
        payload = {
            **job_group.as_dict(),
            "run_id": self.run_id,
            "warmup": spec.warmup,
            "min_iterations": spec.min_iterations,
            "max_iterations": spec.max_iterations,
            "target_rel_ci": spec.target_rel_ci,
            "budget_s": spec.budget_s,
            "passes": spec.passes,
            "cache_mode": spec.cache_mode,
        }
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(payload, handle)
        job = launch.Job(
            group.ranks,
            "runners.sweep_worker",
            [handle.name],
            group.knobs,
            spec.launcher,
            spec.launcher_shell,
        )
        try:
            return self._follow(launch.RunningJob(job), group)
        finally:
            os.unlink(handle.name)

    def _follow(self, running: launch.RunningJob, group: Group) -> tuple[int, str]:
        """Store the job's events as they come; returns (cells finished, why it broke)."""
        cells_started, done = 0, False
        timeout = STARTUP_GRACE_S + self.spec.point_timeout_s
        try:
            while (line := running.next_line(timeout)) is not None:
                event = json.loads(line) if line.startswith("{") else {}
                kind = event.get("type")
                if kind == "hello":
                    self._save_provenance(event, group)
                elif kind == "cell":
                    cells_started += 1
                    timeout = self.spec.point_timeout_s
                elif kind == "point":
                    self._store_point(event)
                elif kind == "done":
                    done = True
        except launch.JobHung as exc:
            running.kill()
            return max(cells_started - 1, 0), f"ranks={group.ranks}: watchdog: {exc}"
        except BaseException:
            running.kill()
            raise
        code = running.wait()
        if done and code == 0:
            return cells_started, ""
        why = f"ranks={group.ranks}: {exit_reason(code, done, running.stderr_tail())}"
        return max(cells_started - 1, 0), why

    def _store_point(self, event: dict) -> None:
        row, samples = event_rows(self.run_id, event)
        self.writer.add_point(row, samples)
        self.progress.point(row)

    def _give_up_cell(self, group: Group, cell, reason: str) -> None:
        """Store the broken cell's points (those not stored yet) as failed or timed out."""
        status = "timeout" if "watchdog" in reason else "failed"
        for alg in cell.algorithms:
            row = skeleton_point(self.run_id, alg, group.ranks, cell.nbytes, cell.dtype, cell.op)
            if row["point_id"] not in self.writer.statuses:
                row |= {"status": status, "reason": reason}
                self.writer.add_point(row, [])
                self.progress.point(row)

    def _save_provenance(self, event: dict, group: Group) -> None:
        if self.provenance_saved:
            return
        fields = {
            k: event[k]
            for k in (
                "mpi_library",
                "mpi_version",
                "mpi4py_version",
                "numpy_version",
                "thread_level",
                "memory_setting",
            )
        }
        fields["environment"] = environment_record(self.spec, self.load_before)
        self.writer.update_run(fields)
        self.provenance_saved = True


def exit_reason(code: int, done: bool, stderr_tail: str) -> str:
    """Why a job that ended did not finish its cells, in words."""
    if code == 0 and not done:
        why = "job exited with 0 without reporting its points (did the launcher run the ranks?)"
    else:
        why = f"job exited with {code}"
    return f"{why}: {stderr_tail}" if stderr_tail else why


def environment_record(spec: SweepSpec, load_before: tuple[float, ...] = ()) -> dict:
    """Every knob the jobs of this sweep set, per job, MPI-related variables inherited, and
    the machine's 1/5/15-minute load average before the sweep started (other work on the
    cores shows up as millisecond stalls in the samples)."""
    jobs = {
        f"ranks={g.ranks} config={g.config or 'default'}": g.knobs for g in plan_groups(spec, "env")
    }
    inherited = {
        k: v
        for k, v in os.environ.items()
        if k.startswith(("MPIR_", "MPICH_", "MPI4PY_", "HYDRA_", "OMP_", "OPENBLAS_"))
    }
    return {"jobs": jobs, "inherited": inherited, "load_average_before": list(load_before)}


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_sweep(
    spec: SweepSpec,
    path: Path,
    command_line: str = "",
    run_id: str | None = None,
    *,
    retry_failed: bool = True,
    progress_out: Callable[[str], None] = _stderr,
) -> SweepOutcome:
    """Run (or, given an existing run_id, resume) a sweep, storing points as they finish.

    Resuming measures again every point not stored ok or skipped (failed and timed-out ones
    too, unless ``retry_failed`` is False). RunBusy when another live sweep holds the run.
    """
    with signals_as_exceptions():
        run_writer.recover_abandoned(path, progress_out)
        run_id = run_id or new_run_id()
        with RunLock(path, run_id) as lock:
            if lock.previous:
                progress_out(f"taking run {run_id} over from {lock.previous}, which is gone")
            return _sweep_locked(spec, path, command_line, run_id, retry_failed, progress_out)


def _sweep_locked(
    spec: SweepSpec,
    path: Path,
    command_line: str,
    run_id: str,
    retry_failed: bool,
    say: Callable[[str], None],
) -> SweepOutcome:
    """run_sweep's body, with the run's lock held."""
    statuses = _start_run(spec, path, command_line, run_id)
    kept = {pid for pid, st in statuses.items() if retry_failed is False or st in KEPT}
    writer = RunWriter(path, run_id, say)
    for row in skipped_points(spec, run_id, kept):
        writer.add_point(row, [])
    groups = plan_groups(spec, run_id, kept)
    total = sum(len(g.points(run_id)) for g in groups)
    progress = Progress(total, out=say)
    runner = GroupRunner(spec, run_id, writer, progress, load_before=os.getloadavg())
    interrupted, error = "", ""
    try:
        _prepare(path, run_id, spec, say)
        progress.started = time.monotonic()  # the ETA counts from the first point
        for group in groups:
            runner.run(group)
    except Interrupted as exc:
        interrupted = f"received {exc}"
    except Exception as exc:  # the run must be marked whatever went wrong
        error = f"{type(exc).__name__}: {exc}"
    planned = all_point_ids(spec, run_id)
    status, reason = final_status(
        planned, statuses | writer.statuses, interrupted, error, runner.failures
    )
    stored = _finish(writer, status, reason, say)
    if stored and status != "interrupted":
        analysis.after_sweep(path, run_id, say)
    to_measure = {pid for group in groups for pid in group.points(run_id)}
    measured = sum(pid in to_measure for pid in writer.statuses)
    return SweepOutcome(run_id, status, reason, measured, total, stored)


KEPT = ("ok", "skipped")


def _start_run(spec: SweepSpec, path: Path, command_line: str, run_id: str) -> dict[str, str]:
    """Create the run, or mark a resumed one running; the stored points' statuses."""
    if store.get_run(path, run_id) is None:
        store.create_run(path, run_row(spec, run_id, command_line))
        return {}
    store.update_run(path, run_id, {"status": "running", "status_reason": ""})
    frame = store.query(path, "SELECT point_id, status FROM points WHERE run_id = ?", [run_id])
    return dict(zip(frame.point_id, frame.status, strict=True))


def _prepare(path: Path, run_id: str, spec: SweepSpec, say: Callable[[str], None]) -> None:
    """Give the run a calibration; a busy or failing store only costs the predictions."""
    try:
        analysis.prepare_run(path, run_id, spec, say)
    except store.StoreError as exc:
        say(f"no calibration for this run ({exc}); predictions use the fit to its own timings")


def final_status(
    planned: set[str],
    statuses: dict[str, str],
    interrupted: str,
    error: str,
    failures: list[str],
) -> tuple[str, str]:
    """The run's true status: complete only when every planned point is stored ok or skipped."""
    missing = sorted(pid for pid in planned if statuses.get(pid) not in KEPT)
    if not missing:
        return "complete", ""
    if interrupted:
        return "interrupted", interrupted
    if error:
        return "failed", f"unexpected error: {error}"[:2000]
    if failures:
        return "failed", "; ".join(failures)[:2000]
    bad = sum(statuses.get(pid) in ("failed", "timeout") for pid in missing)
    return "failed", (
        f"{len(missing)} of {len(planned)} points are not stored ok or skipped "
        f"({bad} failed or timed out, kept from before; {len(missing) - bad} never measured)"
    )


def _finish(writer: RunWriter, status: str, reason: str, say: Callable[[str], None]) -> bool:
    """Store the run's final status with every queued point; True once all is in the store.

    Waits for a busy store. A stop signal during the wait is reported and the wait goes on;
    a second one leaves at once, with the rest safe in the journal for the next sweep.
    """
    writer.update_run({"status": status, "status_reason": reason, "finished_at": datetime.now(UTC)})
    while True:
        try:
            writer.flush_until_stored()
            return True
        except ForceQuit:
            say(
                f"left with {writer.waiting} points and the run's status unstored, safe in "
                f"{writer.journal.path}: the next `collsweep sweep` on this store stores them"
            )
            return False
        except Interrupted:
            say("still waiting for the store to take the last points; signal again to leave now")


def resume_spec(path: Path, run_id: str) -> SweepSpec:
    """The spec a stored run was started with."""
    run = store.get_run(path, run_id)
    if run is None:
        raise store.StoreError(f"no run {run_id!r} in {path}")
    return parse_spec(run["spec_toml"])
