"""Data of the Crossovers page: best choices, the stored agreement, crossovers."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from runners import store
from runners.domain.libraries.catalog import library_calls
from runners.domain.model.closed_form import NOT_SCHEDULES
from runners.domain.verdict.summary import verdict_lines
from runners.store.dashboard_reads.assumptions import _summary
from runners.store.dashboard_reads.base import (
    OWN_CALIBRATIONS,
    Catalog,
    Connection,
    Scope,
    StorePath,
    _catalog,
    _df,
    _open,
)
from runners.store.dashboard_reads.curves import _crossovers

# --- crossovers and best choices ---------------------------------------------------------------


# The verdict's own rows: every algorithm competing, decided by the paired launches or a tie.
_WINNERS_SQL = """
SELECT ranks, bytes, winner AS algorithm, runner_up, decided FROM winners
WHERE run_id = $run AND dtype = $dtype AND op = $op AND coalesce(library, 'all') = 'all'
  AND coalesce(collective, 'allreduce') = $collective
ORDER BY ranks, bytes
"""

_BEST_PREDICTED_SQL = f"""
SELECT p.ranks, p.bytes, p.algorithm, m.predicted_s
FROM points p JOIN predictions m ON m.point_id = p.point_id
 AND m.calibration_id {OWN_CALIBRATIONS}
WHERE p.run_id = $run AND p.dtype = $dtype AND p.op = $op AND m.predicted_s > 0
  AND coalesce(p.collective, 'allreduce') = $collective
  AND p.algorithm <> 'mpi' AND NOT list_contains($not_schedules, m.model)
QUALIFY row_number() OVER (
    PARTITION BY p.ranks, p.bytes
    ORDER BY m.predicted_s, list_contains($library_calls, p.algorithm), p.algorithm
) = 1
ORDER BY p.ranks, p.bytes
"""


@dataclass(frozen=True)
class CrossoverData:
    """The stored winner of each (ranks, bytes), decided or a tie (the verdict's rows), and the
    model's pick; the stored agreement rows of the run and of each (ranks) group of the
    chosen dtype and op; crossovers."""

    measured_best: pd.DataFrame
    predicted_best: pd.DataFrame
    agreement: pd.DataFrame
    crossovers: pd.DataFrame
    summary: pd.DataFrame


_AGREEMENT_SQL = """
SELECT scope, ranks, dtype, op, points, model_pick_share, same_model_share, median_slowdown,
       mean_slowdown
FROM agreement
WHERE run_id = $run AND calibration_id = $cal
  AND coalesce(collective, 'allreduce') = $collective
  AND (scope IN ('run', 'dedicated', 'oversubscribed') OR (dtype = $dtype AND op = $op))
ORDER BY scope = 'run' DESC, scope = 'dedicated' DESC, scope = 'oversubscribed' DESC, ranks
"""


def _stored_agreement(con: Connection, cat: Catalog, scope: Scope) -> pd.DataFrame:
    """The agreement rows runners.analysis stored for the run and calibration (the one home
    of that rule): the whole run first, then each group of the scope's dtype and op. Empty
    when the run has not been analysed with that calibration."""
    if not cat.has("agreement", "calibration_id") or scope.calibration_id is None:
        return pd.DataFrame()
    return _df(con, _AGREEMENT_SQL, scope.params())


def crossover_data(path: StorePath, scope: Scope) -> CrossoverData:
    """Winners, the model's picks, agreement figures and crossovers for (run, dtype, op) over
    all ranks. ``scope`` needs dtype and op, and calibration_id for the predicted side.

    The measured side is the stored `winners` rows the verdict reads (every algorithm
    competing, 'mpi' included; ties as ties), so the picture and the text cannot disagree."""
    with _open(path) as con:
        cat = _catalog(con)
        modelled = scope.params() | {
            "not_schedules": list(NOT_SCHEDULES),
            "library_calls": library_calls(),  # a tie goes to collsweep's own schedule
        }
        winners = _df(con, _WINNERS_SQL, scope.params()) if cat.has("winners") else pd.DataFrame()
        return CrossoverData(
            measured_best=winners,
            predicted_best=_df(con, _BEST_PREDICTED_SQL, modelled),
            agreement=_stored_agreement(con, cat, scope),
            crossovers=_crossovers(con, cat, scope),
            summary=_summary(con, cat, scope),
        )


def verdict(
    path: StorePath,
    run_id: str,
    dtype: str,
    op: str,
    ranks: int | None = None,
    collective: str = "allreduce",
) -> list[str]:
    """The run's verdict (runners.domain.verdict.summary) for one collective, dtype and op, one
    group
    size or all: per group its winners by size and where the decided winner changes. [] before
    analysis."""

    def mine(row: dict) -> bool:
        same = (row["dtype"], row["op"], row.get("collective") or "allreduce")
        return same == (dtype, op, collective) and ranks in (None, row["ranks"])

    inputs = store.verdict_inputs(path, run_id)
    inputs["winners"] = [r for r in inputs["winners"] if mine(r)]
    inputs["crossovers"] = [r for r in inputs["crossovers"] if mine(r)]
    inputs["inferred"] = [r for r in inputs["inferred"] if mine(r)]
    return verdict_lines(**inputs)
