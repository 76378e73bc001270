"""`collsweep sweep`: one run from start to its true final status.

No MPI here. The run is created (or resumed) under its lock, its groups are measured by
runners.jobs.sweep_jobs, every write goes through the run's journal (runners.jobs.run_writer),
and the run ends `complete` only when every planned point is stored ok or skipped; otherwise
`failed` or `interrupted` with the reason, whatever ended it: a stop signal (SIGINT, SIGTERM,
SIGHUP, SIGQUIT; a second one leaves at once), crashed or hung ranks, or an unexpected error.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runners import __version__, store
from runners.domain.adaptive.cost import launch_cost_s
from runners.domain.errors import Stopped
from runners.domain.imports.records import imported_tool
from runners.domain.libraries.catalog import has_forced
from runners.domain.libraries.switching import LAUNCH, RUNTIME
from runners.domain.status import PointStatus, RunStatus
from runners.domain.sweep.plan import Group, Plan, plan_sweep
from runners.domain.sweep.simulated_run import simulated_words
from runners.domain.sweep.spec import SpecError, SweepSpec, parse_spec
from runners.domain.units import counted, format_seconds, wrapped
from runners.domain.verdict.nodes import spinning_note
from runners.domain.verdict.run_assumptions import caution_notes
from runners.host.machine import cpu_model, hostname, physical_cores
from runners.jobs import calibrate, launch, run_writer
from runners.jobs.point_history import PointHistory
from runners.jobs.progress import PlannedLaunch, Progress
from runners.jobs.run_writer import PARTIAL, RunWriter, StoreUnwritable, sweep_status
from runners.jobs.sweep_jobs import GroupRunner, switching_mode
from runners.process.faults import hold_at
from runners.store.journal import JournalUnwritable, RunLock, journal_dir

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class Interrupted(Stopped):
    """The sweep received SIGINT, SIGTERM, SIGHUP or SIGQUIT."""


class ForceQuit(Interrupted):
    """A second stop signal: leave at once, whatever is still unstored stays in the journal."""


@dataclass
class SweepOutcome:
    """How a sweep ended."""

    run_id: str
    status: RunStatus
    reason: str
    measured: int  # points measured in every launch they still needed
    total: int
    stored: bool = True  # False: left on a second signal with writes still in the journal
    partial: int = 0  # points measured in some, not all, of their launches


def new_run_id() -> str:
    """A short unique id that sorts by start time."""
    return datetime.now(UTC).strftime("r%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def fresh_run_id(path: Path) -> str:
    """A new run id the store at ``path`` does not hold (storing a run of a taken id would add
    points to that run)."""
    while True:
        run_id = new_run_id()
        if not path.exists() or store.get_run(path, run_id) is None:
            return run_id


def code_version() -> str:
    """The git commit of this checkout (+dirty), or the package version outside git."""
    try:
        commit = _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return f"collsweep {__version__}"
    suffix = "+dirty" if dirty else ""
    return f"collsweep {__version__} git {commit}{suffix}"


def _git(*args: str) -> str:
    """A git command's output in this checkout; CalledProcessError when git fails."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout.strip()


def run_row(spec: SweepSpec, run_id: str, command_line: str) -> dict:
    """The runs row as far as the parent knows it (the ranks add the library's facts)."""
    return {
        "run_id": run_id,
        "status": RunStatus.RUNNING,
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


def _stderr(line: str) -> None:
    print(wrapped(line), file=sys.stderr, flush=True)


def run_sweep(
    spec: SweepSpec,
    path: Path,
    command_line: str = "",
    run_id: str | None = None,
    *,
    retry_failed: bool = True,
    progress_out: Callable[[str], None] = _stderr,
    verbose: bool = False,
    labels: Mapping[str, Any] | None = None,
) -> SweepOutcome:
    """Run (or, given an existing run_id, resume) a sweep, storing points as they finish.

    Resuming measures again every point not stored ok or skipped (failed and timed-out ones
    too, unless ``retry_failed`` is False). RunBusy when another live sweep holds the run.
    Progress is a line per launch (rewritten in place on a terminal); ``verbose``: a line per
    point instead. ``labels``: runs columns a new run starts with (its name and tags).
    """
    with signals_as_exceptions():
        _check_writable(path)
        run_writer.recover_abandoned(path, progress_out)
        launch.remove_orphan_job_files()
        run_id = run_id or new_run_id()
        with RunLock(path, run_id) as lock:
            if lock.previous:
                progress_out(f"taking run {run_id} over from {lock.previous}, which is gone")
            live = progress_out is _stderr and sys.stderr.isatty()
            progress = Progress(verbose=verbose, live=live, out=progress_out)
            new_run = {**run_row(spec, run_id, command_line), **(labels or {})}
            try:
                return _sweep_locked(spec, path, new_run, retry_failed, progress)
            except Interrupted as exc:  # stopped between the run's row and the launches
                return _stopped_before_launches(path, run_id, str(exc))


def _stopped_before_launches(path: Path, run_id: str, signal_name: str) -> SweepOutcome:
    """A stop that came after the run's row was written but before its first launch: the
    row says interrupted (never `running`), unless the run was stored finished meanwhile."""
    run = store.get_run(path, run_id)
    if run is None:
        raise Interrupted(signal_name)  # nothing was written: nothing to mark
    if run["status"] != RunStatus.RUNNING:
        return SweepOutcome(run_id, RunStatus(run["status"]), run["status_reason"] or "", 0, 0)
    reason = f"received {signal_name} before any rank started"
    store.update_run(path, run_id, {"status": RunStatus.INTERRUPTED, "status_reason": reason})
    return SweepOutcome(run_id, RunStatus.INTERRUPTED, reason, 0, 0)


def _sweep_locked(
    spec: SweepSpec,
    path: Path,
    new_run: dict[str, Any],
    retry_failed: bool,
    progress: Progress,
) -> SweepOutcome:
    """run_sweep's body, with the run's lock held; `new_run`: the runs row of a new run."""
    say = progress.out
    run_id = new_run["run_id"]
    statuses = _start_run(spec, path, new_run)
    hold_at("sweep-created")
    kept = {pid for pid, st in statuses.items() if not retry_failed or st in KEPT}
    writer = RunWriter(path, run_id, say)
    history = PointHistory.load(path, run_id) if statuses else PointHistory()
    switching = switching_mode(spec)
    if has_forced(spec.algorithms) and switching[0] == LAUNCH and spec.library_switching == RUNTIME:
        say(f"forced library algorithms get launches of their own: {switching[1]}")
    cores = physical_cores()
    plan = plan_sweep(spec, run_id, kept, history.done(), switching[0], cores=cores)
    launches = plan.launches
    if statuses and not launches and _already_complete(plan, statuses):
        store.update_run(path, run_id, {"status": RunStatus.COMPLETE})  # finished_at kept
        return SweepOutcome(run_id, RunStatus.COMPLETE, "", 0, 0, True, 0)
    to_measure = plan.to_measure(run_id)
    progress.launches = [
        PlannedLaunch(group_name(p.group), len(p.group.points(run_id)), p.group.ranks)
        for p in launches
    ]
    say(expected_time(spec, len(to_measure), len(launches)))
    load = os.getloadavg()
    spinning = spinning_note(spec.algorithms, spec.ranks, cores)
    for caution in [*caution_notes(spec.ranks, load, cores), *filter(None, [spinning])]:
        say(f"caution: {caution}")  # the verdict flags them again
    runner = GroupRunner(
        spec, run_id, writer, progress, cores, history, load_before=load, switching=switching
    )
    interrupted, error = "", ""
    try:
        for row in plan.skipped:
            writer.add_point(row.columns(), [])
        _prepare(path, run_id, spec, say)
        for index, planned in enumerate(launches):
            progress.start_launch(index)
            runner.run(planned)
            progress.end_launch()
    except Interrupted as exc:
        interrupted = f"received {exc}"
    except (JournalUnwritable, StoreUnwritable) as exc:  # a full disk: the other keeps them
        runner.failures.append(str(exc))
    except Exception as exc:  # the run must be marked whatever went wrong
        error = f"{type(exc).__name__}: {exc}"
    status, reason = final_status(
        plan.point_ids, statuses | writer.statuses, interrupted, error, runner.failures
    )
    stored = _finish(writer, status, reason, say)
    measured = sum(writer.statuses.get(pid, PARTIAL) != PARTIAL for pid in to_measure)
    partial = sum(writer.statuses.get(pid) == PARTIAL for pid in to_measure)
    return SweepOutcome(run_id, status, reason, measured, len(to_measure), stored, partial)


KEPT = (PointStatus.OK, PointStatus.SKIPPED)


def expected_time(spec: SweepSpec, points: int, launches: int) -> str:
    """About how long the sweep will take, said before it starts: each point's timing budget
    (shared by its launches and passes; a point that reaches its precision target or its
    iteration cap stops sooner) plus each launch's start and calibration."""
    per_launch = launch_cost_s(spec.launch_calibration)
    seconds = points * spec.timing.budget_s + launches * per_launch
    return (
        f"measuring {counted(points, 'point')} in {counted(launches, 'launch', 'launches')}: "
        f"about {format_seconds(seconds)} expected ({points} x "
        f"{format_seconds(spec.timing.budget_s)} budget + {launches} launch starts)"
    )


def group_name(group: Group) -> str:
    """A launch's group as the progress line names it: p, its forced configuration, and
    whether it is oversubscribed."""
    config = f" {group.config}" if group.config else ""
    return f"p={group.ranks}{config}" + (" (oversubscribed)" if group.oversubscribed else "")


def _already_complete(plan: Plan, statuses: dict[str, str]) -> bool:
    """Whether a resumed run's stored points already make it complete (nothing to measure)."""
    status, _ = final_status(plan.point_ids, statuses, "", "", [])
    return status == RunStatus.COMPLETE


def _check_writable(path: Path) -> None:
    """Create or migrate the store and its journal folder; StoreError if either cannot be
    written (read-only file system, damaged or foreign file), before any rank starts."""
    store.ensure_current(path)
    try:
        journal_dir(path).mkdir(exist_ok=True)
    except OSError as exc:
        raise store.StoreError(f"cannot write beside the store {path}: {exc.strerror}") from None


def _start_run(spec: SweepSpec, path: Path, new_run: dict[str, Any]) -> dict[str, str]:
    """Create the run (its row `new_run`), or mark a resumed one running; the stored points'
    statuses ("partial" for an ok point with fewer launches than the spec asks for)."""
    run_id = new_run["run_id"]
    if store.get_run(path, run_id) is None:
        store.create_run(path, new_run)
        return {}
    store.update_run(path, run_id, {"status": RunStatus.RUNNING, "status_reason": ""})
    stored = store.point_states(path, run_id).items()
    return {pid: sweep_status(s.status, s.launches, spec.timing.launches) for pid, s in stored}


def _prepare(path: Path, run_id: str, spec: SweepSpec, say: Callable[[str], None]) -> None:
    """Give the run a calibration; a busy or failing store only costs the predictions."""
    try:
        calibrate.prepare_run(path, run_id, spec, say)
    except store.StoreError as exc:
        say(f"no calibration for this run ({exc}); predictions use the fit to its own timings")


def final_status(
    planned: AbstractSet[str],
    statuses: Mapping[str, str],
    interrupted: str,
    error: str,
    failures: list[str],
) -> tuple[RunStatus, str]:
    """The run's true status: complete only when every planned point is stored ok or skipped."""
    missing = sorted(pid for pid in planned if statuses.get(pid) not in KEPT)
    if not missing:
        return RunStatus.COMPLETE, ""
    if interrupted:
        return RunStatus.INTERRUPTED, interrupted
    if error:
        return RunStatus.FAILED, f"unexpected error: {error}"[:2000]
    if failures:
        return RunStatus.FAILED, "; ".join(failures)[:2000]
    bad = sum(statuses.get(pid) in (PointStatus.FAILED, PointStatus.TIMEOUT) for pid in missing)
    partial = sum(statuses.get(pid) == PARTIAL for pid in missing)
    return RunStatus.FAILED, (
        f"{len(missing)} of {len(planned)} points are not stored ok or skipped "
        f"({bad} failed or timed out, {partial} measured in fewer launches than planned, "
        f"{len(missing) - bad - partial} never measured)"
    )


def _finish(writer: RunWriter, status: RunStatus, reason: str, say: Callable[[str], None]) -> bool:
    """Store the run's final status with every queued point; True once all is in the store.

    Waits for a busy store. A stop signal during the wait is reported and the wait goes on;
    a second one leaves at once, with the rest safe in the journal for the next sweep.
    """
    with contextlib.suppress(JournalUnwritable):  # queued for the store all the same
        writer.update_run(
            {"status": status, "status_reason": reason, "finished_at": datetime.now(UTC)}
        )
    while True:
        try:
            writer.flush_until_stored()
            return True
        except StoreUnwritable as exc:
            kept = (
                f"the journal could not be written either ({writer.journal_error}): its last "
                f"{writer.waiting} points are lost and `collsweep sweep --resume "
                f"{writer.run_id}` measures them again"
                if writer.journal_error
                else f"the run's status and its last {writer.waiting} points are kept in "
                f"{writer.journal.path}; `collsweep sweep --resume {writer.run_id}` stores them"
            )
            say(f"{exc}: {kept}, once the store can be written")
            return False
        except ForceQuit:
            say(
                f"left with {writer.waiting} points and the run's status unstored, safe in "
                f"{writer.journal.path}: the next `collsweep sweep` on this store stores them"
            )
            return False
        except Interrupted:
            say("still waiting for the store to take the last points; signal again to leave now")


def resume_spec(path: Path, run_id: str) -> SweepSpec:
    """The spec a stored run was started with (a run from before launches: one launch)."""
    run = store.get_run(path, run_id)
    if run is None:
        raise store.StoreError(f"no run {run_id!r} in {path}")
    text = run.get("spec_toml") or ""
    tool = imported_tool(text)
    if tool:
        raise SpecError(f"run {run_id} was imported from {tool}, not swept: nothing to resume")
    simulated = simulated_words(text)
    if simulated:
        raise SpecError(f"run {run_id} was {simulated}: nothing to resume (simulate it again)")
    spec = parse_spec(text)  # a damaged stored spec is a SpecError here
    return spec if "launches" in tomllib.loads(text) else spec.with_values(launches=1)
