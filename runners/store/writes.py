"""Writing the store: rows checked and typed, each call one transaction.

This is the only module that writes results; rows are dicts keyed by column name. No MPI here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from runners.domain.status import RunStatus
from runners.store.columns import column_array, column_value
from runners.store.schema import (
    ASSUMPTION_STATES,
    CROSSOVER_KINDS,
    POINT_STATUSES,
    RUN_STATUSES,
    SCHEMA_VERSION,
    Connection,
    _missing,
    park_inside,
)
from runners.store.store import Target, writing
from runners.store.storefile import StoreError

# --- writing: rows to typed frames -------------------------------------------------------------


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
    frame = pd.DataFrame(
        {c: column_array([row.get(c) for row in rows], columns[c][0]) for c in used}
    )
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


def create_run(path: Target, run: dict[str, Any]) -> None:
    """Insert a runs row; keys are column names. status defaults to 'running', started_at to now.

    Unknown keys raise ValueError; an existing run_id raises StoreError.
    """
    row = {"status": RunStatus.RUNNING, "started_at": _now(), **run}
    _check_choice("run status", row["status"], RUN_STATUSES)
    with writing(path) as con:
        if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [row.get("run_id")]).fetchall():
            raise StoreError(f"run {row['run_id']!r} already exists in {path}")
        _insert(con, "runs", [row])


def update_run(path: Target, run_id: str, fields: dict[str, Any]) -> None:
    """Set some columns of an existing run (e.g. provenance learnt later, or resuming).

    Keys are runs column names other than run_id; unknown keys raise ValueError, an unknown
    run raises StoreError. JSON and TIMESTAMP values are converted as on insert.
    """
    _check_run_status(fields)
    if not Path(path).exists():
        raise _missing(Path(path))
    if not fields:
        return
    with writing(path) as con:
        _update_run(con, path, run_id, fields)


def _check_run_status(fields: dict[str, Any]) -> None:
    """Raise ValueError for a run status the store does not know."""
    if "status" in fields:
        _check_choice("run status", fields["status"], RUN_STATUSES)


def _update_run(con: Connection, path: Target, run_id: str, fields: dict[str, Any]) -> None:
    """UPDATE one runs row on an open connection (see update_run; fields checked already)."""
    columns = _table_columns(con, "runs")
    unknown = set(fields) - (columns.keys() - {"run_id"})
    if unknown:
        raise ValueError(f"cannot update runs column(s): {', '.join(sorted(unknown))}")
    values = [column_value(value, columns[name][0]) for name, value in fields.items()]
    assignments = ", ".join(f'"{name}" = ?' for name in fields)
    changed = con.execute(
        f"UPDATE runs SET {assignments} WHERE run_id = ?", [*values, run_id]
    ).fetchall()
    if changed != [(1,)]:
        raise StoreError(f"no run {run_id!r} in {path}")


def finish_run(path: Target, run_id: str, status: RunStatus, reason: str = "") -> None:
    """Set a run's final status, status_reason and finished_at (now)."""
    update_run(path, run_id, {"status": status, "status_reason": reason, "finished_at": _now()})


def add_points(path: Target, points: list[dict[str, Any]], samples: list[dict[str, Any]]) -> None:
    """Store points and their samples, replacing any stored under the same point_ids.

    Every sample must belong to one of ``points``; its run_id defaults to its point's. A point
    written again (a resumed run) replaces the old row and all of its old samples, so nothing
    is duplicated. One transaction, batched: 10^5 samples take a fraction of a second.
    """
    _check_points(points, samples)
    if not points:
        return
    samples = _with_run_ids(points, samples)
    with writing(path) as con:
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
    path: Target,
    points: list[dict[str, Any]],
    samples: list[dict[str, Any]],
    run_updates: dict[str, dict[str, Any]],
    *,
    timeout: float | None = None,
    probes: Sequence[dict[str, Any]] = (),
    calibrations: Sequence[dict[str, Any]] = (),
) -> None:
    """Store points with their samples, machine-state probes, launch calibrations, and set
    columns of runs, all in one transaction.

    ``run_updates`` maps run_id -> columns to set (as update_run). Points replace stored ones
    with the same point_id (as add_points), so writing a batch twice changes nothing.
    StoreBusy when another process holds the file for ``timeout`` s.
    """
    _check_points(points, samples)
    for fields in run_updates.values():
        _check_run_status(fields)
    samples = _with_run_ids(points, samples)
    with writing(path, timeout) as con:
        if points:
            _replace_points(con, points, samples)
        for probe in probes:
            _replace_probe(con, probe)
        for cal in calibrations:
            _replace_calibration(con, cal)
        for run_id, fields in run_updates.items():
            _update_run(con, path, run_id, fields)
        if points:
            park_inside(con, "write-points")


def _replace_probe(con: Connection, probe: dict[str, Any]) -> None:
    """Store one probe, replacing the one of the same run, job, launch and moment."""
    con.execute(
        "DELETE FROM probes WHERE run_id = ? AND job = ? AND launch = ? AND moment = ?",
        [probe["run_id"], probe["job"], probe["launch"], probe["moment"]],
    )
    _insert(con, "probes", [probe])


def add_calibration(path: Target, cal: dict[str, Any]) -> None:
    """Store a calibration (replacing one with the same calibration_id); created_at defaults to now.

    breakpoints, segments, gammas and details may be Python lists/dicts.
    """
    with writing(path) as con:
        _replace_calibration(con, cal)


def _replace_calibration(con: Connection, cal: dict[str, Any]) -> None:
    """Store one calibration, replacing the one with its calibration_id; created_at defaults
    to now."""
    con.execute("DELETE FROM calibrations WHERE calibration_id = ?", [cal.get("calibration_id")])
    _insert(con, "calibrations", [{"created_at": _now(), **cal}])


def add_predictions(path: Target, rows: list[dict[str, Any]]) -> None:
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
    with writing(path) as con:
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


def _replace_run_rows(path: Target, table: str, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Delete every ``table`` row of the run and insert ``rows`` instead, in one transaction."""
    replace_analysis(path, run_id, {table: rows})


ANALYSIS_TABLES = (
    "predictions",
    "winners",
    "against_default",
    "crossovers",
    "model_accuracy",
    "best_choices",
    "agreement",
    "assumptions",
    "cell_inferences",
)


def replace_analysis(path: Target, run_id: str, tables: dict[str, list[dict[str, Any]]]) -> None:
    """Replace a run's rows of each analysis table given (ANALYSIS_TABLES) in one transaction:
    afterwards every one holds the rows given, or, if anything fails (a stop signal too),
    none has changed. Each table's rows are checked first (run ids, kinds, states, keys)."""
    unknown = set(tables) - set(ANALYSIS_TABLES)
    if unknown:
        raise ValueError(f"not analysis tables: {', '.join(sorted(unknown))}")
    checked = {table: _analysis_rows(table, run_id, rows) for table, rows in tables.items()}
    with writing(path) as con:
        for table, rows in checked.items():
            con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            _insert(con, table, rows)
        park_inside(con, "write-analysis")


def _analysis_rows(table: str, run_id: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A table's rows for the run, checked: ValueError for a bad kind, state or repeated key."""
    rows = _for_run(run_id, rows)
    if table == "assumptions":  # run-level rows have point_id None
        for row in rows:
            _check_choice("assumption state", row.get("state"), ASSUMPTION_STATES)
    elif table == "crossovers":  # kind 'measured' or 'predicted'
        for row in rows:
            _check_choice("crossover kind", row.get("kind"), CROSSOVER_KINDS)
    elif table == "predictions":  # whatever calibrations they used
        keys = ((r.get("point_id"), r.get("calibration_id")) for r in rows)
        _unique("(point_id, calibration_id)", keys)
    return rows


def replace_assumptions(path: Target, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's assumption checks (run-level rows have point_id None)."""
    _replace_run_rows(path, "assumptions", run_id, rows)


def replace_crossovers(path: Target, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's crossovers (kind 'measured' or 'predicted')."""
    _replace_run_rows(path, "crossovers", run_id, rows)


def replace_predictions(path: Target, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's predictions, whatever calibrations they used."""
    _replace_run_rows(path, "predictions", run_id, rows)


def replace_best_choices(path: Target, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's best_choices rows (measured and predicted best per point)."""
    _replace_run_rows(path, "best_choices", run_id, rows)


def replace_winners(path: Target, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's winners rows (the fastest two of each cell, decided or a tie)."""
    _replace_run_rows(path, "winners", run_id, rows)


def replace_agreement(path: Target, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's agreement rows (how often the model picks the measured best)."""
    _replace_run_rows(path, "agreement", run_id, rows)


def replace_against_default(path: Target, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's against_default rows (library algorithms against its default)."""
    _replace_run_rows(path, "against_default", run_id, rows)


def replace_model_accuracy(path: Target, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Replace all of a run's model_accuracy rows (each variant's errors, winners, crossovers)."""
    _replace_run_rows(path, "model_accuracy", run_id, rows)
