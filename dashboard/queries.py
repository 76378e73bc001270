"""The dashboard's data: aggregating SQL over the results store, one loader per page view.

The loaders are the store's (runners/store/dashboard_reads/, a module per page, so SQL is
written only in the store); this module names them for the views.

Every public function takes the store's path, opens one short read-only connection
(runners.store.open_readonly: no writes, no file access from SQL) and returns small
DataFrames: the percentiles come from `points`, anything from `samples` is aggregated in
DuckDB. No Streamlit and no MPI here. Tables are those of docs/schema.md; columns or tables
added by later schema versions (e.g. a calibration_id on crossovers, the `agreement` table)
are used when present and ignored when absent. A missing, corrupt, older or newer store
raises store.StoreError; failing SQL raises store.QueryError.
"""

from __future__ import annotations

from runners.store.dashboard_reads.assumptions import (
    AssumptionData,
    RunAssumptions,
    assumption_matrix,
    assumption_overview,
    assumption_summary,
    assumptions_data,
    run_assumptions,
)
from runners.store.dashboard_reads.base import (
    Catalog,
    Scope,
    catalog,
    reading,
)
from runners.store.dashboard_reads.crossovers import CrossoverData, crossover_data, verdict
from runners.store.dashboard_reads.curves import (
    CurvesData,
    crossover_note,
    curves_data,
    envelope_crossovers,
    pass_spread,
)
from runners.store.dashboard_reads.model_fit import (
    OUTLIER_FACTOR,
    FitComparison,
    calibration,
    calibrations,
    fit_comparison,
    model_accuracy,
    outliers,
    parameter_table,
    residuals,
)
from runners.store.dashboard_reads.override import (
    baselines,
    override_impact,
    override_summary,
    readable,
)
from runners.store.dashboard_reads.placements import (
    PlacementsData,
    newest_placements,
    placements_data,
)
from runners.store.dashboard_reads.runs import (
    Overview,
    compare_runs,
    machine_probes,
    no_overlap_reason,
    overview,
    prediction_calibrations,
    provenance_diff,
    run_details,
    run_grid,
    runs_table,
    time_span_note,
)
from runners.store.dashboard_reads.scale import (
    ScaleData,
    scale_data,
    scale_groups,
    simulated_runs,
)
from runners.store.dashboard_reads.tuning import (
    tuned_entries,
    tuned_runs,
    tuning_file_of,
    tuning_ratios,
)
from runners.store.dashboard_reads.user_sql import (
    FALLBACK_EXAMPLES,
    USER_SQL_MAX_ROWS,
    USER_SQL_TIMEOUT_S,
    Example,
    UserResult,
    check_read_only,
    example_queries,
    run_user_sql,
    schema_reference,
)
from runners.store.dashboard_reads.verdict import VerdictData, adaptive_choices, verdict_data
from runners.store.dashboard_reads.workload import (
    WorkloadData,
    workload_data,
    workload_runs,
    workloads_of,
)

__all__ = [
    "FALLBACK_EXAMPLES",
    "OUTLIER_FACTOR",
    "USER_SQL_MAX_ROWS",
    "USER_SQL_TIMEOUT_S",
    "AssumptionData",
    "Catalog",
    "CrossoverData",
    "CurvesData",
    "Example",
    "FitComparison",
    "Overview",
    "PlacementsData",
    "RunAssumptions",
    "ScaleData",
    "Scope",
    "UserResult",
    "VerdictData",
    "WorkloadData",
    "adaptive_choices",
    "assumption_matrix",
    "assumption_overview",
    "assumption_summary",
    "assumptions_data",
    "baselines",
    "calibration",
    "calibrations",
    "catalog",
    "check_read_only",
    "compare_runs",
    "crossover_data",
    "crossover_note",
    "curves_data",
    "envelope_crossovers",
    "example_queries",
    "fit_comparison",
    "machine_probes",
    "model_accuracy",
    "newest_placements",
    "no_overlap_reason",
    "outliers",
    "override_impact",
    "override_summary",
    "overview",
    "parameter_table",
    "pass_spread",
    "placements_data",
    "prediction_calibrations",
    "provenance_diff",
    "readable",
    "reading",
    "residuals",
    "run_assumptions",
    "run_details",
    "run_grid",
    "run_user_sql",
    "runs_table",
    "scale_data",
    "scale_groups",
    "schema_reference",
    "simulated_runs",
    "time_span_note",
    "tuned_entries",
    "tuned_runs",
    "tuning_file_of",
    "tuning_ratios",
    "verdict",
    "verdict_data",
    "workload_data",
    "workload_runs",
    "workloads_of",
]
