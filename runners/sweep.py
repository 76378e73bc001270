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

from runners import __version__, analysis, launch, store
from runners.machine import cpu_model, hostname, physical_cores
from runners.plan import Group, plan_groups, point_id, skeleton_point, skipped_points
from runners.spec import SweepSpec, parse_spec

FLUSH_SECONDS = 1.0
STARTUP_GRACE_S = 60.0


class Interrupted(Exception):
    """The sweep received SIGINT or SIGTERM."""


@dataclass
class SweepOutcome:
    """How a sweep ended."""

    run_id: str
    status: str
    reason: str
    measured: int
    total: int


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


class PointWriter:
    """Buffers finished points and writes them in short batched transactions."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.points: list[dict] = []
        self.samples: list[dict] = []
        self.last_flush = time.monotonic()

    def add(self, point: dict, samples: list[dict]) -> None:
        """Queue one point; write the queue if the last write was a while ago."""
        self.points.append(point)
        self.samples += samples
        if time.monotonic() - self.last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write everything queued (one short connection)."""
        if self.points:
            store.add_points(self.path, self.points, self.samples)
        self.points, self.samples = [], []
        self.last_flush = time.monotonic()


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
    """Turn SIGINT and SIGTERM into Interrupted while a sweep runs."""

    def handler(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
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
    path: Path
    writer: PointWriter
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
            group.ranks, "runners.sweep_worker", [handle.name], group.knobs, spec.launcher
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
        why = f"ranks={group.ranks}: job exited with {code}: {running.stderr_tail()}"
        return max(cells_started - 1, 0), why

    def _store_point(self, event: dict) -> None:
        row, samples = event_rows(self.run_id, event)
        self.writer.add(row, samples)
        self.progress.point(row)

    def _give_up_cell(self, group: Group, cell, reason: str) -> None:
        """Store the broken cell's points (those not stored yet) as failed or timed out."""
        self.writer.flush()
        stored = store.point_ids(self.path, self.run_id)
        status = "timeout" if "watchdog" in reason else "failed"
        for alg in cell.algorithms:
            pid = point_id(self.run_id, alg, group.ranks, cell.nbytes, cell.dtype, cell.op)
            if pid not in stored:
                row = skeleton_point(
                    self.run_id, alg, group.ranks, cell.nbytes, cell.dtype, cell.op
                ) | {"status": status, "reason": reason}
                self.writer.add(row, [])
                self.progress.point(row)
        self.writer.flush()

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
        store.update_run(self.path, self.run_id, fields)
        self.provenance_saved = True


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


def run_sweep(
    spec: SweepSpec,
    path: Path,
    command_line: str = "",
    run_id: str | None = None,
    progress_out: Callable[[str], None] | None = None,
) -> SweepOutcome:
    """Run (or, given an existing run_id, resume) a sweep, storing points as they finish."""
    resuming = run_id is not None
    run_id = run_id or new_run_id()
    if resuming:
        store.update_run(path, run_id, {"status": "running", "status_reason": ""})
    else:
        store.create_run(path, run_row(spec, run_id, command_line))
    done = store.point_ids(path, run_id) if resuming else set()
    skipped = skipped_points(spec, run_id, done)
    if skipped:
        store.add_points(path, skipped, [])
    groups = plan_groups(spec, run_id, done)
    total = sum(len(g.points(run_id)) for g in groups)
    progress = Progress(total) if progress_out is None else Progress(total, out=progress_out)
    writer = PointWriter(path)
    runner = GroupRunner(spec, run_id, path, writer, progress, load_before=os.getloadavg())
    status, reason = "complete", ""
    try:
        with signals_as_exceptions():
            analysis.prepare_run(path, run_id, spec, progress.out)
            progress.started = time.monotonic()  # the ETA counts from the first point
            for group in groups:
                runner.run(group)
    except (Interrupted, KeyboardInterrupt) as exc:
        status, reason = "interrupted", f"received {exc or 'SIGINT'}"
    finally:
        writer.flush()
        if status == "complete" and runner.failures:
            status, reason = "failed", "; ".join(runner.failures)[:2000]
        store.finish_run(path, run_id, status, reason)
    analysis.after_sweep(path, run_id, progress.out)
    # Counted from the store: a signal can land between storing a point and reporting it.
    measured = len(store.point_ids(path, run_id)) - len(done) - len(skipped)
    return SweepOutcome(run_id, status, reason, measured, total)


def resume_spec(path: Path, run_id: str) -> SweepSpec:
    """The spec a stored run was started with."""
    run = store.get_run(path, run_id)
    if run is None:
        raise store.StoreError(f"no run {run_id!r} in {path}")
    return parse_spec(run["spec_toml"])
