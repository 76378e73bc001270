"""The results store: one DuckDB file holding runs, points, samples and the model's outputs.

This is the only module that writes the store, and it owns the schema version and migrations.
It never imports MPI, so the dashboard uses it too. The tables are documented in docs/schema.md.

DuckDB lets one process at a time hold a database file open for writing, and while any process
holds it, even read-only, a writer elsewhere cannot open it. So every operation here opens a
short connection, does its work in one transaction and closes; opening retries with jittered
sleeps while another process holds the lock, for up to ``LOCK_TIMEOUT_S`` seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from runners.store import storefile

DEFAULT_STORE = Path("data/collsweep.duckdb")
STORE_ENV = "COLLSWEEP_STORE"
LOCK_TIMEOUT_S = storefile.LOCK_TIMEOUT_S
StoreError = storefile.StoreError
StoreBusy = storefile.StoreBusy
QueryError = storefile.QueryError
QueryLimit = storefile.QueryLimit

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

# Ordered forward migrations: (version reached, SQL statements or a function of the connection).
# Never edit a released entry; append a new one and bump nothing else.
MIGRATIONS: list[Migration] = [(1, _V1), (2, _V2), (3, _V3)]
SCHEMA_VERSION = MIGRATIONS[-1][0]


def default_store() -> Path:
    """The store to use: ``$COLLSWEEP_STORE`` if set, else ``data/collsweep.duckdb`` here."""
    override = os.environ.get(STORE_ENV, "").strip()
    return Path(override).expanduser() if override else DEFAULT_STORE


# --- connections ------------------------------------------------------------------------------


def _connect(path: Path, *, read_only: bool, timeout: float) -> Connection:
    """Open ``path`` (see runners.store.storefile.connect)."""
    return storefile.connect(path, read_only=read_only, timeout=timeout)


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


# --- reading --------------------------------------------------------------------------------


def _missing(path: Path) -> StoreError:
    """The error for a store file that does not exist."""
    return StoreError(
        f"no results store at {path}: nothing has been recorded there yet. Run a sweep first, "
        f"or point {STORE_ENV} / --store at an existing store."
    )


def _check_readable(con: Connection, path: Path) -> None:
    """Refuse stores whose schema is not exactly this collsweep's (readers never migrate)."""
    version = _stored_version(con, path)
    _refuse_newer(path, version)
    if version == 0:
        raise StoreError(f"{path} is an empty DuckDB database, not yet a collsweep results store")
    if version < SCHEMA_VERSION:
        raise StoreError(
            f"{path} uses results schema {version}, older than this collsweep's schema "
            f"{SCHEMA_VERSION}; upgrade the file once with `collsweep migrate` (or any "
            "command that writes to the store), then try again."
        )


@contextlib.contextmanager
def open_readonly(path: Path | str, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[Connection]:
    """A read-only connection to the store, with file access from SQL disabled.

    SQL run on it cannot write, read other files or ATTACH. Keep it open briefly: while it is
    open, writers in other processes wait. A missing, foreign, older- or newer-schema file
    raises StoreError; the file is never created or migrated.
    """
    path = Path(path)
    if not path.exists():
        raise _missing(path)
    con = _connect(path, read_only=True, timeout=timeout)
    try:
        _check_readable(con, path)
        yield con
    finally:
        con.close()


def query(
    path: Path | str,
    sql: str,
    params: Sequence[Any] | dict[str, Any] | None = None,
    *,
    timeout: float = LOCK_TIMEOUT_S,
    time_limit: float = storefile.QUERY_TIMEOUT_S,
    max_rows: int | None = None,
) -> pd.DataFrame:
    """Run read-only SQL against the store and return the result as a DataFrame.

    ``timeout`` bounds the wait for the file's lock, ``time_limit`` the query itself, and
    ``max_rows`` the rows fetched (a cut result has ``attrs['truncated']``); memory is bounded
    by the read connections' limit. Failing SQL and exceeded limits raise QueryError.
    """
    with open_readonly(path, timeout=timeout) as con:
        return storefile.bounded_query(con, sql, params, timeout_s=time_limit, max_rows=max_rows)


def _lookup(path: Path | str, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    """Rows of a read-only lookup as dicts, JSON columns decoded; [] if the store is missing."""
    if not Path(path).exists():
        return []
    with open_readonly(path) as con:
        cursor = con.execute(sql, params)
        names = [d[0] for d in cursor.description]
        json_cols = {d[0] for d in cursor.description if str(d[1]).upper() == "JSON"}
        rows = cursor.fetchall()
    return [_decoded(dict(zip(names, row, strict=True)), json_cols) for row in rows]


def _decoded(row: dict[str, Any], json_cols: set[str]) -> dict[str, Any]:
    """The row with its JSON columns parsed into Python objects."""
    return {k: json.loads(v) if k in json_cols and v is not None else v for k, v in row.items()}


def get_run(path: Path | str, run_id: str) -> dict[str, Any] | None:
    """The runs row for ``run_id`` as a dict (environment decoded), or None if absent."""
    rows = _lookup(path, "SELECT * FROM runs WHERE run_id = ?", [run_id])
    return rows[0] if rows else None


def point_ids(path: Path | str, run_id: str, statuses: Iterable[str] | None = None) -> set[str]:
    """Ids of the run's stored points (all final), optionally only those with given statuses."""
    wanted = list(statuses) if statuses is not None else list(POINT_STATUSES)
    rows = _lookup(
        path,
        "SELECT point_id FROM points WHERE run_id = ? AND list_contains(?, status)",
        [run_id, wanted],
    )
    return {row["point_id"] for row in rows}


def latest_calibration(
    path: Path | str,
    host: str | None = None,
    *,
    mpi_library: str | None = None,
    source: str | None = None,
) -> dict[str, Any] | None:
    """The newest calibration as a dict with JSON decoded, or None.

    Given, ``host`` and ``source`` must match exactly and ``mpi_library`` up to whitespace
    (runs of spaces and newlines compare equal, leading and trailing ones are ignored).
    """
    library = " ".join(mpi_library.split()) if mpi_library is not None else None
    rows = _lookup(
        path,
        "SELECT * FROM calibrations WHERE (? IS NULL OR host = ?) AND (? IS NULL OR source = ?) "
        "AND (? IS NULL OR trim(regexp_replace(mpi_library, '\\s+', ' ', 'g')) = ?) "
        "ORDER BY created_at DESC, calibration_id DESC LIMIT 1",
        [host, host, source, source, library, library],
    )
    return rows[0] if rows else None


def get_calibration(path: Path | str, calibration_id: str) -> dict[str, Any] | None:
    """One calibrations row as a dict with JSON decoded, or None if absent."""
    rows = _lookup(path, "SELECT * FROM calibrations WHERE calibration_id = ?", [calibration_id])
    return rows[0] if rows else None


# --- writing: rows to typed frames -------------------------------------------------------------


def _utc_naive(value: Any) -> datetime | None:
    """A TIMESTAMP value (datetime, ISO string or Unix epoch seconds) as naive UTC."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC).replace(tzinfo=None)
    stamp = datetime.fromisoformat(value) if isinstance(value, str) else value
    if not isinstance(stamp, datetime):
        raise ValueError(f"not a timestamp: {value!r}")
    return stamp.astimezone(UTC).replace(tzinfo=None) if stamp.tzinfo else stamp


def _json_text(value: Any) -> str | None:
    """A JSON value: Python objects are serialised, strings must already be valid JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        json.loads(value)
        return value
    return json.dumps(value)


def _value(value: Any, sql_type: str) -> Any:
    """One value made ready for a column of ``sql_type`` (JSON text, naive UTC time)."""
    if sql_type == "JSON":
        return _json_text(value)
    if sql_type == "TIMESTAMP":
        return _utc_naive(value)
    return value


def _column(values: list[Any], sql_type: str) -> Any:
    """Values for one column, in a pandas/numpy array that DuckDB scans without guessing."""
    if sql_type == "DOUBLE":
        return np.array(values, dtype=np.float64)  # None -> NaN, which DuckDB reads as NULL
    if sql_type in ("INTEGER", "BIGINT"):
        return pd.array(values, dtype="Int64")
    if sql_type == "BOOLEAN":
        return pd.array(values, dtype="boolean")
    if sql_type == "TIMESTAMP":
        return pd.Series([_utc_naive(v) for v in values], dtype="datetime64[us]")
    if sql_type == "JSON":
        return pd.Series([_json_text(v) for v in values], dtype=object)
    return pd.Series([v if v is None else str(v) for v in values], dtype=object)


_COLUMNS: dict[tuple[int, str], dict[str, tuple[str, bool]]] = {}


def _table_columns(con: Connection, table: str) -> dict[str, tuple[str, bool]]:
    """The table's columns in order, name -> (SQL type, nullable); cached per schema version."""
    key = (SCHEMA_VERSION, table)
    if key not in _COLUMNS:
        rows = con.execute(
            "SELECT column_name, data_type, is_nullable FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND table_name = ? ORDER BY column_index",
            [table],
        ).fetchall()
        _COLUMNS[key] = {name: (sql_type, nullable) for name, sql_type, nullable in rows}
    return _COLUMNS[key]


def _check_keys(
    table: str, rows: list[dict[str, Any]], columns: dict[str, tuple[str, bool]]
) -> None:
    """Raise ValueError for keys that are not columns and for missing NOT NULL columns."""
    present = set().union(*(row.keys() for row in rows))
    unknown = present - columns.keys()
    if unknown:
        raise ValueError(f"unknown {table} column(s): {', '.join(sorted(unknown))}")
    for row in rows:
        missing = [c for c, (_, nullable) in columns.items() if not nullable and row.get(c) is None]
        if missing:
            raise ValueError(f"{table} row lacks required {', '.join(missing)}: {row!r:.200}")


def _insert(con: Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert dict rows into ``table`` in one batch; absent keys become NULL."""
    if not rows:
        return
    columns = _table_columns(con, table)
    _check_keys(table, rows, columns)
    used = [c for c in columns if any(c in row for row in rows)]
    frame = pd.DataFrame({c: _column([row.get(c) for row in rows], columns[c][0]) for c in used})
    view = f"_new_{table}"
    con.register(view, frame)
    try:
        names = ", ".join(f'"{c}"' for c in used)
        casts = ", ".join(f'CAST("{c}" AS {columns[c][0]})' for c in used)
        con.execute(f"INSERT INTO {table} ({names}) SELECT {casts} FROM {view}")
    finally:
        con.unregister(view)


def _check_choice(what: str, value: Any, allowed: Sequence[str]) -> None:
    """Raise ValueError unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")


def _unique(what: str, keys: Iterable[Any]) -> None:
    """Raise ValueError if a key repeats within one call."""
    seen: set[Any] = set()
    for key in keys:
        if key in seen:
            raise ValueError(f"duplicate {what} in one call: {key!r}")
        seen.add(key)


def _now() -> datetime:
    """The current time as naive UTC, the convention for every TIMESTAMP in the store."""
    return datetime.now(UTC).replace(tzinfo=None)


# --- writing: public API -----------------------------------------------------------------------


def create_run(path: Path | str, run: dict[str, Any]) -> None:
    """Insert a runs row; keys are column names. status defaults to 'running', started_at to now.

    Unknown keys raise ValueError; an existing run_id raises StoreError.
    """
    row = {"status": "running", "started_at": _now(), **run}
    _check_choice("run status", row["status"], RUN_STATUSES)
    with _writing(path) as con:
        if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [row.get("run_id")]).fetchall():
            raise StoreError(f"run {row['run_id']!r} already exists in {path}")
        _insert(con, "runs", [row])


def update_run(path: Path | str, run_id: str, fields: dict[str, Any]) -> None:
    """Set some columns of an existing run (e.g. provenance learnt later, or resuming).

    Keys are runs column names other than run_id; unknown keys raise ValueError, an unknown
    run raises StoreError. JSON and TIMESTAMP values are converted as on insert.
    """
    if "status" in fields:
        _check_choice("run status", fields["status"], RUN_STATUSES)
    if not Path(path).exists():
        raise _missing(Path(path))
    if not fields:
        return
    with _writing(path) as con:
        _update_run(con, path, run_id, fields)


def _update_run(con: Connection, path: Path | str, run_id: str, fields: dict[str, Any]) -> None:
    """UPDATE one runs row on an open connection (see update_run)."""
    if "status" in fields:
        _check_choice("run status", fields["status"], RUN_STATUSES)
    columns = _table_columns(con, "runs")
    unknown = set(fields) - (columns.keys() - {"run_id"})
    if unknown:
        raise ValueError(f"cannot update runs column(s): {', '.join(sorted(unknown))}")
    values = [_value(value, columns[name][0]) for name, value in fields.items()]
    assignments = ", ".join(f'"{name}" = ?' for name in fields)
    changed = con.execute(
        f"UPDATE runs SET {assignments} WHERE run_id = ?", [*values, run_id]
    ).fetchall()
    if changed != [(1,)]:
        raise StoreError(f"no run {run_id!r} in {path}")


def finish_run(path: Path | str, run_id: str, status: str, reason: str = "") -> None:
    """Set a run's final status, status_reason and finished_at (now)."""
    update_run(path, run_id, {"status": status, "status_reason": reason, "finished_at": _now()})


def add_points(
    path: Path | str, points: list[dict[str, Any]], samples: list[dict[str, Any]]
) -> None:
    """Store points and their samples, replacing any stored under the same point_ids.

    Every sample must belong to one of ``points``; its run_id defaults to its point's. A point
    written again (a resumed run) replaces the old row and all of its old samples, so nothing
    is duplicated. One transaction, batched: 10^5 samples take a fraction of a second.
    """
    _check_points(points, samples)
    if not points:
        return
    samples = _with_run_ids(points, samples)
    with _writing(path) as con:
        _replace_points(con, points, samples)


def _check_points(points: list[dict[str, Any]], samples: list[dict[str, Any]]) -> None:
    """Raise ValueError for a bad status, repeated keys, or samples of points not given."""
    for point in points:
        _check_choice("point status", point.get("status"), POINT_STATUSES)
    _unique("point_id", (p.get("point_id") for p in points))
    strays = {s.get("point_id") for s in samples} - {p.get("point_id") for p in points}
    if strays:
        raise ValueError(f"samples for points not in this call: {sorted(map(str, strays))[:5]}")
    _unique(
        "(point_id, iteration) sample", ((s.get("point_id"), s.get("iteration")) for s in samples)
    )


def _with_run_ids(points: list[dict[str, Any]], samples: list[dict[str, Any]]) -> list[dict]:
    """Samples with run_id filled in from their point where missing."""
    runs_of = {p.get("point_id"): p.get("run_id") for p in points}
    return [
        s if "run_id" in s else {**s, "run_id": runs_of.get(s.get("point_id"))} for s in samples
    ]


def _replace_points(
    con: Connection, points: list[dict[str, Any]], samples: list[dict[str, Any]]
) -> None:
    """Delete the stored rows of these point_ids and their samples, then insert the new ones."""
    ids = pd.DataFrame({"point_id": pd.Series([p["point_id"] for p in points], dtype=object)})
    con.register("_replaced_ids", ids)
    for table in ("samples", "points"):
        con.execute(f"DELETE FROM {table} WHERE point_id IN (SELECT point_id FROM _replaced_ids)")
    con.unregister("_replaced_ids")
    _insert(con, "points", points)
    _insert(con, "samples", samples)


def write_batch(
    path: Path | str,
    points: list[dict[str, Any]],
    samples: list[dict[str, Any]],
    run_updates: dict[str, dict[str, Any]],
    *,
    timeout: float = LOCK_TIMEOUT_S,
) -> None:
    """Store points with their samples and set columns of runs, all in one transaction.

    ``run_updates`` maps run_id -> columns to set (as update_run). Points replace stored ones
    with the same point_id (as add_points), so writing a batch twice changes nothing.
    StoreBusy when another process holds the file for ``timeout`` s.
    """
    _check_points(points, samples)
    samples = _with_run_ids(points, samples)
    with _writing(path, timeout) as con:
        if points:
            _replace_points(con, points, samples)
        for run_id, fields in run_updates.items():
            _update_run(con, path, run_id, fields)


def add_calibration(path: Path | str, cal: dict[str, Any]) -> None:
    """Store a calibration (replacing one with the same calibration_id); created_at defaults to now.

    breakpoints, segments, gammas and details may be Python lists/dicts.
    """
    row = {"created_at": _now(), **cal}
    with _writing(path) as con:
        con.execute(
            "DELETE FROM calibrations WHERE calibration_id = ?", [row.get("calibration_id")]
        )
        _insert(con, "calibrations", [row])


def add_predictions(path: Path | str, rows: list[dict[str, Any]]) -> None:
    """Store model predictions, replacing stored ones with the same (point_id, calibration_id)."""
    _unique(
        "(point_id, calibration_id)", ((r.get("point_id"), r.get("calibration_id")) for r in rows)
    )
    if not rows:
        return
    keys = pd.DataFrame(
        {
            "point_id": pd.Series([r.get("point_id") for r in rows], dtype=object),
            "calibration_id": pd.Series([r.get("calibration_id") for r in rows], dtype=object),
        }
    )
    with _writing(path) as con:
        con.register("_replaced_keys", keys)
        con.execute(
            "DELETE FROM predictions USING _replaced_keys AS k "
            "WHERE predictions.point_id = k.point_id "
            "AND predictions.calibration_id = k.calibration_id"
        )
        con.unregister("_replaced_keys")
        _insert(con, "predictions", rows)


def _for_run(run_id: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with run_id filled in; a row naming another run raises ValueError."""
    out = []
    for row in rows:
        if row.get("run_id", run_id) != run_id:
            raise ValueError(f"row for run {row['run_id']!r} given for run {run_id!r}")
        out.append({**row, "run_id": run_id})
    return out


def _replace_run_rows(
    path: Path | str, table: str, run_id: str, rows: list[dict[str, Any]]
) -> None:
    """Delete every ``table`` row of the run and insert ``rows`` instead, in one transaction."""
    with _writing(path) as con:
        con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
        _insert(con, table, rows)


def replace_assumptions(path: Path | str, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's assumption checks (run-level rows have point_id None)."""
    rows = _for_run(run_id, rows)
    for row in rows:
        _check_choice("assumption state", row.get("state"), ASSUMPTION_STATES)
    _replace_run_rows(path, "assumptions", run_id, rows)


def replace_crossovers(path: Path | str, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's crossovers (kind 'measured' or 'predicted')."""
    rows = _for_run(run_id, rows)
    for row in rows:
        _check_choice("crossover kind", row.get("kind"), CROSSOVER_KINDS)
    _replace_run_rows(path, "crossovers", run_id, rows)


def replace_predictions(path: Path | str, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's predictions, whatever calibrations they used."""
    rows = _for_run(run_id, rows)
    _unique(
        "(point_id, calibration_id)", ((r.get("point_id"), r.get("calibration_id")) for r in rows)
    )
    _replace_run_rows(path, "predictions", run_id, rows)


def replace_best_choices(path: Path | str, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's best_choices rows (measured and predicted best per point)."""
    _replace_run_rows(path, "best_choices", run_id, _for_run(run_id, rows))


def replace_agreement(path: Path | str, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's agreement rows (how often the model picks the measured best)."""
    _replace_run_rows(path, "agreement", run_id, _for_run(run_id, rows))
