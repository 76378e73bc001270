"""`collsweep salvage`: copy what is still readable from a damaged store into a new one.

A store cut short (a full disk, a partial copy) still opens, but reading the lost blocks fails,
so every command refuses it. Salvage reads each table whole or, when that fails, run by run, and
writes the rows it could read into a fresh store of the same schema. No MPI here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd

from runners.store.migrations import SCHEMA_VERSION
from runners.store.reports import EXPORTED_TABLES
from runners.store.schema import ensure_current
from runners.store.storefile import StoreError

TABLES = ("calibrations", *EXPORTED_TABLES)  # every table that holds results


@dataclass(frozen=True)
class Salvaged:
    """What one table gave up: rows copied, and the runs whose rows could not be read."""

    table: str
    rows: int
    lost_runs: tuple[str, ...]


def _read_table(
    con: duckdb.DuckDBPyConnection, table: str, runs: list[str]
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The table's readable rows as a frame, and the runs lost (all rows, or run by run)."""
    try:
        return con.execute(f"SELECT * FROM {table}").df(), ()
    except duckdb.Error:
        if table == "calibrations" or not runs:
            return pd.DataFrame(), ("(all)",)
    frames, lost = [], []
    for run_id in runs:
        try:
            frames.append(con.execute(f"SELECT * FROM {table} WHERE run_id = ?", [run_id]).df())
        except duckdb.Error:
            lost.append(run_id)
    return (pd.concat(frames) if frames else pd.DataFrame()), tuple(lost)


def salvage(source: Path, target: Path) -> list[Salvaged]:
    """Copy every readable row of ``source`` into the new store ``target``."""
    if target.exists():
        raise StoreError(f"{target} exists; salvage writes a new store only")
    try:
        con = duckdb.connect(str(source), read_only=True)
    except duckdb.Error as exc:
        raise StoreError(f"{source} cannot be opened at all: {exc}") from None
    try:
        version = con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0]
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"{source} has schema {version}; this collsweep salvages schema "
                f"{SCHEMA_VERSION} only"
            )
        runs = [r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()]
        read = {t: _read_table(con, t, runs) for t in TABLES}
    except duckdb.Error as exc:
        raise StoreError(f"{source} is too damaged to salvage: {exc}") from None
    finally:
        con.close()
    ensure_current(target)
    out = duckdb.connect(str(target))
    try:
        for table, (frame, _) in read.items():
            if len(frame):
                out.register("salvaged", frame)
                out.execute(f"INSERT INTO {table} SELECT * FROM salvaged")
                out.unregister("salvaged")
    finally:
        out.close()
    return [Salvaged(t, len(frame), lost) for t, (frame, lost) in read.items()]
