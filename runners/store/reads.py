"""Reading the store: read-only connections, bounded queries and the named reads of runs,
calibrations and winners (a run's points: runners.store.point_reads).

Readers never create or migrate a file; a missing, foreign, older- or newer-schema store raises
StoreError. Every named read takes a Source: the store's path, or a connection already open on it
(a dashboard page shares one per script run). No MPI here.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import pandas as pd

from runners.domain.model.calibration_id import CalibrationId, CalibrationKind
from runners.store.records import CalibrationRecord, RunRecord
from runners.store.schema import Connection
from runners.store.store import Store, open_readonly
from runners.store.storefile import QUERY_TIMEOUT_S, bounded_query

# --- reading --------------------------------------------------------------------------------


def query(
    path: Source,
    sql: str,
    params: Sequence[Any] | dict[str, Any] | None = None,
    *,
    timeout: float | None = None,
    time_limit: float = QUERY_TIMEOUT_S,
    max_rows: int | None = None,
) -> pd.DataFrame:
    """Run read-only SQL against the store and return the result as a DataFrame.

    ``timeout`` bounds the wait for the file's lock, ``time_limit`` the query itself, and
    ``max_rows`` the rows fetched (a cut result has ``attrs['truncated']``); memory is bounded
    by the read connections' limit. Failing SQL and exceeded limits raise QueryError.
    """
    with reading(path, timeout=timeout) as con:
        return bounded_query(con, sql, params, timeout_s=time_limit, max_rows=max_rows)


Source = Store | Path | str | Connection  # an open Store, a store's path, or a connection


@contextlib.contextmanager
def reading(source: Source, *, timeout: float | None = None) -> Iterator[Connection]:
    """A connection to read with: ``source`` itself when it is one, the Store's (Store.reading),
    else a read-only one to that path for the block (open_readonly; ``timeout`` bounds the
    wait for its lock)."""
    if isinstance(source, Connection):
        yield source
        return
    if isinstance(source, Store):
        with source.reading() as con:
            yield con
        return
    with open_readonly(source, timeout=timeout) as con:
        yield con


def read_frame(
    source: Source, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
) -> pd.DataFrame:
    """The rows of a named read as a DataFrame, bounded in time like query()."""
    with reading(source) as con:
        return bounded_query(con, sql, params)


def _lookup(
    source: Source, sql: str, params: Sequence[Any] | dict[str, Any]
) -> list[dict[str, Any]]:
    """Rows of a read-only lookup as dicts, JSON columns decoded; [] if the store is missing."""
    if isinstance(source, str | Path) and not Path(source).exists():
        return []
    with reading(source) as con:
        cursor = con.execute(sql, params)
        names = [d[0] for d in cursor.description]
        json_cols = {d[0] for d in cursor.description if str(d[1]).upper() == "JSON"}
        rows = cursor.fetchall()
    return [_decoded(dict(zip(names, row, strict=True)), json_cols) for row in rows]


def _decoded(row: dict[str, Any], json_cols: set[str]) -> dict[str, Any]:
    """The row with its JSON columns parsed into Python objects."""
    return {k: json.loads(v) if k in json_cols and v is not None else v for k, v in row.items()}


def get_run(source: Source, run_id: str) -> RunRecord | None:
    """The runs row for ``run_id`` (its JSON columns decoded), or None if absent."""
    rows = _lookup(source, "SELECT * FROM runs WHERE run_id = ?", [run_id])
    return cast(RunRecord, rows[0]) if rows else None


def latest_calibration(
    path: Source,
    host: str | None = None,
    *,
    mpi_library: str | None = None,
    source: str | None = None,
) -> CalibrationRecord | None:
    """The newest calibration (its JSON columns decoded), or None.

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
    return cast(CalibrationRecord, rows[0]) if rows else None


def get_calibration(source: Source, calibration_id: str) -> CalibrationRecord | None:
    """One calibrations row (its JSON columns decoded), or None if absent."""
    rows = _lookup(source, "SELECT * FROM calibrations WHERE calibration_id = ?", [calibration_id])
    return cast(CalibrationRecord, rows[0]) if rows else None


def calibrations_of_source(store: Source, source: str) -> list[CalibrationRecord]:
    """Every calibrations row of one source (e.g. a run's launches), JSON decoded, oldest first."""
    return _lookup(  # type: ignore[return-value]
        store,
        "SELECT * FROM calibrations WHERE source = ? ORDER BY created_at, calibration_id",
        [source],
    )


def calibration_order(path: Source, run_id: str) -> list[str]:
    """A run's calibrations, most direct first: its launches' own, the one made before it,
    the one fitted to it (ids; those that may not exist included)."""
    run = (_lookup(path, "SELECT calibration_id FROM runs WHERE run_id = ?", [run_id]) or [{}])[0]
    launches = CalibrationId(CalibrationKind.LAUNCHES, run_id)
    fitted = CalibrationId(CalibrationKind.FITTED, run_id)
    calibrations = [str(launches), run.get("calibration_id"), str(fitted)]
    return [c for c in calibrations if c]


def provisional_reasons(source: Source, run_id: str) -> list[str]:
    """Why the run's winners are provisional: each distinct reason of its provisional winners
    rows, sorted ([] when none is)."""
    rows = _lookup(
        source,
        "SELECT DISTINCT provisional_reason FROM winners WHERE run_id = ? "
        "AND coalesce(provisional, false) AND provisional_reason <> '' ORDER BY ALL",
        [run_id],
    )
    return [row["provisional_reason"] for row in rows]


def runs_called(source: Source, reference: str) -> list[str]:
    """The ids of the runs ``reference`` names: the run with that id, else every run with that
    name, oldest first; [] when the store is missing or none matches."""
    rows = _lookup(
        source,
        "SELECT run_id FROM runs WHERE run_id = $ref OR (name = $ref AND NOT EXISTS "
        "(SELECT 1 FROM runs WHERE run_id = $ref)) ORDER BY started_at",
        {"ref": reference},
    )
    return [row["run_id"] for row in rows]
