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

from runners.store import storefile
from runners.store.storefile import LOCK_TIMEOUT_S, StoreError

DEFAULT_STORE = Path("data/collsweep.duckdb")
STORE_ENV = "COLLSWEEP_STORE"

RUN_STATUSES = ("running", "complete", "interrupted", "failed")
POINT_STATUSES = ("ok", "failed", "skipped", "timeout")
ASSUMPTION_STATES = ("holds", "violated", "unknown")
CROSSOVER_KINDS = ("measured", "predicted")

Connection = duckdb.DuckDBPyConnection
Migration = tuple[int, Sequence[str] | Callable[[Connection], None]]

_V1 = [
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE runs (
        run_id VARCHAR PRIMARY KEY,
        status VARCHAR NOT NULL,
        status_reason VARCHAR,
        started_at TIMESTAMP,
        finished_at TIMESTAMP,
        spec_toml VARCHAR,
        command_line VARCHAR,
        host VARCHAR,
        cpu_model VARCHAR,
        physical_cores INTEGER,
        mpi_library VARCHAR,
        mpi_version VARCHAR,
        mpi4py_version VARCHAR,
        numpy_version VARCHAR,
        python_version VARCHAR,
        code_version VARCHAR,
        environment JSON,
        thread_level VARCHAR,
        memory_setting VARCHAR,
        calibration_id VARCHAR
    )""",
    """CREATE TABLE points (
        point_id VARCHAR PRIMARY KEY,
        run_id VARCHAR NOT NULL,
        algorithm VARCHAR NOT NULL,
        library_config VARCHAR,
        ranks INTEGER NOT NULL,
        bytes BIGINT NOT NULL,
        dtype VARCHAR NOT NULL,
        op VARCHAR NOT NULL,
        count BIGINT,
        status VARCHAR NOT NULL,
        reason VARCHAR,
        oversubscribed BOOLEAN,
        iterations INTEGER,
        warmup INTEGER,
        median_s DOUBLE,
        mean_s DOUBLE,
        min_s DOUBLE,
        max_s DOUBLE,
        p5_s DOUBLE,
        p95_s DOUBLE,
        stddev_s DOUBLE,
        ci_low_s DOUBLE,
        ci_high_s DOUBLE,
        ci_rel_halfwidth DOUBLE,
        ci_target_met BOOLEAN,
        algbw_gbps DOUBLE,
        busbw_gbps DOUBLE,
        sync_cadence VARCHAR,
        cache_mode VARCHAR,
        verified BOOLEAN,
        started_at TIMESTAMP,
        finished_at TIMESTAMP
    )""",
    """CREATE TABLE samples (
        point_id VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL,
        iteration INTEGER NOT NULL,
        seconds DOUBLE NOT NULL,
        pass INTEGER
    )""",
]

_V2 = [
    """CREATE TABLE calibrations (
        calibration_id VARCHAR PRIMARY KEY,
        created_at TIMESTAMP NOT NULL,
        host VARCHAR,
        mpi_library VARCHAR,
        ranks INTEGER,
        alpha_s DOUBLE,
        beta_s_per_byte DOUBLE,
        r_squared DOUBLE,
        min_bytes BIGINT,
        max_bytes BIGINT,
        breakpoints JSON,
        segments JSON,
        gammas JSON,
        source VARCHAR,
        details JSON
    )""",
    """CREATE TABLE predictions (
        point_id VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL,
        calibration_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        predicted_s DOUBLE,
        latency_s DOUBLE,
        bandwidth_s DOUBLE,
        reduction_s DOUBLE,
        PRIMARY KEY (point_id, calibration_id)
    )""",
    """CREATE TABLE assumptions (
        run_id VARCHAR NOT NULL,
        point_id VARCHAR,
        name VARCHAR NOT NULL,
        state VARCHAR NOT NULL,
        detail VARCHAR
    )""",
    """CREATE TABLE crossovers (
        run_id VARCHAR NOT NULL,
        ranks INTEGER NOT NULL,
        dtype VARCHAR NOT NULL,
        op VARCHAR NOT NULL,
        algorithm_a VARCHAR NOT NULL,
        algorithm_b VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        bytes DOUBLE NOT NULL,
        low_bytes DOUBLE,
        high_bytes DOUBLE,
        detail VARCHAR
    )""",
]

_V3 = [
    "ALTER TABLE crossovers ADD COLUMN calibration_id VARCHAR",
    "ALTER TABLE assumptions ADD COLUMN calibration_id VARCHAR",
    """CREATE TABLE best_choices (
        run_id VARCHAR NOT NULL,
        calibration_id VARCHAR NOT NULL,
        ranks INTEGER NOT NULL,
        bytes BIGINT NOT NULL,
        dtype VARCHAR NOT NULL,
        op VARCHAR NOT NULL,
        measured_best VARCHAR NOT NULL,
        predicted_best VARCHAR NOT NULL,
        best_s DOUBLE,
        pick_s DOUBLE,
        slowdown DOUBLE,
        candidates INTEGER,
        same_model BOOLEAN
    )""",
    """CREATE TABLE agreement (
        run_id VARCHAR NOT NULL,
        calibration_id VARCHAR NOT NULL,
        scope VARCHAR NOT NULL,
        ranks INTEGER,
        dtype VARCHAR,
        op VARCHAR,
        points INTEGER,
        model_pick_share DOUBLE,
        mean_slowdown DOUBLE,
        same_model_share DOUBLE
    )""",
]

# Launches as the unit of repetition: each sample's launch, and per point how many launches it
# has and the interval of its median launch (runners.domain.repetition). A store written
# before had one launch per point, so its intervals are its within-launch CIs.
_V4 = [
    "ALTER TABLE samples ADD COLUMN launch INTEGER",
    "UPDATE samples SET launch = 0",
    "ALTER TABLE points ADD COLUMN launches INTEGER",
    "ALTER TABLE points ADD COLUMN interval_low_s DOUBLE",
    "ALTER TABLE points ADD COLUMN interval_high_s DOUBLE",
    "ALTER TABLE points ADD COLUMN interval_rel_halfwidth DOUBLE",
    "ALTER TABLE points ADD COLUMN job VARCHAR",
    """UPDATE points SET launches = CASE WHEN median_s IS NULL THEN 0 ELSE 1 END,
           interval_low_s = ci_low_s, interval_high_s = ci_high_s,
           interval_rel_halfwidth = ci_rel_halfwidth""",
    """CREATE TABLE probes (
        run_id VARCHAR NOT NULL,
        job VARCHAR NOT NULL,
        ranks INTEGER,
        launch INTEGER NOT NULL,
        moment VARCHAR NOT NULL,
        pingpong_s DOUBLE,
        copy_gbps DOUBLE,
        measured_at TIMESTAMP
    )""",
    """CREATE TABLE winners (
        run_id VARCHAR NOT NULL,
        ranks INTEGER NOT NULL,
        dtype VARCHAR NOT NULL,
        op VARCHAR NOT NULL,
        bytes BIGINT NOT NULL,
        winner VARCHAR NOT NULL,
        runner_up VARCHAR NOT NULL,
        decided BOOLEAN NOT NULL,
        ratio DOUBLE,
        ratio_low DOUBLE,
        ratio_high DOUBLE,
        launches INTEGER,
        pairing VARCHAR,
        candidates INTEGER
    )""",
]

# Ordered forward migrations: (version reached, SQL statements or a function of the connection).
# Never edit a released entry; append a new one and bump nothing else.
MIGRATIONS: list[Migration] = [(1, _V1), (2, _V2), (3, _V3), (4, _V4)]
SCHEMA_VERSION = MIGRATIONS[-1][0]


# --- connections ------------------------------------------------------------------------------


def _connect(path: Path, *, read_only: bool, timeout: float) -> Connection:
    """Open ``path`` (see runners.store.storefile.connect)."""
    return storefile.connect(path, read_only=read_only, timeout=timeout)


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
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


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
            leftover.unlink(missing_ok=True)


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
def _writing(path: Path | str, timeout: float = LOCK_TIMEOUT_S) -> Iterator[Connection]:
    """A short write connection to a current-schema store, inside one transaction; StoreBusy
    when another process holds the file for ``timeout`` s."""
    path = Path(path)
    if not path.exists():
        _create(path)
    con = _connect(path, read_only=False, timeout=timeout)
    try:
        _migrate_open(con, path)
        con.execute("BEGIN TRANSACTION")
        try:
            yield con
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
    finally:
        con.close()


def ensure_current(path: Path | str) -> int:
    """Create the store if missing, or migrate an older one forward; return its old version.

    The old version is 0 for a store created just now. A store written by a newer collsweep,
    or a file that is not a store, raises StoreError. Writers call this implicitly; call it
    before reading when the store may predate this collsweep.
    """
    path = Path(path)
    if not path.exists():
        _create(path)
        return 0
    con = _connect(path, read_only=False, timeout=LOCK_TIMEOUT_S)
    try:
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
    con = _connect(path, read_only=True, timeout=LOCK_TIMEOUT_S)
    try:
        return _stored_version(con, path)
    finally:
        con.close()
