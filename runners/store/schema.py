"""The store's schema: tables, versions and forward migrations, and opening the file for writes.

DuckDB lets one process at a time hold a database file open for writing, and while any process
holds it, even read-only, a writer elsewhere cannot open it. So every operation opens a short
connection, does its work in one transaction and closes; opening retries with jittered sleeps
while another process holds the lock (runners.store.storefile). No MPI here.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import duckdb

from runners.domain.status import PointStatus, RunStatus
from runners.process import stops
from runners.process.faults import hold_at, holding
from runners.store.migrations import MIGRATIONS, SCHEMA_VERSION, Connection
from runners.store.shape import check_shape
from runners.store.storefile import StoreError, check_checksums, connect, first_line

DEFAULT_STORE = Path("data/collsweep.duckdb")
STORE_ENV = "COLLSWEEP_STORE"

RUN_STATUSES = tuple(RunStatus)
POINT_STATUSES = tuple(PointStatus)
ASSUMPTION_STATES = ("holds", "violated", "unknown")
CROSSOVER_KINDS = ("measured", "predicted")


# --- connections ------------------------------------------------------------------------------


def _connect(path: Path, *, read_only: bool, timeout: float | None = None) -> Connection:
    """Open ``path`` (see runners.store.storefile.connect)."""
    return connect(path, read_only=read_only, timeout=timeout)


def _missing(path: Path) -> StoreError:
    """The error for a store file that does not exist."""
    return StoreError(
        f"no results store at {path}: nothing has been recorded there yet. Run a sweep first, "
        f"or point {STORE_ENV} / --store at an existing store."
    )


# --- schema version and migrations -------------------------------------------------------------


def _stored_version(con: Connection, path: Path) -> int:
    """The schema version recorded in the open store; 0 for a database with no tables at all."""
    try:
        rows = con.execute("SELECT max(version) FROM schema_version").fetchall()
    except duckdb.CatalogException:
        if con.execute("SELECT count(*) FROM duckdb_tables()").fetchall() == [(0,)]:
            return 0
        raise StoreError(
            f"{path} is a DuckDB database but not a collsweep results store "
            "(it has no schema_version table); point --store at another file."
        ) from None
    value = rows[0][0] if rows else None
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise StoreError(
            f"{path} has a schema_version of {str(value)[:40]!r}, not a version number: damaged "
            "or made by another program; point --store at another file"
        )
    return value


def _refuse_newer(path: Path, version: int) -> None:
    """Raise if the store was written by a newer collsweep than this one."""
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer collsweep (schema {version}, this version "
            f"understands {SCHEMA_VERSION}); upgrade collsweep"
        )


def _apply(con: Connection, step: Sequence[str] | Callable[[Connection], None]) -> None:
    """Run one migration step: its SQL statements in order, or its function."""
    if callable(step):
        step(con)
        return
    for statement in step:
        con.execute(statement)


def _migrate_open(con: Connection, path: Path) -> int:
    """Bring the open store up to SCHEMA_VERSION in one transaction; return the old version."""
    old = _stored_version(con, path)
    _refuse_newer(path, old)
    if old == SCHEMA_VERSION:
        check_shape(con, path)
        return old
    con.execute("BEGIN TRANSACTION")
    try:
        for version, step in MIGRATIONS:
            if version > old:
                _apply(con, step)
        con.execute("DELETE FROM schema_version")
        con.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION])
        con.execute("COMMIT")
    except Exception as exc:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise StoreError(
            f"could not upgrade {path} from schema {old} to {SCHEMA_VERSION}; the file is "
            f"unchanged. Cause: {exc}"
        ) from exc
    return old


def _create(path: Path) -> None:
    """Create a current-schema store at ``path`` unless one appears there first.

    The database is built under a temporary name and hard-linked into place, so no process
    ever opens a half-made file and two processes creating the same store cannot clobber it.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(tmp))
        try:
            _migrate_open(con, tmp)
        finally:
            con.close()
        _publish(tmp, path)
    except (OSError, duckdb.Error) as exc:
        raise StoreError(f"cannot create the results store {path}: {exc}") from exc
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            with contextlib.suppress(OSError):  # on a read-only file system even a missing
                leftover.unlink()  # file's unlink fails, and would hide the StoreError


def _publish(tmp: Path, path: Path) -> None:
    """Give the finished ``tmp`` the name ``path`` unless something already has it."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links: rename, racing only with itself
        if not path.exists():
            os.replace(tmp, path)


@contextlib.contextmanager
def _writing(path: Path | str, timeout: float | None = None) -> Iterator[Connection]:
    """A short write connection to a current-schema store, inside one transaction; StoreBusy
    when another process holds the file for ``timeout`` s."""
    path = Path(path)
    with stops.held():  # a stop signal waits for the COMMIT or ROLLBACK
        if not path.exists():
            _create(path)
        con = _connect(path, read_only=False, timeout=timeout)
        try:
            _migrate_open(con, path)
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
                _commit(con, path)
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                raise
        finally:
            con.close()


def _commit(con: Connection, path: Path) -> None:
    """COMMIT; a file system that cannot take it (full, read-only) is a StoreError in one
    line, the transaction rolled back, the store as it was."""
    try:
        con.execute("COMMIT")
    except (duckdb.IOException, duckdb.TransactionException) as exc:
        raise StoreError(f"cannot write the results store {path}: {first_line(str(exc))}") from None


def park_inside(con: Connection, stage: str) -> None:
    """Test hook (runners.process.faults): park inside a query of a write's open transaction,
    where DuckDB runs stop signals' handlers, until the test releases it."""
    if not holding(stage):
        return

    def park() -> int:
        hold_at(stage)
        return 1

    con.create_function("collsweep_park", park, [], "INTEGER", side_effects=True)
    con.execute("SELECT collsweep_park()").fetchall()


def ensure_current(path: Path | str) -> int:
    """Create the store if missing, or migrate an older one forward; return its old version.

    The old version is 0 for a store created just now. A store written by a newer collsweep,
    or a file that is not a store, raises StoreError. Writers call this implicitly; call it
    before reading when the store may predate this collsweep.
    """
    path = Path(path)
    with stops.held():
        if not path.exists():
            _create(path)
            return 0
        con = _connect(path, read_only=False)
        try:
            check_checksums(con, path)  # a damaged store is refused before any write
            return _migrate_open(con, path)
        finally:
            con.close()


def migrate(path: Path | str) -> tuple[int, int]:
    """Migrate an existing store to this collsweep's schema; return (old, new) versions."""
    path = Path(path)
    if not path.exists():
        raise _missing(path)
    return ensure_current(path), SCHEMA_VERSION


def stored_schema_version(path: Path | str) -> int:
    """The schema version recorded in an existing store, read without changing the file."""
    path = Path(path)
    if not path.exists():
        raise _missing(path)
    with stops.held():
        con = _connect(path, read_only=True)
        try:
            return _stored_version(con, path)
        finally:
            con.close()
