"""A sweep's writes to the store: journalled first, applied in short batches when the store is free.

A reader or another writer may hold the store for a while. The sweep does not wait for it: every
finished point goes into the run's journal (runners.store.journal, fsynced) and stays queued until a
short attempt to write finds the store free; at the end the sweep waits for the store, saying who
holds it. A sweep that dies leaves its journal, which the next sweep on the store replays
(`recover_abandoned`). No MPI here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from runners import store
from runners.domain.status import PointStatus, RunStatus
from runners.store.journal import (
    Journal,
    JournalUnwritable,
    RunBusy,
    RunLock,
    abandoned_runs,
    batch,
    calibration_record,
    point_record,
    probe_record,
    record_problem,
    run_record,
)
from runners.store.records import RunRecord
from runners.store.storefile import first_line

PARTIAL = "partial"  # a point stored ok, measured in fewer launches than its spec asks for


def sweep_status(status: str, launches: int, wanted_launches: int) -> str:
    """A stored point's status as the sweep counts it: PARTIAL while launches are missing."""
    return PARTIAL if status == PointStatus.OK and launches < wanted_launches else status


FLUSH_SECONDS = 1.0  # how often queued points are written while the sweep runs
PROBE_TIMEOUT_S = 0.3  # how long one write waits for the store's lock during the sweep
NOTICE_SECONDS = 10.0  # how often a busy store is reported

Say = Callable[[str], None]


class StoreUnwritable(Exception):
    """The store refused a write for a reason waiting cannot mend (a full disk, a read-only
    file system): the sweep ends failed, its points kept by the journal."""


class RunWriter:
    """Queues one run's writes, journals each at once, and writes them to the store in batches."""

    def __init__(self, path: Path, run_id: str, say: Say) -> None:
        self.path = path
        self.run_id = run_id
        self.say = say
        self.journal = Journal(path, run_id)
        self.pending: list[dict[str, Any]] = []
        # point_id -> status of the points written by this sweep ("partial": ok, but fewer
        # launches so far than the spec asks for)
        self.statuses: dict[str, str] = {}
        self.last_flush = time.monotonic()
        self.last_notice = 0.0
        self.journal_error = ""  # why the journal could not be written ("" while it can)

    def add_point(
        self, point: dict[str, Any], samples: list[dict[str, Any]], wanted_launches: int = 0
    ) -> None:
        """Journal one point (measured in `point["launches"]` of the `wanted_launches` its
        spec asks for); write the queue if the last write was a while ago."""
        self._queue(point_record(point, samples))
        launches = point.get("launches") or 0
        self.statuses[point["point_id"]] = sweep_status(point["status"], launches, wanted_launches)
        self.flush_if_due()

    def flush_if_due(self) -> None:
        """Write the queue if the last write was FLUSH_SECONDS ago or more: called with each
        point and while a long point runs, so finished points reach the store (and whoever
        watches it) within about that time."""
        if self.pending and time.monotonic() - self.last_flush >= FLUSH_SECONDS:
            self.flush()

    def add_probe(self, probe: dict[str, Any]) -> None:
        """Journal one machine-state probe (written with the next batch)."""
        self._queue(probe_record({"run_id": self.run_id, **probe}))

    def add_calibration(self, calibration: dict[str, Any]) -> None:
        """Journal one launch's calibration (written with the next batch)."""
        self._queue(calibration_record(calibration))

    def update_run(self, fields: dict[str, Any]) -> None:
        """Journal columns to set on the run's row (written with the next batch)."""
        self._queue(run_record(self.run_id, fields))

    def _queue(self, record: dict[str, Any]) -> None:
        """Queue a record, journalled first; once the journal cannot be written (a full
        disk), the rest is queued for the store alone and the first failure raised."""
        self.pending.append(record)
        if self.journal_error:
            return
        try:
            self.journal.append(record)
        except JournalUnwritable as exc:
            self.journal_error = str(exc)
            raise

    @property
    def waiting(self) -> int:
        """Points journalled but not yet in the store."""
        return sum(record["kind"] == "point" for record in self.pending)

    def flush(self, timeout: float = PROBE_TIMEOUT_S) -> bool:
        """Write everything queued in one transaction; False if the store stayed busy."""
        self.last_flush = time.monotonic()
        if not self.pending:
            return True
        queued = batch(self.pending)
        try:
            store.write_batch(
                self.path,
                queued.points,
                queued.samples,
                queued.runs,
                timeout=timeout,
                probes=queued.probes,
                calibrations=queued.calibrations,
            )
        except store.StoreBusy as exc:
            self._notice(exc.holder)
            return False
        except store.StoreError as exc:
            raise StoreUnwritable(str(exc)) from None
        except (duckdb.Error, OSError) as exc:
            said = f"cannot write the results store {self.path}: {first_line(str(exc))}"
            raise StoreUnwritable(said) from None
        self.pending = []
        self.journal.remove()
        return True

    def flush_until_stored(self) -> None:
        """Write everything queued, waiting for the store as long as it takes (a signal ends
        the wait; the journal keeps what is not stored)."""
        if self.flush(timeout=1.0):
            return
        self.say(
            f"waiting for the store to take the last {self.waiting} points; a stop signal "
            "now leaves them safe in the journal"
        )
        while not self.flush(timeout=1.0):
            pass

    def _notice(self, holder: str) -> None:
        """Say, now and then, that the store is busy, who holds it and where the points wait."""
        now = time.monotonic()
        if now - self.last_notice < NOTICE_SECONDS:
            return
        self.last_notice = now
        self.say(
            f"the store is busy ({holder} holds it): {self.waiting} finished points wait, safe, "
            f"in {self.journal.path}; retrying"
        )


def replay(path: Path, run_id: str, previous: str, say: Say) -> None:
    """Store what an ended sweep journalled for ``run_id`` and mark the run if still running;
    records that cannot be stored are set aside beside the journal, never blocking the store."""
    journal = Journal(path, run_id)
    records = _storable(journal, journal.records(), say)
    run = store.get_run(path, run_id)
    updates = _final_fields(run, batch(records).runs.get(run_id, {}), previous)
    try:
        _store_records(path, run, records, updates)
    except (ValueError, duckdb.Error) as exc:  # a record the checks let through; not StoreBusy
        _storable(journal, records, say, problem=f"the store refused it: {exc}")
        _store_records(path, run, [], updates)
        records = []
    journal.remove()
    if records or updates:
        stored = len(batch(records).points) if run is not None else 0
        say(f"recovered run {run_id} from its journal: {stored} points stored")


def _storable(journal: Journal, records: list, say: Say, problem: str = "") -> list[dict]:
    """The records that can be stored; the others (all of them, given a ``problem``) are set
    aside and said."""
    run_id = journal.run_id
    problems = [problem or record_problem(r, run_id) for r in records]
    bad = [(r, p) for r, p in zip(records, problems, strict=True) if p]
    if bad:
        kept = journal.set_aside([r for r, _ in bad], [p for _, p in bad])
        say(
            f"set aside {len(bad)} damaged journal record(s) of run {run_id} in {kept} "
            f"(first: {bad[0][1]}); the rest is stored"
        )
    return [r for r, p in zip(records, problems, strict=True) if not p]


def _final_fields(run: RunRecord | None, fields: dict, previous: str) -> dict[str, dict]:
    """The run's journalled columns, marked interrupted if its sweep left it running."""
    if run is None:
        return {}
    if fields.get("status", run["status"]) == RunStatus.RUNNING:
        who = f" ({previous})" if previous else ""
        fields = fields | {
            "status": RunStatus.INTERRUPTED,
            "status_reason": f"its sweep{who} ended without finishing; resume it with "
            f"`collsweep sweep --resume {run['run_id']}`",
        }
    return {run["run_id"]: fields} if fields else {}


def _store_records(path: Path, run: RunRecord | None, records: list, updates: dict) -> None:
    """One store write of the records (none when the run never reached the store: nothing to
    attach points to) and the run's updates."""
    points, samples, _, probes, calibrations = batch(records if run is not None else [])
    store.write_batch(path, points, samples, updates, probes=probes, calibrations=calibrations)


def recover_abandoned(path: Path, say: Say) -> None:
    """Replay the journal of every run whose sweep died, and mark such runs interrupted."""
    for run_id in abandoned_runs(path):
        lock = RunLock(path, run_id)
        try:
            lock.acquire()
        except RunBusy:
            continue  # another process took it over meanwhile
        try:
            replay(path, run_id, lock.previous, say)
        finally:
            lock.release()
