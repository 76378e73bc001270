"""Read-side reports: the runs listing (the CLI's and the dashboard's) and exporting a run's
tables (no MPI)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd

from runners.domain.model.calibration_id import CalibrationId, CalibrationKind
from runners.domain.names import checked_run_id, path_for
from runners.domain.outputs import check_outputs
from runners.domain.status import PointStatus, RunStatus
from runners.store import journal
from runners.store.reads import Source, get_run, read_frame, reading
from runners.store.store import Target
from runners.store.storefile import StoreError

# The short version of every library whose ranks ran a run ("MPICH 5.0.2, Open MPI 5.0.11"),
# for runs `r`; before schema 7 only runs.mpi_version. `collsweep runs` and the Runs page.
LIBRARY_VERSIONS_SQL = """coalesce(nullif(array_to_string(
           json_extract_string(r.libraries, '$.*.mpi_version'), ', '), ''),
           r.mpi_version, '')"""

# A run's tags as one comma-separated text ('' when it has none), for runs `r`.
TAGS_SQL = "coalesce(array_to_string(json_extract_string(r.tags, '$[*]'), ','), '')"

# One row per run, newest first: what `collsweep runs` and the dashboard's Runs page list (each
# shows its own columns of it). Group sizes, datatypes and ops as sorted lists.
RUNS_SQL = f"""
WITH pts AS (
    SELECT run_id,
           list_sort(list(DISTINCT ranks)) AS ranks,
           list_sort(list(DISTINCT dtype)) AS dtypes,
           list_sort(list(DISTINCT op)) AS ops,
           count(DISTINCT algorithm) AS algorithms,
           count(*) AS points,
           count(*) FILTER (WHERE status = $ok) AS ok,
           count(*) FILTER (WHERE list_contains($failed, status)) AS failed,
           count(*) FILTER (WHERE status = $skipped) AS skipped,
           bool_or(oversubscribed) AS oversubscribed
    FROM points GROUP BY run_id
), smp AS (
    SELECT run_id, count(*) AS samples FROM samples GROUP BY run_id
)
SELECT r.run_id, coalesce(r.name, '') AS name, {TAGS_SQL} AS tags,
       r.status, r.started_at, r.finished_at,
       date_diff('millisecond', r.started_at, r.finished_at) / 1000 AS duration_s,
       r.host, {LIBRARY_VERSIONS_SQL} AS library, r.cpu_model, r.physical_cores,
       coalesce(p.ranks, []) AS ranks, coalesce(p.dtypes, []) AS dtypes,
       coalesce(p.ops, []) AS ops, coalesce(p.algorithms, 0) AS algorithms,
       coalesce(p.points, 0) AS points, coalesce(p.ok, 0) AS ok,
       coalesce(p.failed, 0) AS failed, coalesce(p.skipped, 0) AS skipped,
       coalesce(s.samples, 0) AS samples, coalesce(p.oversubscribed, false) AS oversubscribed,
       r.thread_level, r.code_version, r.mpi4py_version, r.numpy_version, r.python_version,
       r.calibration_id, coalesce(r.status_reason, '') AS status_reason, r.command_line
FROM runs r LEFT JOIN pts p USING (run_id) LEFT JOIN smp s USING (run_id)
ORDER BY r.started_at DESC NULLS LAST, r.run_id DESC
"""
RUNS_PARAMS = {
    "ok": PointStatus.OK,
    "failed": [PointStatus.FAILED, PointStatus.TIMEOUT],
    "skipped": PointStatus.SKIPPED,
}
# The columns `collsweep runs` prints, in order.
LISTED = (
    "run_id", "name", "tags", "status", "started", "duration_s", "host", "library", "ranks",
    "dtypes", "ops", "algorithms", "ok", "failed", "skipped", "reason",
)  # fmt: skip

EXPORTED_TABLES = (
    "runs",
    "points",
    "samples",
    "predictions",
    "assumptions",
    "crossovers",
    "best_choices",
    "agreement",
    "winners",
    "probes",
    "model_accuracy",
    "against_default",
    "cell_inferences",
    "workloads",
    "workload_policies",
    "workload_calls",
    "replays",
)
# The calibrations a run's predictions refer to, and its launches' own (they have no run_id).
RUN_CALIBRATIONS_SQL = """
SELECT * FROM calibrations
WHERE calibration_id IN (SELECT calibration_id FROM predictions WHERE run_id = $run)
   OR calibration_id = (SELECT calibration_id FROM runs WHERE run_id = $run)
   OR source = $launch_source
ORDER BY created_at, calibration_id
"""


def runs(source: Source) -> pd.DataFrame:
    """One row per run, newest first (RUNS_SQL): name, tags (comma-separated), status, start
    and finish, duration in seconds (missing while a run has not finished), host, library,
    machine, its group sizes, datatypes and ops (sorted lists), point counts by status,
    samples, whether any point ran oversubscribed, and provenance."""
    return read_frame(source, RUNS_SQL, RUNS_PARAMS)


def runs_table(path: Target) -> pd.DataFrame:
    """`collsweep runs`: the LISTED columns of runs(), lists comma-separated and blank,
    never None, where a run has nothing yet.

    A run stored as running that no live sweep holds (its process was killed) is shown as
    'abandoned', with what to do about it.
    """
    listed = runs(path)
    listed["started"] = [_when(t) for t in listed.started_at]
    listed["host"] = listed.host.fillna("")
    listed["reason"] = listed.status_reason
    for column in ("ranks", "dtypes", "ops"):
        listed[column] = [",".join(map(str, values)) for values in listed[column]]
    listed = listed[list(LISTED)]
    for index in listed.index[listed.status == RunStatus.RUNNING]:
        run_id = listed.at[index, "run_id"]
        if not journal.is_live(Path(path), run_id):
            listed.at[index, "status"] = "abandoned"
            listed.at[index, "reason"] = (
                f"stored as running, but no live sweep holds it: `collsweep sweep --resume "
                f"{run_id}` stores what its journal kept and measures the rest"
            )
    return listed


def _when(stamp: pd.Timestamp | None) -> str:
    """A start time as `collsweep runs` prints it ('' when not recorded)."""
    return "" if stamp is None or pd.isna(stamp) else stamp.strftime("%Y-%m-%d %H:%M:%S")


def run_tables(path: Source, run_id: str) -> dict[str, pd.DataFrame]:
    """Every table's rows for one run, and the calibrations it refers to (raises StoreError
    for an unknown run)."""
    if get_run(path, run_id) is None:
        raise StoreError(f"no run {run_id!r} in {path}; see `collsweep runs`")
    with reading(path) as con:
        tables = {
            table: con.execute(f"SELECT * FROM {table} WHERE run_id = ?", [run_id]).df()
            for table in EXPORTED_TABLES
        }
        launches = CalibrationId(CalibrationKind.LAUNCH, run_id)  # MPICH's launches' own
        values = {"run": run_id, "launch_source": str(launches)}
        tables["calibrations"] = con.execute(RUN_CALIBRATIONS_SQL, values).df()
    return tables


def export_run(path: Source, run_id: str, out_dir: Path, fmt: str) -> list[Path]:
    """Write the run's tables as `<run>_<table>.<fmt>` files; returns the files written."""
    if fmt not in ("csv", "parquet"):
        raise ValueError(f"unknown export format {fmt!r}")
    tables = run_tables(path, checked_run_id(run_id))
    targets = {name: path_for(out_dir, f"{run_id}_{name}", f".{fmt}") for name in tables}
    check_outputs([t for t in targets.values() if t.parent.exists()])
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in tables.items():
        target = targets[name]
        partial = target.with_name(target.name + ".partial")
        _write(frame, partial, fmt)
        partial.replace(target)  # never leave a half-written file under the final name
        written.append(target)
    return written


def _write(frame: pd.DataFrame, target: Path, fmt: str) -> None:
    if fmt == "csv":
        frame.to_csv(target, index=False)
        return
    con = duckdb.connect()  # in-memory: DuckDB writes Parquet without extra dependencies
    try:
        con.register("frame", frame)
        literal = str(target).replace("'", "''")
        con.execute(f"COPY frame TO '{literal}' (FORMAT parquet)")
    finally:
        con.close()
