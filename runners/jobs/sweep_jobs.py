"""One sweep job at a time: launch the ranks of a group, follow their events, store the points.

No MPI here. A job that crashes or hangs (the watchdog) costs only the cell in flight: its points
are stored as failed or timed out with the reason, and the job is relaunched for the cells left.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from runners.domain.plan import Group, plan_groups
from runners.domain.records import PointKey
from runners.domain.spec import SweepSpec
from runners.jobs import launch
from runners.jobs.run_writer import RunWriter

STARTUP_GRACE_S = 60.0


def _timestamp(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None)


def event_rows(run_id: str, event: dict) -> tuple[dict, list[dict]]:
    """Turn a worker's `point` event into a points row and its samples rows."""
    key = PointKey(
        run_id, event["algorithm"], event["ranks"], event["bytes"], event["dtype"], event["op"]
    )
    if event.get("point_id") != key.point_id():
        raise ValueError(f"the ranks reported point {event.get('point_id')!r} for {key}")
    base = key.row()
    identity = (
        "type",
        "samples",
        "passes",
        "point_id",
        "algorithm",
        "ranks",
        "bytes",
        "dtype",
        "op",
    )
    extra = {k: v for k, v in event.items() if k not in identity}
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
            "timing": spec.timing().as_dict(),
        }
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(payload, handle)
        job = launch.Job(
            group.ranks,
            "runners.ranks.sweep_worker",
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
            key = PointKey(self.run_id, alg, group.ranks, cell.nbytes, cell.dtype, cell.op)
            row = key.row()
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
