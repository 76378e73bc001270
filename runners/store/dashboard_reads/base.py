"""Plumbing of the dashboard's data loaders: the shared read connection, SQL to frames, what
the store holds (catalog), and the Scope a view covers. No Streamlit and no MPI here."""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from runners import store
from runners.domain.model.calibration_id import own_calibrations
from runners.domain.status import PointStatus

# The calibration a view names and every other library's own of the same name (`<id>@openmpi`,
# `<id>@impi`: calibration_id.own_calibrations, bound as $own_calibrations): each library's
# points are predicted with its own ranks' calibration, so one choice of calibration draws
# every library's predictions.
OWN_CALIBRATIONS = "IN (SELECT unnest($own_calibrations))"

StorePath = Path | str
Connection = duckdb.DuckDBPyConnection


# --- plumbing ----------------------------------------------------------------------------------

_SHARED: contextvars.ContextVar[tuple[str, store.Store] | None] = contextvars.ContextVar(
    "collsweep_shared_connection", default=None
)


@contextlib.contextmanager
def reading(path: StorePath) -> Iterator[None]:
    """Let every query on ``path`` inside the block share one read-only connection.

    Opening the store costs tens of milliseconds, so a page opens it once per script run
    (and closes it at the end of the run, a fraction of a second later) instead of once per
    query. Outside such a block each function opens and closes its own connection.
    """
    with store.Store.open(path) as db:
        token = _SHARED.set((str(path), db))
        try:
            yield
        finally:
            _SHARED.reset(token)


@contextlib.contextmanager
def _open(path: StorePath) -> Iterator[Connection]:
    """The shared connection for ``path`` when inside reading(path), else a new one."""
    shared = _SHARED.get()
    if shared is not None and shared[0] == str(path):
        with shared[1].reading() as con:
            yield con
        return
    with store.open_readonly(path) as con:
        yield con


def _df(con: Connection, sql: str, values: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Run ``sql`` with the named ``$parameters`` it uses taken from ``values``."""
    used = set(re.findall(r"\$(\w+)", sql))
    params = {k: v for k, v in (values or {}).items() if k in used}
    return con.execute(sql, params).df()


@dataclass(frozen=True)
class Catalog:
    """The store's tables and their columns, to use later schema additions when present."""

    columns: dict[str, frozenset[str]]

    def has(self, table: str, column: str | None = None) -> bool:
        """Whether ``table`` (and, if given, its ``column``) exists."""
        cols = self.columns.get(table)
        return cols is not None and (column is None or column in cols)


def _catalog(con: Connection) -> Catalog:
    """Read the catalog on an open connection."""
    rows = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'main'"
    ).fetchall()
    columns: dict[str, set[str]] = {}
    for table, column in rows:
        columns.setdefault(table, set()).add(column)
    return Catalog({t: frozenset(c) for t, c in columns.items()})


def catalog(path: StorePath) -> Catalog:
    """The store's tables and columns."""
    with _open(path) as con:
        return _catalog(con)


@dataclass(frozen=True)
class Scope:
    """Which of a run's points a view covers; None means all."""

    run_id: str
    ranks: int | None = None
    dtype: str | None = None
    op: str | None = None
    algorithms: tuple[str, ...] | None = None
    calibration_id: str | None = None
    collective: str = "allreduce"

    def words(self) -> str:
        """What the scope covers, in words ('p=2 float32 sum', 'float32 sum, every group
        size', 'the whole run'); algorithms are named elsewhere on a page."""
        head = "" if self.collective == "allreduce" else self.collective
        what = " ".join(x for x in (head, self.dtype, self.op) if x and x != "none")
        if self.ranks is not None:
            return f"p={self.ranks} {what}".strip()
        return f"{what}, every group size" if what else "the whole run"

    def params(self) -> dict[str, Any]:
        """The scope as SQL parameters."""
        algs = list(self.algorithms) if self.algorithms is not None else None
        return {
            "run": self.run_id,
            "ranks": self.ranks,
            "dtype": self.dtype,
            "op": self.op,
            "algorithms": algs,
            "collective": self.collective,
            "ok": PointStatus.OK,
        } | calibration_params(self.calibration_id)


def calibration_params(calibration_id: str | None) -> dict[str, Any]:
    """A view's calibration as SQL parameters: $cal, and $own_calibrations (OWN_CALIBRATIONS)."""
    return {"cal": calibration_id, "own_calibrations": own_calibrations(calibration_id)}
