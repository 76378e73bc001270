"""Read-side reports for the CLI: the runs listing and exporting a run's tables (no MPI)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd

from runners import store
from runners.domain.calibration_id import CalibrationId, CalibrationKind
from runners.domain.names import checked_run_id, path_for
from runners.domain.outputs import check_outputs
from runners.store import journal

# The short version of every library whose ranks ran a run ("MPICH 5.0.2, Open MPI 5.0.11"),
# for runs `r`; before schema 7 only runs.mpi_version. `collsweep runs` and the Runs page.
LIBRARY_VERSIONS_SQL = """coalesce(nullif(array_to_string(
           json_extract_string(r.libraries, '$.*.mpi_version'), ', '), ''),
           r.mpi_version, '')"""

# A run's tags as one comma-separated text ('' when it has none), for runs `r`.
TAGS_SQL = "coalesce(array_to_string(json_extract_string(r.tags, '$[*]'), ','), '')"

RUNS_SQL = f"""
SELECT r.run_id, coalesce(r.name, '') AS name, {TAGS_SQL} AS tags,
       r.status, coalesce(strftime(r.started_at, '%Y-%m-%d %H:%M:%S'), '') AS started,
       date_diff('millisecond', r.started_at, r.finished_at) / 1000 AS duration_s,
       coalesce(r.host, '') AS host, {LIBRARY_VERSIONS_SQL} AS library,
       coalesce(array_to_string(list_sort(list(DISTINCT p.ranks)), ','), '') AS ranks,
       coalesce(string_agg(DISTINCT p.dtype, ',' ORDER BY p.dtype), '') AS dtypes,
       coalesce(string_agg(DISTINCT p.op, ',' ORDER BY p.op), '') AS ops,
       count(DISTINCT p.algorithm) AS algorithms,
       count(p.point_id) FILTER (WHERE p.status = 'ok') AS ok,
       count(p.point_id) FILTER (WHERE p.status IN ('failed', 'timeout')) AS failed,
       count(p.point_id) FILTER (WHERE p.status = 'skipped') AS skipped,
       coalesce(r.status_reason, '') AS reason
FROM runs r LEFT JOIN points p USING (run_id)
GROUP BY r.run_id, r.name, r.tags, r.status, r.started_at, r.finished_at, r.host,
         r.mpi_version, r.libraries, r.status_reason
ORDER BY r.started_at DESC, r.run_id
"""

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


def runs_table(path: Path) -> pd.DataFrame:
    """One row per run: its name and tags (comma-separated), status, start, duration in
    seconds (a number; missing while a run has not finished), host, library, ranks, dtypes,
    ops, how many algorithms, and point counts (blank, never None, where a run has nothing
    yet).

    A run stored as running that no live sweep holds (its process was killed) is shown as
    'abandoned', with what to do about it.
    """
    frame = store.query(path, RUNS_SQL)
    for index in frame.index[frame.status == "running"]:
        run_id = frame.at[index, "run_id"]
        if not journal.is_live(Path(path), run_id):
            frame.at[index, "status"] = "abandoned"
            frame.at[index, "reason"] = (
                f"stored as running, but no live sweep holds it: `collsweep sweep --resume "
                f"{run_id}` stores what its journal kept and measures the rest"
            )
    return frame


def run_tables(path: Path, run_id: str) -> dict[str, pd.DataFrame]:
    """Every table's rows for one run, and the calibrations it refers to (raises StoreError
    for an unknown run)."""
    if store.get_run(path, run_id) is None:
        raise store.StoreError(f"no run {run_id!r} in {path}; see `collsweep runs`")
    with store.open_readonly(path) as con:
        tables = {
            table: con.execute(f"SELECT * FROM {table} WHERE run_id = ?", [run_id]).df()
            for table in EXPORTED_TABLES
        }
        launches = CalibrationId(CalibrationKind.LAUNCH, run_id)  # MPICH's launches' own
        values = {"run": run_id, "launch_source": str(launches)}
        tables["calibrations"] = con.execute(RUN_CALIBRATIONS_SQL, values).df()
    return tables


def export_run(path: Path, run_id: str, out_dir: Path, fmt: str) -> list[Path]:
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
