"""Opening the store's DuckDB file: lock waits that name the holder, damage checks, read limits.

DuckDB lets one process at a time hold a database file open for writing, and while any process
holds it, even read-only, a writer elsewhere cannot open it. Opening therefore retries with
jittered sleeps for a bounded time and, when it gives up, raises StoreBusy saying which process
holds the file. Read connections are bounded in memory (no spilling to disk) and in time, so a
reader never holds the lock for long. No MPI here; runners.store builds on this.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import re
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from runners.domain.errors import BadInput
from runners.domain.units import format_bytes, format_seconds, parse_bytes
from runners.host.memory import available_bytes
from runners.process import stops

LOCK_TIMEOUT_S = 30.0  # the default wait for a store another process holds
LOCK_TIMEOUT_ENV = "COLLSWEEP_LOCK_TIMEOUT_S"
MAX_LOCK_TIMEOUT_S = 3600.0
QUERY_TIMEOUT_S = 30.0
MEMORY_ENV = "COLLSWEEP_READ_MEMORY_LIMIT"
DEFAULT_READ_MEMORY = "1GiB"
HEADER_BYTES = 3 * 4096  # DuckDB's main header and two database headers precede the blocks

Connection = duckdb.DuckDBPyConnection

MIN_READ_MEMORY = 16 * 2**20
_read_memory_limit = ""  # set_read_memory_limit's, else COLLSWEEP_READ_MEMORY_LIMIT's, else 1GiB


class StoreError(BadInput):
    """A problem with the results store itself (missing, damaged, foreign, read-only): exit 2."""


class StoreBusy(StoreError):
    """Another process held the store's lock for the whole wait (exit 1: try again)."""

    exit_status = 1

    def __init__(self, message: str, holder: str) -> None:
        super().__init__(message)
        self.holder = holder


class QueryError(StoreError):
    """SQL given to a query cannot run (syntax, unknown table, refused file access): exit 2."""


class QueryLimit(QueryError):
    """A query ran past its time or memory limit (exit 1)."""

    exit_status = 1


def bounded_memory_limit(text: str, what: str = "--memory-limit") -> int:
    """A read memory limit in bytes: a size (512MiB, 2GiB) between 16 MiB and the memory
    available now (or 1GiB, the default), so no limit can be lifted by a negative or absurd
    value; StoreError else."""
    try:
        limit = parse_bytes(text)
    except ValueError:
        limit = -1
    available = max(available_bytes(), parse_bytes(DEFAULT_READ_MEMORY))
    if not MIN_READ_MEMORY <= limit <= available:
        raise StoreError(
            f"{what} must be a size between 16MiB and the {format_bytes(available)} available "
            f"now, got {text[:40]!r}"
        )
    return limit


def set_read_memory_limit(limit: str, what: str = "--memory-limit") -> None:
    """Memory limit of this process's read connections (a size: '512MiB', '4GiB', bounded by
    bounded_memory_limit; `what` names the value's source when it is refused)."""
    global _read_memory_limit
    mib = bounded_memory_limit(limit, what) // 2**20
    _read_memory_limit = f"{mib // 1024}GiB" if mib % 1024 == 0 else f"{mib}MiB"


def _memory_limit() -> str:
    """The read connections' limit: set by the command, else the environment's (checked), else
    1GiB."""
    if not _read_memory_limit:
        text = os.environ.get(MEMORY_ENV, "").strip()
        set_read_memory_limit(text, MEMORY_ENV) if text else None
    return _read_memory_limit or DEFAULT_READ_MEMORY


def read_only_config() -> dict[str, Any]:
    """Config of every read connection: no file access from SQL, bounded memory, no spilling."""
    return {
        "enable_external_access": False,
        "memory_limit": _memory_limit(),
        "temp_directory": "",
        "lock_configuration": True,
    }


# --- who holds the lock --------------------------------------------------------------------------


def is_busy(exc: duckdb.Error) -> bool:
    """True for errors that mean "someone else has the file right now": worth retrying."""
    text = str(exc)
    return (
        "Could not set lock on file" in text
        or "different configuration than existing connections" in text
    )


def lock_holder(exc: duckdb.Error | str) -> str:
    """The process DuckDB names as holding the lock, with its command line when visible here."""
    found = re.search(r"lock is held in (.*?) \(PID (\d+)\)", str(exc))
    if not found:
        return "another connection in this process" if "configuration" in str(exc) else "unknown"
    program, pid = found.group(1), int(found.group(2))
    return f"pid {pid} ({_command_line(pid) or Path(program).name})"


def _command_line(pid: int) -> str:
    """The command line of a local process, shortened, or '' when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    words = [w.decode(errors="replace") for w in raw.split(b"\0") if w]
    if len(words) > 2 and words[1:3] == ["-m", "runners.cli"]:
        words = ["collsweep", *words[3:]]
    elif words and Path(words[0]).name.startswith("python") and len(words) > 1:
        words = words[1:]
    if words and Path(words[0]).name == "collsweep":
        words[0] = "collsweep"
    text = " ".join(" ".join(words).split())
    return text if len(text) <= 80 else text[:77] + "..."


# --- opening ------------------------------------------------------------------------------------


def _open_failure(path: Path, exc: duckdb.Error) -> StoreError:
    """Turn DuckDB's error on opening ``path`` into a message for users."""
    text = str(exc)
    if "not a valid DuckDB database file" in text:
        return StoreError(
            f"{path} is not a collsweep results store: it is not a DuckDB database "
            "(corrupt, truncated or some other kind of file). Move it aside, or point "
            "COLLSWEEP_STORE / --store at another file."
        )
    if is_corruption(exc):
        return damaged(path, text)
    if "Read-only file system" in text or "Permission denied" in text:
        return StoreError(f"cannot write the results store {path}: {first_line(text)}")
    return StoreError(f"cannot open the results store {path}: {first_line(text)}")


def is_corruption(exc: duckdb.Error) -> bool:
    """Whether DuckDB's error says the file's bytes are not what it wrote (a failed block
    checksum, a block cut short)."""
    text = str(exc)
    return "Could not read enough bytes" in text or "Corrupt database" in text or "checksum" in text


@contextlib.contextmanager
def damage_said(path: Path | str) -> Iterator[None]:
    """Inside the block, DuckDB's error for a block that fails its checksum (met only when a
    query reads that block) becomes the damaged-store error with the salvage hint."""
    try:
        yield
    except duckdb.Error as exc:
        if is_corruption(exc):
            raise damaged(Path(path), str(exc)) from exc
        raise


def check_checksums(con: Connection, path: Path) -> None:
    """Read every column of every table, so that DuckDB verifies the checksum of every block
    holding data: StoreError (damaged, with the salvage hint) if one fails. A writer asks this
    once before its first write; a write connection that never reads a damaged block would
    otherwise add rows to a store it cannot read back."""
    try:
        for (table,) in con.execute(TABLES_SQL).fetchall():
            quoted = table.replace('"', '""')
            con.execute(f'SELECT max(hash(COLUMNS(*))) FROM "{quoted}"').fetchall()
    except duckdb.Error as exc:
        raise damaged(path, str(exc)) from exc


def damaged(path: Path, why: str) -> StoreError:
    """The one error every command gives for a store that fails DuckDB's checks."""
    return StoreError(
        f"the results store {path} is damaged ({first_line(why)}); nothing was written to it. "
        f"Restore it from a backup, or copy what is readable into a new store with "
        f"`collsweep salvage --store {path} NEW.duckdb`"
    )


def first_line(text: str) -> str:
    """The first line of an error's text (DuckDB's run to several)."""
    return text.strip().splitlines()[0] if text.strip() else text


def _pause(attempt: int) -> None:
    """Jittered sleep before retry ``attempt`` (0, 1, ...): 5-20 ms at first, up to 25-100 ms.

    Short at first because other store operations hold the lock for tens of milliseconds; the
    jitter keeps waiting processes from retrying in lock step.
    """
    high = min(0.1, 0.02 * 1.3**attempt)
    time.sleep(random.uniform(high / 4, high))


def lock_timeout() -> float:
    """How long an operation waits for a store another process holds: $COLLSWEEP_LOCK_TIMEOUT_S
    seconds (a slow shared file system may want more), else LOCK_TIMEOUT_S."""
    text = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    if not text:
        return LOCK_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_LOCK_TIMEOUT_S:
        raise BadInput(
            f"{LOCK_TIMEOUT_ENV}={text!r}: give seconds above 0 and at most "
            f"{MAX_LOCK_TIMEOUT_S:.0f}"
        )
    return seconds


def connect(path: Path, *, read_only: bool, timeout: float | None = None) -> Connection:
    """Open ``path``, retrying while another process holds its lock (StoreBusy after
    ``timeout`` s, default lock_timeout()); a damaged file raises StoreError and is closed
    again untouched."""
    timeout = lock_timeout() if timeout is None else timeout
    deadline = time.monotonic() + timeout
    config = read_only_config() if read_only else {}
    attempt = 0
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=config)
            break
        except duckdb.Error as exc:
            if not is_busy(exc):
                raise _open_failure(path, exc) from exc
            if time.monotonic() >= deadline:
                raise _busy_error(path, timeout, exc) from exc
            stops.act_on_held()  # a stop signal ends the wait, nothing is half done
            _pause(attempt)
            attempt += 1
    try:
        check_intact(con, path)
    except BaseException:
        con.close()
        raise
    return con


def _busy_error(path: Path, timeout: float, exc: duckdb.Error) -> StoreBusy:
    holder = lock_holder(exc)
    return StoreBusy(
        f"the results store {path} stayed busy for {format_seconds(timeout)}: "
        f"{holder} is holding it",
        holder,
    )


def check_intact(con: Connection, path: Path) -> None:
    """Raise StoreError when a table's data lies in blocks past the end of the file (a copy cut
    short, a full disk), before anything reads or writes the missing part. DuckDB opens such
    a file and even counts its rows; only reading the lost blocks would fail. A file this
    process found intact is not asked again while its size, time and inode stay the same (a
    sweep opens its store dozens of times; any write or cut changes them)."""
    if path.with_name(path.name + ".wal").exists():
        return  # blocks replayed from a write-ahead log are not in the file yet
    seen = _identity(path)
    if seen is not None and _INTACT.get(path) == seen:
        return
    _check_blocks(con, path)
    if seen is not None and _identity(path) == seen:
        _INTACT[path] = seen


_INTACT: dict[Path, tuple[int, int, int]] = {}  # files found intact, by (size, mtime, inode)


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns, found.st_ino


def _check_blocks(con: Connection, path: Path) -> None:
    """check_intact's reading: every table's last block within the file."""
    try:
        block_size = int(con.execute("PRAGMA database_size").fetchall()[0][2])
        tables = [r[0] for r in con.execute(TABLES_SQL).fetchall()]
        last = _last_block(con, tables)
    except duckdb.Error as exc:
        raise damaged(path, str(exc)) from exc
    needed = HEADER_BYTES + (last + 1) * block_size
    actual = path.stat().st_size
    if actual < needed:
        raise damaged(path, f"the file has {actual} bytes but its tables need {needed}")


TABLES_SQL = "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"


def _last_block(con: Connection, tables: Sequence[str]) -> int:
    """The highest block holding data of any of ``tables`` (-1 when none holds any on disk),
    asked in one query (a query per table cost about as much as the rest of a connect)."""
    if not tables:
        return -1
    quoted = (t.replace("'", "''") for t in tables)
    parts = " UNION ALL ".join(f"SELECT block_id FROM pragma_storage_info('{t}')" for t in quoted)
    row = con.execute(f"SELECT max(block_id) FROM ({parts})").fetchall()
    return -1 if row[0][0] is None else int(row[0][0])


# --- bounded reads -------------------------------------------------------------------------------


def bounded_query(
    con: Connection,
    sql: str,
    params: Sequence[Any] | dict[str, Any] | None = None,
    *,
    timeout_s: float = QUERY_TIMEOUT_S,
    max_rows: int | None = None,
) -> pd.DataFrame:
    """Run ``sql`` on ``con``, interrupted after ``timeout_s``; at most ``max_rows`` rows.

    A result cut at ``max_rows`` has ``frame.attrs['truncated'] = True``. Failing SQL, the
    time limit and the memory limit raise QueryError.
    """
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.start()
    try:
        con.execute(sql, params)
        if con.description is None:
            return pd.DataFrame()
        if max_rows is None:
            return con.df()
        names = [d[0] for d in con.description]
        rows = con.fetchmany(max_rows + 1)
    except duckdb.InterruptException:
        raise QueryLimit(f"the query was stopped after {timeout_s:g} s (its time limit)") from None
    except duckdb.OutOfMemoryException as exc:
        raise QueryLimit(
            f"the query needs more than the read memory limit of {_memory_limit()} "
            f"({first_line(str(exc))})"
        ) from None
    except duckdb.Error as exc:
        if is_corruption(exc):
            raise  # the damaged store's error, not the query's: see damage_said
        raise QueryError(first_line(str(exc))) from exc
    finally:
        timer.cancel()
    frame = pd.DataFrame(rows[:max_rows], columns=names)
    frame.attrs["truncated"] = len(rows) > max_rows
    return frame
