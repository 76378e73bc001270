"""Beside the store, per run: a durable journal of the sweep's writes and a lock of the live sweep.

Both live in ``<store>.journal/``. ``<run>.jsonl`` holds every write the sweep made (finished
points with their samples, changes to the run's row), appended and fsynced before the store is
tried, so a store that someone else holds delays the writes but never loses them; it is replayed
into the store when the store is free again, and removed once everything is stored.
``<run>.lock`` is held (flock) by the one sweep measuring the run and names its process and
host; the kernel releases it when that process dies, however it dies, so a lock file nobody
holds marks a run whose sweep is gone. The sweep also binds an abstract Unix socket named for
the store and run, which no one can remove as a file: a second sweep cannot start beside a live
one even after its lock file was deleted. No MPI here.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from runners.domain.errors import BadInput
from runners.domain.names import path_for, run_id_problem
from runners.host.machine import hostname
from runners.store.schema import POINT_STATUSES, RUN_STATUSES

UNREADABLE = "unreadable"  # the kind given to a journal line that is not JSON


class RunBusy(BadInput):
    """Another live process is measuring the run (exit 2: nothing was started)."""


class JournalUnwritable(BadInput):
    """The journal or lock beside the store cannot be written (a full disk, a read-only
    folder): said in one line."""


def journal_dir(store_path: Path) -> Path:
    """The folder beside the store that holds journals and run locks."""
    return store_path.with_name(store_path.name + ".journal")


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"cannot journal {type(value).__name__}")


class Journal:
    """The append-only journal of one run's writes."""

    def __init__(self, store_path: Path, run_id: str) -> None:
        self.run_id = run_id
        self.path = path_for(journal_dir(store_path), run_id, ".jsonl")

    def append(self, record: dict[str, Any]) -> None:
        """Add one record and make it durable (fsync) before returning; JournalUnwritable
        when the disk refuses it."""
        line = json.dumps(record, default=_json_default) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise JournalUnwritable(
                f"cannot write the journal {self.path}: {exc.strerror}"
            ) from None

    def records(self) -> list[Any]:
        """Every complete record, oldest first: a last line cut short by a crash is left out,
        an earlier line that is not JSON comes back as an UNREADABLE record."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        records: list[Any] = []
        lines = text.split("\n")
        for number, line in enumerate(lines, 1):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                if number < len(lines) and line.strip():  # not the tail a crash cut short
                    records.append({"kind": UNREADABLE, "line": line[:1000]})
        return records

    def set_aside(self, records: list[dict[str, Any]], problems: list[str]) -> Path:
        """Keep records that cannot be stored in ``<run>.rejected`` beside the journal, each
        with the reason, for a person to read (no sweep replays them); that file's path."""
        rejected = self.path.with_suffix(".rejected")
        with open(rejected, "a", encoding="utf-8") as handle:
            for record, problem in zip(records, problems, strict=True):
                entry = {"problem": problem, "record": record}
                handle.write(json.dumps(entry, default=_json_default) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return rejected

    def exists(self) -> bool:
        """True while the journal holds writes not yet known to be stored."""
        return self.path.exists()

    def remove(self) -> None:
        """Delete the journal: everything in it is in the store."""
        self.path.unlink(missing_ok=True)


def point_record(point: dict[str, Any], samples: list[dict[str, Any]]) -> dict[str, Any]:
    """A journal record of one finished point and its samples."""
    return {"kind": "point", "point": point, "samples": samples}


def run_record(run_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    """A journal record of columns set on the run's row."""
    return {"kind": "run", "run_id": run_id, "fields": fields}


def probe_record(probe: dict[str, Any]) -> dict[str, Any]:
    """A journal record of one machine-state probe (runners.ranks.probe)."""
    return {"kind": "probe", "probe": probe}


def calibration_record(calibration: dict[str, Any]) -> dict[str, Any]:
    """A journal record of one launch's calibration (a calibrations row)."""
    return {"kind": "calibration", "calibration": calibration}


def record_problem(record: Any, run_id: str) -> str | None:
    """Why a journal record of run ``run_id`` cannot be stored (None when it can): a record a
    sweep never writes, another run's, or a status the store does not know."""
    if not isinstance(record, dict):
        return "not a record"
    if record.get("kind") == UNREADABLE:
        return "not JSON"
    kind, body = record.get("kind"), record.get(str(record.get("kind")))
    if kind == "point":
        return _point_problem(body, record.get("samples"), run_id)
    if kind == "run":
        fields = record.get("fields")
        if record.get("run_id") != run_id or not isinstance(fields, dict):
            return "a run record of another run, or without fields"
        if "status" in fields and fields["status"] not in RUN_STATUSES:
            return f"run status {fields['status']!r} is not one of {', '.join(RUN_STATUSES)}"
        return None
    if kind == "probe":
        ok = isinstance(body, dict) and all(k in body for k in PROBE_KEY)
        return (
            None
            if ok and isinstance(body, dict) and body["run_id"] == run_id
            else "a probe without its keys"
        )
    if kind == "calibration":
        ok = isinstance(body, dict) and isinstance(body.get("calibration_id"), str)
        return None if ok else "a calibration without its id"
    return f"unknown record kind {kind!r}"


def _point_problem(point: Any, samples: Any, run_id: str) -> str | None:
    if not isinstance(point, dict) or not isinstance(point.get("point_id"), str):
        return "a point without its id"
    if point.get("run_id") != run_id:
        return f"point {point['point_id']} belongs to another run"
    if point.get("status") not in POINT_STATUSES:
        return f"point status {point.get('status')!r} is not one of {', '.join(POINT_STATUSES)}"
    if not isinstance(samples, list) or not all(
        isinstance(s, dict) and s.get("point_id") == point["point_id"] for s in samples
    ):
        return f"samples of point {point['point_id']} that are not its own"
    return None


class Batch(NamedTuple):
    """Records folded into one store write (store.write_batch's arguments)."""

    points: list[dict]
    samples: list[dict]
    runs: dict[str, dict]
    probes: list[dict]
    calibrations: list[dict]


def batch(records: list[dict[str, Any]]) -> Batch:
    """Records folded into one store write; later wins."""
    points: dict[str, dict] = {}
    samples: dict[str, list[dict]] = {}
    runs: dict[str, dict] = {}
    probes: dict[tuple, dict] = {}
    calibrations: dict[str, dict] = {}
    for record in records:
        if record.get("kind") == "point":
            point_id = record["point"]["point_id"]
            points[point_id] = record["point"]
            samples[point_id] = record["samples"]
        elif record.get("kind") == "run":
            runs.setdefault(record["run_id"], {}).update(record["fields"])
        elif record.get("kind") == "probe":
            probe = record["probe"]
            probes[tuple(probe[k] for k in PROBE_KEY)] = probe
        elif record.get("kind") == "calibration":
            calibrations[record["calibration"]["calibration_id"]] = record["calibration"]
    flat = [s for ss in samples.values() for s in ss]
    return Batch(
        list(points.values()), flat, runs, list(probes.values()), list(calibrations.values())
    )


PROBE_KEY = ("run_id", "job", "launch", "moment")


class RunLock:
    """The lock a sweep holds on its run for as long as it measures it."""

    def __init__(self, store_path: Path, run_id: str) -> None:
        self.path = path_for(journal_dir(store_path), run_id, ".lock")
        self.run_id = run_id
        self._fd: int | None = None
        key = f"{Path(store_path).resolve()}\0{run_id}".encode()
        self._claim_name = b"\0collsweep-run-" + hashlib.sha256(key).hexdigest()[:40].encode()
        self._claim: socket.socket | None = None
        self.previous = ""  # who held a stale lock this one took over ('' if none)

    def acquire(self) -> None:
        """Take the lock, or raise RunBusy naming the live process that holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            if not _flock_exclusive(fd):
                holder = _read_holder(fd)
                os.close(fd)
                raise RunBusy(
                    f"run {self.run_id} is being measured right now by {holder or 'a sweep'}; "
                    "wait for it to end (or stop it) before resuming"
                )
            if _same_file(fd, self.path):
                break
            os.close(fd)  # the file was removed by its last holder meanwhile: take the new one
        try:
            self._claim = _claim(self._claim_name)
        except OSError:
            os.close(fd)
            raise RunBusy(
                f"run {self.run_id} is being measured right now by another sweep (its lock "
                f"file {self.path} was removed while it ran); wait for it to end"
            ) from None
        self.previous = _read_holder(fd)
        self._fd = fd
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, _holder_text().encode(), 0)
        except OSError as exc:
            self.release()
            raise JournalUnwritable(
                f"cannot write the run's lock {self.path}: {exc.strerror}"
            ) from None

    def release(self) -> None:
        """Give the lock up and remove its file."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None
        if self._claim is not None:
            self._claim.close()
            self._claim = None
        with contextlib.suppress(OSError):
            self.path.parent.rmdir()  # only when empty: no other run's journal or lock

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _claim(name: bytes) -> socket.socket:
    """Bind an abstract Unix socket named for the run: a second claim fails while this
    process lives, nobody can delete it as a file can be, and the kernel frees it when the
    process dies (the lock file alone let a second sweep in once someone removed it)."""
    claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        claim.bind(name)
    except OSError:
        claim.close()
        raise
    return claim


def _flock_exclusive(fd: int, tries: int = 10) -> bool:
    """Take an exclusive flock; a few short retries ride out a reader's brief shared probe."""
    for attempt in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt < tries - 1:
                time.sleep(0.02)
    return False


def _holder_text() -> str:
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"pid {os.getpid()} on {hostname()} since {started}"


def _read_holder(fd: int) -> str:
    with contextlib.suppress(OSError):
        return os.pread(fd, 200, 0).decode(errors="replace").strip()
    return ""


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def is_live(store_path: Path, run_id: str) -> bool:
    """True while some process holds the run's lock (a sweep is measuring it now); never for
    an id no sweep could have written (it names no lock file)."""
    if run_id_problem(run_id):
        return False
    path = path_for(journal_dir(store_path), run_id, ".lock")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def abandoned_runs(store_path: Path) -> list[str]:
    """Runs with a journal or lock file that no live process holds: their sweep died."""
    folder = journal_dir(store_path)
    if not folder.is_dir():
        return []
    runs = {p.stem for p in folder.iterdir() if p.suffix in (".jsonl", ".lock")}
    return sorted(r for r in runs if not is_live(store_path, r))
