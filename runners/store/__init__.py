"""The results store: one DuckDB file holding runs, points, samples and the model's outputs.

A command opens it once as a Store (store.py: `Store.open(path)` to read, `write=True` to write)
and passes the Store to the named reads and writes below; their rows come back as typed records
(records.py: RunRecord, CalibrationRecord; a point's row is PointRow).

The package owns the schema version and migrations (schema.py), the only writes (writes.py;
its values typed for their columns by columns.py), the named reads shared by the CLI, the
analysis and the dashboard (reads.py; a run's points: point_reads.py; the runs listing:
reports.py; the dashboard's pages: dashboard_reads/), opening the file with its lock, damage
check and read limits (storefile.py), the run journal and lock beside the file (journal.py),
reports, salvage and merging shard stores (merge.py): the only place SQL is written, the
user's own SQL aside (user_query.py). It never imports MPI, so the dashboard uses it too.
The tables are documented in docs/schema.md. This module names the public API.
"""

from __future__ import annotations

import os
from pathlib import Path

from runners.store import storefile
from runners.store.merge import ShardResult, merge_shards
from runners.store.point_reads import (
    PointState,
    ok_points,
    point_grid,
    point_ids,
    point_jobs,
    point_medians,
    point_states,
    precision_counts,
    unit_medians,
    verdict_inputs,
)
from runners.store.reads import (
    Source,
    calibration_order,
    calibrations_of_source,
    get_calibration,
    get_run,
    latest_calibration,
    open_readonly,
    provisional_reasons,
    query,
    reading,
    runs_called,
)
from runners.store.records import CalibrationRecord, RunRecord
from runners.store.schema import (
    ASSUMPTION_STATES,
    CROSSOVER_KINDS,
    DEFAULT_STORE,
    MIGRATIONS,
    POINT_STATUSES,
    RUN_STATUSES,
    SCHEMA_VERSION,
    STORE_ENV,
    ensure_current,
    migrate,
    stored_schema_version,
)
from runners.store.store import Store, Target
from runners.store.storefile import (
    LOCK_TIMEOUT_ENV,
    LOCK_TIMEOUT_S,
    QueryError,
    QueryLimit,
    StoreBusy,
    StoreError,
)
from runners.store.writes import (
    add_calibration,
    add_points,
    add_predictions,
    create_run,
    finish_run,
    replace_against_default,
    replace_agreement,
    replace_analysis,
    replace_assumptions,
    replace_best_choices,
    replace_crossovers,
    replace_model_accuracy,
    replace_predictions,
    replace_winners,
    update_run,
    write_batch,
)


def default_store() -> Path:
    """The store to use: ``$COLLSWEEP_STORE`` if set, else ``data/collsweep.duckdb`` here."""
    override = os.environ.get(STORE_ENV, "").strip()
    return Path(override).expanduser() if override else DEFAULT_STORE


__all__ = [
    "ASSUMPTION_STATES",
    "CROSSOVER_KINDS",
    "DEFAULT_STORE",
    "LOCK_TIMEOUT_ENV",
    "LOCK_TIMEOUT_S",
    "MIGRATIONS",
    "POINT_STATUSES",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "STORE_ENV",
    "CalibrationRecord",
    "PointState",
    "QueryError",
    "QueryLimit",
    "RunRecord",
    "ShardResult",
    "Source",
    "Store",
    "StoreBusy",
    "StoreError",
    "Target",
    "add_calibration",
    "add_points",
    "add_predictions",
    "calibration_order",
    "calibrations_of_source",
    "create_run",
    "default_store",
    "ensure_current",
    "finish_run",
    "get_calibration",
    "get_run",
    "latest_calibration",
    "merge_shards",
    "migrate",
    "ok_points",
    "open_readonly",
    "point_grid",
    "point_ids",
    "point_jobs",
    "point_medians",
    "point_states",
    "precision_counts",
    "provisional_reasons",
    "query",
    "reading",
    "replace_against_default",
    "replace_agreement",
    "replace_analysis",
    "replace_assumptions",
    "replace_best_choices",
    "replace_crossovers",
    "replace_model_accuracy",
    "replace_predictions",
    "replace_winners",
    "runs_called",
    "stored_schema_version",
    "storefile",
    "unit_medians",
    "update_run",
    "verdict_inputs",
    "write_batch",
]
