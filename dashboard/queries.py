"""The dashboard's data: aggregating SQL over the results store, one loader per page view.

Every public function takes the store's path, opens one short read-only connection
(runners.store.open_readonly: no writes, no file access from SQL) and returns small
DataFrames: the percentiles come from `points`, anything from `samples` is aggregated in
DuckDB. No Streamlit and no MPI here. Tables are those of docs/schema.md; columns or tables
added by later schema versions (e.g. a calibration_id on crossovers, the `agreement` table)
are used when present and ignored when absent. A missing, corrupt, older or newer store
raises store.StoreError; failing SQL raises store.QueryError.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from runners import store
from runners.store import storefile

StorePath = Path | str
Connection = duckdb.DuckDBPyConnection

SCHEMA_DOC = Path(__file__).resolve().parents[1] / "docs" / "schema.md"
READ_STATEMENTS = frozenset({"SELECT", "EXPLAIN", "PRAGMA", "CALL"})
USER_SQL_TIMEOUT_S = 10.0
USER_SQL_MAX_ROWS = 10_000
JSON_COLUMNS = ("breakpoints", "segments", "gammas", "details")


# --- plumbing ----------------------------------------------------------------------------------

_SHARED: contextvars.ContextVar[tuple[str, Connection] | None] = contextvars.ContextVar(
    "collsweep_shared_connection", default=None
)


@contextlib.contextmanager
def reading(path: StorePath) -> Iterator[None]:
    """Let every query on ``path`` inside the block share one read-only connection.

    Opening the store costs tens of milliseconds, so a page opens it once per script run
    (and closes it at the end of the run, a fraction of a second later) instead of once per
    query. Outside such a block each function opens and closes its own connection.
    """
    with store.open_readonly(path) as con:
        token = _SHARED.set((str(path), con))
        try:
            yield
        finally:
            _SHARED.reset(token)


@contextlib.contextmanager
def _open(path: StorePath) -> Iterator[Connection]:
    """The shared connection for ``path`` when inside reading(path), else a new one."""
    shared = _SHARED.get()
    if shared is not None and shared[0] == str(path):
        yield shared[1]
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


# --- the store as a whole ----------------------------------------------------------------------


@dataclass(frozen=True)
class Overview:
    """How much the store holds."""

    schema_version: int
    runs: int
    points: int
    samples: int

    @property
    def empty(self) -> bool:
        """True when no run has been recorded yet."""
        return self.runs == 0


def overview(path: StorePath) -> Overview:
    """Schema version and row counts of runs, points and samples."""
    with _open(path) as con:
        row = con.execute(
            "SELECT (SELECT max(version) FROM schema_version), (SELECT count(*) FROM runs), "
            "(SELECT count(*) FROM points), (SELECT count(*) FROM samples)"
        ).fetchone()
    return Overview(*(int(v or 0) for v in row))


RUNS_SQL = """
WITH pts AS (
    SELECT run_id,
           list_sort(list(DISTINCT ranks)) AS ranks,
           string_agg(DISTINCT dtype, ', ' ORDER BY dtype) AS dtypes,
           string_agg(DISTINCT op, ', ' ORDER BY op) AS ops,
           count(DISTINCT algorithm) AS algorithms,
           count(*) AS points,
           count(*) FILTER (WHERE status = 'ok') AS ok,
           count(*) FILTER (WHERE status IN ('failed', 'timeout')) AS failed,
           count(*) FILTER (WHERE status = 'skipped') AS skipped,
           bool_or(oversubscribed) AS oversubscribed
    FROM points GROUP BY run_id
), smp AS (
    SELECT run_id, count(*) AS samples FROM samples GROUP BY run_id
)
SELECT r.run_id, r.status, r.started_at, r.finished_at,
       date_diff('second', r.started_at, r.finished_at) AS duration_s,
       r.host, r.mpi_version AS library, r.cpu_model, r.physical_cores,
       array_to_string(p.ranks, ', ') AS ranks, p.dtypes, p.ops, p.algorithms,
       coalesce(p.points, 0) AS points, coalesce(p.ok, 0) AS ok,
       coalesce(p.failed, 0) AS failed, coalesce(p.skipped, 0) AS skipped,
       coalesce(s.samples, 0) AS samples, coalesce(p.oversubscribed, false) AS oversubscribed,
       r.thread_level, r.code_version, r.mpi4py_version, r.numpy_version, r.python_version,
       r.calibration_id, coalesce(r.status_reason, '') AS status_reason, r.command_line
FROM runs r LEFT JOIN pts p USING (run_id) LEFT JOIN smp s USING (run_id)
ORDER BY r.started_at DESC NULLS LAST, r.run_id DESC
"""


def runs_table(path: StorePath) -> pd.DataFrame:
    """One row per run, newest first: status, host, library, grid, counts and provenance."""
    with _open(path) as con:
        return _df(con, RUNS_SQL)


def run_details(path: StorePath, run_ids: list[str]) -> pd.DataFrame:
    """The full runs rows (every provenance column) of ``run_ids``, in that order."""
    with _open(path) as con:
        frame = _df(con, "SELECT * FROM runs WHERE list_contains($ids, run_id)", {"ids": run_ids})
    order = {run_id: i for i, run_id in enumerate(run_ids)}
    return frame.sort_values("run_id", key=lambda s: s.map(order)).reset_index(drop=True)


def provenance_diff(path: StorePath, run_a: str, run_b: str) -> pd.DataFrame:
    """The provenance columns whose values differ between two runs: field, run_a, run_b."""
    details = run_details(path, [run_a, run_b])
    if len(details) < 2:
        return pd.DataFrame(columns=["field", run_a, run_b])
    skip = {"run_id", "started_at", "finished_at"}
    rows = [
        {"field": col, run_a: str(details.at[0, col]), run_b: str(details.at[1, col])}
        for col in details.columns
        if col not in skip and str(details.at[0, col]) != str(details.at[1, col])
    ]
    return pd.DataFrame(rows, columns=["field", run_a, run_b])


def run_grid(path: StorePath, run_id: str) -> pd.DataFrame:
    """The run's (algorithm, ranks, dtype, op) combinations with point counts, for the pickers."""
    with _open(path) as con:
        return _df(
            con,
            "SELECT algorithm, ranks, dtype, op, count(*) AS points, "
            "count(*) FILTER (WHERE status = 'ok') AS ok "
            "FROM points WHERE run_id = $run GROUP BY ALL ORDER BY ranks, dtype, op, algorithm",
            {"run": run_id},
        )


def prediction_calibrations(path: StorePath, run_id: str) -> list[str]:
    """Calibrations with predictions for the run: the run's own first, then newest first."""
    with _open(path) as con:
        frame = _df(
            con,
            "SELECT p.calibration_id FROM predictions p "
            "LEFT JOIN calibrations k USING (calibration_id) "
            "LEFT JOIN runs r ON r.run_id = p.run_id "
            "WHERE p.run_id = $run GROUP BY p.calibration_id "
            "ORDER BY bool_or(p.calibration_id = r.calibration_id) DESC NULLS LAST, "
            "max(k.created_at) DESC NULLS LAST, p.calibration_id",
            {"run": run_id},
        )
    return frame["calibration_id"].tolist()


# --- assumptions -------------------------------------------------------------------------------


def _checks_cte(cat: Catalog) -> str:
    """CTEs `pts` (the run's points), `checks` and `scoped`.

    `checks`: the recorded assumptions plus, for a run whose analysis recorded none of them,
    checks derived from the points themselves under the analysis's names
    (runners.domain.assumptions): not_oversubscribed (ranks <= physical cores) and
    power_of_two (p a power of two, or a ring schedule, which works for any p). `scoped`: the
    checks that apply to individual points, i.e. without the run-level summary row of a check
    that also has per-point rows.
    Parameters: $run and $cal (the calibration, which filters a calibration_id column).
    """
    cal_filter = (
        "AND (calibration_id IS NULL OR $cal IS NULL OR calibration_id = $cal)"
        if cat.has("assumptions", "calibration_id")
        else ""
    )
    return f"""
    pts AS (
        SELECT point_id, algorithm, ranks, bytes, dtype, op, status, oversubscribed
        FROM points WHERE run_id = $run
    ), recorded AS (
        SELECT point_id, name, state, detail FROM assumptions
        WHERE run_id = $run {cal_filter}
    ), derived AS (
        SELECT point_id, 'not_oversubscribed' AS name,
               CASE WHEN oversubscribed THEN 'violated'
                    WHEN oversubscribed IS NULL THEN 'unknown' ELSE 'holds' END AS state,
               ranks || ' ranks on ' || coalesce(CAST(r.physical_cores AS VARCHAR), '?')
                   || ' physical cores' AS detail
        FROM pts, (SELECT physical_cores FROM runs WHERE run_id = $run) r
        WHERE status = 'ok'
        UNION ALL
        SELECT point_id, 'power_of_two',
               CASE WHEN (ranks & (ranks - 1)) = 0 OR algorithm IN ('ring', 'mpi:ring')
                    THEN 'holds' ELSE 'violated' END,
               'p = ' || ranks || CASE WHEN (ranks & (ranks - 1)) = 0 THEN ''
                   WHEN algorithm IN ('ring', 'mpi:ring') THEN ': the ring works for any p'
                   ELSE ': not a power of two (folded or unbalanced schedule)' END
        FROM pts WHERE status = 'ok'
    ), checks AS (
        SELECT *, 'recorded' AS source FROM recorded
        UNION ALL
        SELECT *, 'derived' AS source FROM derived
        WHERE name NOT IN (SELECT name FROM recorded)
    ), scoped AS (
        SELECT * FROM checks
        WHERE point_id IS NOT NULL
           OR name NOT IN (SELECT name FROM checks WHERE point_id IS NOT NULL)
    )"""


_SUMMARY_SQL = """
SELECT c.name, c.state, count(*) AS checks, count(c.point_id) AS points,
       any_value(c.detail ORDER BY c.point_id NULLS FIRST) AS detail,
       any_value(c.source) AS source
FROM scoped c LEFT JOIN pts p USING (point_id)
WHERE c.point_id IS NULL OR (
    ($ranks IS NULL OR p.ranks = $ranks) AND ($dtype IS NULL OR p.dtype = $dtype)
    AND ($op IS NULL OR p.op = $op)
    AND ($algorithms IS NULL OR list_contains($algorithms, p.algorithm)))
GROUP BY ALL ORDER BY c.name, c.state
"""


@dataclass(frozen=True)
class Scope:
    """Which of a run's points a view covers; None means all."""

    run_id: str
    ranks: int | None = None
    dtype: str | None = None
    op: str | None = None
    algorithms: tuple[str, ...] | None = None
    calibration_id: str | None = None

    def params(self) -> dict[str, Any]:
        """The scope as SQL parameters."""
        algs = list(self.algorithms) if self.algorithms is not None else None
        return {
            "run": self.run_id,
            "ranks": self.ranks,
            "dtype": self.dtype,
            "op": self.op,
            "algorithms": algs,
            "cal": self.calibration_id,
        }


def _summary(con: Connection, cat: Catalog, scope: Scope) -> pd.DataFrame:
    """Assumption checks within the scope, per (name, state), with counts and an example."""
    return _df(con, f"WITH {_checks_cte(cat)} {_SUMMARY_SQL}", scope.params())


def assumption_summary(path: StorePath, scope: Scope) -> pd.DataFrame:
    """Per (name, state): how many checks and points in ``scope``, with one detail."""
    with _open(path) as con:
        return _summary(con, _catalog(con), scope)


@dataclass(frozen=True)
class AssumptionData:
    """A run's checks one per row (with the point's grid) and their summary."""

    checks: pd.DataFrame
    summary: pd.DataFrame


def assumptions_data(path: StorePath, run_id: str, calibration_id: str | None = None):
    """Every check of the run (recorded or derived) and the per-name summary."""
    scope = Scope(run_id, calibration_id=calibration_id)
    with _open(path) as con:
        cat = _catalog(con)
        checks = _df(
            con,
            f"WITH {_checks_cte(cat)} "
            "SELECT c.name, c.state, c.source, p.algorithm, p.ranks, p.bytes, p.dtype, p.op, "
            "c.detail, c.point_id FROM checks c LEFT JOIN pts p USING (point_id) "
            "ORDER BY CASE c.state WHEN 'violated' THEN 0 WHEN 'unknown' THEN 1 ELSE 2 END, "
            "c.name, p.ranks NULLS FIRST, p.bytes, p.algorithm",
            scope.params(),
        )
        summary = _summary(con, cat, scope)
    return AssumptionData(checks, summary)


_OVERVIEW_SQL = """
SELECT a.run_id, a.name,
       count(*) FILTER (WHERE a.state = 'violated') AS violated,
       count(*) FILTER (WHERE a.state = 'unknown') AS unknown,
       count(*) FILTER (WHERE a.state = 'holds') AS holds
FROM assumptions a LEFT JOIN runs r USING (run_id)
GROUP BY ALL ORDER BY max(r.started_at) DESC NULLS LAST, a.run_id, a.name
"""


def assumption_overview(path: StorePath) -> pd.DataFrame:
    """Every run's recorded checks: per (run, assumption), how many hold, broke, are unknown."""
    with _open(path) as con:
        return _df(con, _OVERVIEW_SQL)


# --- curves ------------------------------------------------------------------------------------


_CURVES_SQL = """
, view AS (
    SELECT * FROM pts WHERE ranks = $ranks AND dtype = $dtype AND op = $op
), flags AS (
    SELECT v.point_id,
           string_agg(DISTINCT c.name, ', ' ORDER BY c.name)
               FILTER (WHERE c.state = 'violated') AS violated,
           string_agg(DISTINCT c.name, ', ' ORDER BY c.name)
               FILTER (WHERE c.state = 'unknown') AS unknown
    FROM view v JOIN scoped c ON c.point_id = v.point_id
    GROUP BY v.point_id
)
SELECT p.point_id, p.algorithm, p.ranks, p.bytes, p.dtype, p.op, p.status, p.reason,
       p.oversubscribed, p.iterations, p.median_s, p.p5_s, p.p95_s, p.ci_low_s, p.ci_high_s,
       p.ci_rel_halfwidth, p.ci_target_met,
       pr.model, pr.predicted_s, pr.latency_s, pr.bandwidth_s, pr.reduction_s,
       coalesce(f.violated, '') AS violated, coalesce(f.unknown, '') AS unknown
FROM points p
LEFT JOIN predictions pr ON pr.point_id = p.point_id AND pr.calibration_id = $cal
LEFT JOIN flags f ON f.point_id = p.point_id
WHERE p.run_id = $run AND p.ranks = $ranks AND p.dtype = $dtype AND p.op = $op
  AND ($algorithms IS NULL OR list_contains($algorithms, p.algorithm))
ORDER BY p.algorithm, p.bytes
"""


@dataclass(frozen=True)
class CurvesData:
    """One (run, ranks, dtype, op) view: points with predictions, crossovers, checks."""

    points: pd.DataFrame
    crossovers: pd.DataFrame
    summary: pd.DataFrame


def _crossovers(con: Connection, cat: Catalog, scope: Scope) -> pd.DataFrame:
    """The run's crossovers in scope; predicted ones of the chosen calibration when recorded."""
    recorded = cat.has("crossovers", "calibration_id")
    cal_filter = (
        "AND (kind = 'measured' OR calibration_id IS NULL OR $cal IS NULL OR calibration_id = $cal)"
        if recorded
        else ""
    )
    cal_column = "calibration_id" if recorded else "CAST(NULL AS VARCHAR) AS calibration_id"
    return _df(
        con,
        "SELECT ranks, dtype, op, algorithm_a, algorithm_b, kind, bytes, low_bytes, high_bytes, "
        f"high_bytes / nullif(low_bytes, 0) AS high_over_low, {cal_column}, detail "
        "FROM crossovers "
        "WHERE run_id = $run AND ($ranks IS NULL OR ranks = $ranks) "
        "AND ($dtype IS NULL OR dtype = $dtype) AND ($op IS NULL OR op = $op) "
        "AND ($algorithms IS NULL OR (list_contains($algorithms, algorithm_a) "
        "AND list_contains($algorithms, algorithm_b))) "
        f"{cal_filter} ORDER BY ranks, dtype, op, bytes, kind",
        scope.params(),
    )


def _fastest_by_size(points: pd.DataFrame, column: str) -> pd.Series:
    """Size -> the algorithm with the smallest ``column`` there, sizes sorted.

    For predictions the autotuned 'mpi' is left out (its lower bound is no contender) and ties
    between algorithms sharing a model go to collsweep's own implementation.
    """
    usable = points[points["status"].eq("ok") & points[column].gt(0)]
    usable = usable.assign(library=usable["algorithm"].str.contains(":", regex=False))
    order = [column, "algorithm"]
    if column == "predicted_s":  # shared models tie: collsweep's own code, as the pick
        usable = usable[usable["model"] != "lower_bound"]
        order = [column, "library", "algorithm"]
    first = usable.sort_values(order).groupby("bytes").head(1)
    return first.set_index(first["bytes"].astype(float))["algorithm"].sort_index()


def _on_envelope(fastest: pd.Series, row: Any) -> bool:
    """Whether algorithm_a is the fastest at the size just below the crossover (or at it) and
    algorithm_b at the size just above."""
    sizes = fastest.index.to_numpy()
    below = np.searchsorted(sizes, row.bytes, side="right") - 1
    above = np.searchsorted(sizes, row.bytes, side="left")
    if below < 0 or above >= len(sizes):
        return False
    return (fastest.iloc[below], fastest.iloc[above]) == (row.algorithm_a, row.algorithm_b)


def envelope_crossovers(points: pd.DataFrame, crossovers: pd.DataFrame) -> pd.DataFrame:
    """The crossovers where the fastest of the shown algorithms changes.

    A crossover is kept when algorithm_a is the fastest at the measured size just below it and
    algorithm_b at the size just above (medians for measured crossovers, predictions for
    predicted ones). Of all pairwise crossovers, these are the ones that change the choice.
    """
    if crossovers.empty or points.empty:
        return crossovers
    fastest = {
        "measured": _fastest_by_size(points, "median_s"),
        "predicted": _fastest_by_size(points, "predicted_s"),
    }
    keep = [_on_envelope(fastest[row.kind], row) for row in crossovers.itertuples(index=False)]
    return crossovers[keep].reset_index(drop=True)


def curves_data(path: StorePath, scope: Scope) -> CurvesData:
    """Points (with predictions of scope.calibration_id and violated checks), crossovers, checks.

    ``scope`` needs ranks, dtype and op.
    """
    with _open(path) as con:
        cat = _catalog(con)
        points = _df(con, f"WITH {_checks_cte(cat)} {_CURVES_SQL}", scope.params())
        return CurvesData(points, _crossovers(con, cat, scope), _summary(con, cat, scope))


_PASS_SQL = """
WITH view AS (
    SELECT point_id, algorithm, bytes FROM points
    WHERE run_id = $run AND ranks = $ranks AND dtype = $dtype AND op = $op
      AND ($algorithms IS NULL OR list_contains($algorithms, algorithm))
), per_pass AS (
    SELECT v.algorithm, v.bytes, s.pass, count(*) AS n, median(s.seconds) AS median_s
    FROM samples s JOIN view v USING (point_id)
    WHERE s.run_id = $run
    GROUP BY ALL
)
SELECT algorithm, bytes, count(*) AS passes, sum(n) AS samples,
       list(median_s ORDER BY pass) AS pass_medians_s,
       max(median_s) / min(median_s) AS max_over_min
FROM per_pass GROUP BY algorithm, bytes
ORDER BY max_over_min DESC, algorithm, bytes
"""


def pass_spread(path: StorePath, scope: Scope) -> pd.DataFrame:
    """Per point of the view, the median of each pass from the raw samples (drift check)."""
    with _open(path) as con:
        return _df(con, _PASS_SQL, scope.params())


# --- crossovers and best choices ---------------------------------------------------------------


_BEST_MEASURED_SQL = """
SELECT ranks, bytes, algorithm, median_s FROM points
WHERE run_id = $run AND dtype = $dtype AND op = $op AND status = 'ok' AND median_s > 0
  AND ($algorithms IS NULL OR list_contains($algorithms, algorithm))
QUALIFY row_number() OVER (PARTITION BY ranks, bytes ORDER BY median_s, algorithm) = 1
ORDER BY ranks, bytes
"""

_BEST_PREDICTED_SQL = """
SELECT p.ranks, p.bytes, p.algorithm, m.predicted_s
FROM points p JOIN predictions m ON m.point_id = p.point_id AND m.calibration_id = $cal
WHERE p.run_id = $run AND p.dtype = $dtype AND p.op = $op AND m.predicted_s > 0
  AND p.algorithm <> 'mpi' AND m.model <> 'lower_bound'
QUALIFY row_number() OVER (
    PARTITION BY p.ranks, p.bytes ORDER BY m.predicted_s, contains(p.algorithm, ':'), p.algorithm
) = 1
ORDER BY p.ranks, p.bytes
"""

_PAIRED_SQL = """
SELECT p.ranks, p.bytes, p.algorithm, p.median_s, m.predicted_s
FROM points p JOIN predictions m ON m.point_id = p.point_id AND m.calibration_id = $cal
WHERE p.run_id = $run AND p.dtype = $dtype AND p.op = $op AND p.status = 'ok'
  AND p.median_s > 0 AND m.predicted_s > 0
  AND p.algorithm <> 'mpi' AND m.model <> 'lower_bound'
ORDER BY p.ranks, p.bytes, p.algorithm
"""


@dataclass(frozen=True)
class CrossoverData:
    """Best algorithm per (ranks, bytes), measured and predicted; the stored agreement rows of
    the run and of each (ranks) group of the chosen dtype and op; crossovers."""

    measured_best: pd.DataFrame
    predicted_best: pd.DataFrame
    agreement: pd.DataFrame
    crossovers: pd.DataFrame
    summary: pd.DataFrame


_AGREEMENT_SQL = """
SELECT scope, ranks, dtype, op, points, model_pick_share, mean_slowdown, same_model_share
FROM agreement
WHERE run_id = $run AND calibration_id = $cal
  AND (scope = 'run' OR (dtype = $dtype AND op = $op))
ORDER BY scope = 'run' DESC, ranks
"""


def _stored_agreement(con: Connection, cat: Catalog, scope: Scope) -> pd.DataFrame:
    """The agreement rows runners.analysis stored for the run and calibration (the one home
    of that rule): the whole run first, then each group of the scope's dtype and op. Empty
    when the run has not been analysed with that calibration."""
    if not cat.has("agreement", "calibration_id") or scope.calibration_id is None:
        return pd.DataFrame()
    return _df(con, _AGREEMENT_SQL, scope.params())


def crossover_data(path: StorePath, scope: Scope, modelled_only: bool = True) -> CrossoverData:
    """Best choices, agreement figures and crossovers for (run, dtype, op) over all ranks.

    ``scope`` needs dtype, op and calibration_id. With ``modelled_only`` the measured best is
    taken among the algorithms that have a prediction, as the model's pick is.
    """
    with _open(path) as con:
        cat = _catalog(con)
        paired = _df(con, _PAIRED_SQL, scope.params())
        algs = sorted(paired["algorithm"].unique()) if modelled_only else None
        measured = _df(con, _BEST_MEASURED_SQL, {**scope.params(), "algorithms": algs})
        return CrossoverData(
            measured_best=measured,
            predicted_best=_df(con, _BEST_PREDICTED_SQL, scope.params()),
            agreement=_stored_agreement(con, cat, scope),
            crossovers=_crossovers(con, cat, scope),
            summary=_summary(con, cat, scope),
        )


# --- override impact ---------------------------------------------------------------------------


_OVERRIDE_SQL = """
SELECT f.ranks, f.bytes, f.median_s AS forced_s, m.median_s AS mpi_s,
       m.median_s / f.median_s AS speedup,
       CASE WHEN f.ci_high_s IS NULL OR m.ci_low_s IS NULL THEN 'unknown'
            WHEN f.ci_high_s < m.ci_low_s THEN 'faster'
            WHEN f.ci_low_s > m.ci_high_s THEN 'slower'
            ELSE 'within noise' END AS verdict,
       f.oversubscribed OR m.oversubscribed AS oversubscribed
FROM points f
JOIN points m ON m.run_id = f.run_id AND m.ranks = f.ranks AND m.bytes = f.bytes
 AND m.dtype = f.dtype AND m.op = f.op AND m.algorithm = 'mpi'
WHERE f.run_id = $run AND f.algorithm = $forced AND f.dtype = $dtype AND f.op = $op
  AND f.status = 'ok' AND m.status = 'ok' AND f.median_s > 0
ORDER BY f.ranks, f.bytes
"""


def override_impact(path: StorePath, scope: Scope, forced: str) -> pd.DataFrame:
    """Speed-up of ``forced`` over the autotuned 'mpi' at every (ranks, bytes) of the view.

    speedup = mpi_s / forced_s (> 1: the override wins); verdict compares the medians'
    confidence intervals: faster, slower, within noise, or unknown without intervals.
    """
    with _open(path) as con:
        return _df(con, _OVERRIDE_SQL, {**scope.params(), "forced": forced})


def override_summary(impact: pd.DataFrame) -> pd.DataFrame:
    """Per ranks: sizes where the override is faster / slower / within noise, best and worst."""
    if impact.empty:
        return pd.DataFrame(columns=["ranks", "sizes", "faster", "slower", "best", "worst"])
    grouped = impact.groupby("ranks")
    return pd.DataFrame(
        {
            "sizes": grouped.size(),
            "faster": grouped["verdict"].apply(lambda v: int((v == "faster").sum())),
            "slower": grouped["verdict"].apply(lambda v: int((v == "slower").sum())),
            "within_noise": grouped["verdict"].apply(lambda v: int((v == "within noise").sum())),
            "best_speedup": grouped["speedup"].max(),
            "worst_speedup": grouped["speedup"].min(),
        }
    ).reset_index()


# --- model fit ---------------------------------------------------------------------------------


_CALIBRATIONS_SQL = """
SELECT calibration_id, created_at, source, host, ranks, alpha_s, beta_s_per_byte, r_squared,
       min_bytes, max_bytes, CAST(breakpoints AS VARCHAR) AS breakpoints,
       CAST(gammas AS VARCHAR) AS gammas
FROM calibrations ORDER BY created_at DESC, calibration_id
"""


def calibrations(path: StorePath) -> pd.DataFrame:
    """Every calibration, newest first (JSON columns as text)."""
    with _open(path) as con:
        return _df(con, _CALIBRATIONS_SQL)


def calibration(path: StorePath, calibration_id: str) -> dict[str, Any] | None:
    """One calibration as a dict with its JSON columns decoded, or None."""
    with _open(path) as con:
        cursor = con.execute(
            "SELECT * FROM calibrations WHERE calibration_id = ?", [calibration_id]
        )
        names = [d[0] for d in cursor.description]
        row = cursor.fetchone()
    if row is None:
        return None
    decoded = dict(zip(names, row, strict=True))
    for column in JSON_COLUMNS:
        if isinstance(decoded.get(column), str):
            decoded[column] = json.loads(decoded[column])
    return decoded


_PAIR_CALIBRATIONS_SQL = """
SELECT
  (SELECT calibration_id FROM calibrations
   WHERE source = 'fitted:' || $run ORDER BY created_at DESC LIMIT 1) AS fitted,
  coalesce(
    (SELECT k.calibration_id FROM runs r JOIN calibrations k USING (calibration_id)
     WHERE r.run_id = $run AND NOT starts_with(coalesce(k.source, ''), 'fitted:')),
    (SELECT k.calibration_id FROM calibrations k, runs r
     WHERE r.run_id = $run AND k.source = 'pingpong'
     ORDER BY (k.host = r.host) DESC NULLS LAST, k.created_at DESC LIMIT 1)) AS micro
"""


@dataclass(frozen=True)
class FitComparison:
    """The microbenchmark calibration beside the one fitted to a run's collective timings."""

    micro_id: str | None
    fitted_id: str | None
    table: pd.DataFrame


def fit_comparison(path: StorePath, run_id: str) -> FitComparison:
    """alpha, beta, r_squared and every gamma: ping-pong vs fitted:<run_id>, and their ratio."""
    with _open(path) as con:
        fitted, micro = con.execute(_PAIR_CALIBRATIONS_SQL, {"run": run_id}).fetchone()
    cal_micro = calibration(path, micro) if micro else None
    cal_fitted = calibration(path, fitted) if fitted else None
    return FitComparison(micro, fitted, parameter_table(cal_micro, cal_fitted))


def _parameters(cal: dict[str, Any] | None) -> dict[str, float]:
    """A calibration's scalar parameters and its gammas, by display name."""
    if cal is None:
        return {}
    params = {k: cal.get(k) for k in ("alpha_s", "beta_s_per_byte", "r_squared")}
    gammas = cal.get("gammas") or {}
    params |= {f"gamma {key} (s/B)": value for key, value in sorted(gammas.items())}
    return {k: float(v) for k, v in params.items() if v is not None}


def parameter_table(micro: dict[str, Any] | None, fitted: dict[str, Any] | None) -> pd.DataFrame:
    """Rows per parameter: microbenchmark value, fitted value, fitted / microbenchmark."""
    a, b = _parameters(micro), _parameters(fitted)
    rows = []
    for name in dict.fromkeys([*a, *b]):
        ratio = b[name] / a[name] if a.get(name) and name in b else float("nan")
        rows.append(
            {
                "parameter": name,
                "microbenchmark": a.get(name, float("nan")),
                "fitted": b.get(name, float("nan")),
                "fitted_over_micro": ratio,
            }
        )
    return pd.DataFrame(
        rows, columns=["parameter", "microbenchmark", "fitted", "fitted_over_micro"]
    )


_RESIDUALS_SQL = """
SELECT p.algorithm, p.ranks, p.bytes, m.model, p.median_s, m.predicted_s,
       p.median_s / m.predicted_s AS measured_over_predicted,
       m.latency_s, m.bandwidth_s, m.reduction_s, p.oversubscribed
FROM points p JOIN predictions m ON m.point_id = p.point_id AND m.calibration_id = $cal
WHERE p.run_id = $run AND p.dtype = $dtype AND p.op = $op AND p.status = 'ok'
  AND ($ranks IS NULL OR p.ranks = $ranks) AND p.median_s > 0 AND m.predicted_s > 0
ORDER BY p.algorithm, p.ranks, p.bytes
"""


def residuals(path: StorePath, scope: Scope) -> pd.DataFrame:
    """measured / predicted per point of the view (scope needs dtype, op and calibration_id)."""
    with _open(path) as con:
        return _df(con, _RESIDUALS_SQL, scope.params())


# --- comparing runs ----------------------------------------------------------------------------


_COMPARE_SQL = """
SELECT a.algorithm, a.ranks, a.bytes, a.dtype, a.op,
       a.median_s AS a_median_s, b.median_s AS b_median_s,
       b.median_s / a.median_s AS b_over_a,
       CASE WHEN b.median_s / a.median_s > 1 + $threshold THEN 'slower'
            WHEN b.median_s / a.median_s < 1 / (1 + $threshold) THEN 'faster'
            ELSE '' END AS change,
       (a.ci_high_s < b.ci_low_s OR b.ci_high_s < a.ci_low_s) AS intervals_apart
FROM points a
JOIN points b ON b.algorithm = a.algorithm AND b.ranks = a.ranks AND b.bytes = a.bytes
 AND b.dtype = a.dtype AND b.op = a.op
WHERE a.run_id = $a AND b.run_id = $b AND a.status = 'ok' AND b.status = 'ok'
  AND a.median_s > 0 AND b.median_s > 0
ORDER BY abs(ln(b.median_s / a.median_s)) DESC, a.algorithm, a.ranks, a.bytes
"""


def compare_runs(path: StorePath, run_a: str, run_b: str, threshold: float) -> pd.DataFrame:
    """b / a median ratio for every matching (algorithm, ranks, bytes, dtype, op).

    change is 'slower' when b / a > 1 + threshold, 'faster' when below 1 / (1 + threshold);
    intervals_apart says whether the two medians' confidence intervals do not overlap.
    Largest changes first.
    """
    with _open(path) as con:
        return _df(con, _COMPARE_SQL, {"a": run_a, "b": run_b, "threshold": float(threshold)})


# --- user SQL ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """An example query: its one-line description and the SQL."""

    title: str
    sql: str


FALLBACK_EXAMPLES = (
    Example(
        "The latest runs, with how many points each stored",
        "SELECT r.run_id, r.status, r.started_at, r.host, count(p.point_id) AS points\n"
        "FROM runs r LEFT JOIN points p USING (run_id)\nGROUP BY ALL\n"
        "ORDER BY r.started_at DESC\nLIMIT 10;",
    ),
)


def example_queries(doc: Path = SCHEMA_DOC) -> list[Example]:
    """The ```sql blocks of docs/schema.md, each titled by the sentence before it.

    Falls back to a built-in list when the document is not there (an installed package).
    """
    try:
        text = doc.read_text(encoding="utf-8")
    except OSError:
        return list(FALLBACK_EXAMPLES)
    found = re.findall(r"([^\n]+)\n+```sql\n(.*?)```", text, flags=re.DOTALL)
    examples = [Example(title.strip().rstrip(":"), sql.strip()) for title, sql in found]
    return examples or list(FALLBACK_EXAMPLES)


@dataclass(frozen=True)
class UserResult:
    """A user query's result: up to the row limit, whether more rows existed, and its time."""

    frame: pd.DataFrame
    truncated: bool
    seconds: float


def check_read_only(sql: str) -> None:
    """Raise QueryError unless ``sql`` is one read statement (SELECT, WITH, FROM, SHOW...)."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise store.QueryError(str(exc)) from None
    if not statements:
        raise store.QueryError("type a query first, e.g. SELECT * FROM runs")
    if len(statements) > 1:
        raise store.QueryError("one statement at a time, please")
    kind = statements[0].type.name
    if kind not in READ_STATEMENTS:
        raise store.QueryError(
            f"only read-only queries run here (SELECT, WITH, FROM, DESCRIBE, SHOW, SUMMARIZE, "
            f"EXPLAIN); this statement is {kind}"
        )


def run_user_sql(
    path: StorePath,
    sql: str,
    max_rows: int = USER_SQL_MAX_ROWS,
    timeout_s: float = USER_SQL_TIMEOUT_S,
) -> UserResult:
    """Run one read-only statement typed by a user, on a read-only connection.

    The statement must be a read (check_read_only); the connection refuses writes, ATTACH
    and file access anyway. It gets a connection of its own (never the page's shared one).
    The query is interrupted after ``timeout_s`` so it cannot hold the store for long, and
    at most ``max_rows`` rows are fetched. Raises QueryError.
    """
    check_read_only(sql)
    started = time.monotonic()
    with store.open_readonly(path) as con:
        frame = storefile.bounded_query(con, sql, timeout_s=timeout_s, max_rows=max_rows)
    return UserResult(frame, bool(frame.attrs.get("truncated")), time.monotonic() - started)
