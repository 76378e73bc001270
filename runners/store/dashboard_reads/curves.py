"""Data of the Curves page: medians with their bands, predictions, crossovers, pass spread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from runners.domain.libraries.catalog import is_library_call
from runners.domain.model.closed_form import NOT_SCHEDULES
from runners.domain.status import PointStatus
from runners.store.dashboard_reads.assumptions import _checks_cte, _summary
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

# --- curves ------------------------------------------------------------------------------------


_CURVES_SQL = f"""
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
       p.ci_rel_halfwidth, p.ci_target_met, p.interval_low_s, p.interval_high_s, p.launches,
       pr.model, pr.predicted_s, pr.latency_s, pr.bandwidth_s, pr.reduction_s,
       coalesce(f.violated, '') AS violated, coalesce(f.unknown, '') AS unknown
FROM points p
LEFT JOIN predictions pr ON pr.point_id = p.point_id
 AND pr.calibration_id {OWN_CALIBRATIONS}
LEFT JOIN flags f ON f.point_id = p.point_id
WHERE p.run_id = $run AND p.ranks = $ranks AND p.dtype = $dtype AND p.op = $op
  AND coalesce(p.collective, 'allreduce') = $collective
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
        "AND (kind = 'measured' OR calibration_id IS NULL OR $cal IS NULL "
        f"OR calibration_id {OWN_CALIBRATIONS})"
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
        "AND coalesce(collective, 'allreduce') = $collective "
        "AND ($algorithms IS NULL OR (list_contains($algorithms, algorithm_a) "
        "AND list_contains($algorithms, algorithm_b))) "
        f"{cal_filter} ORDER BY ranks, dtype, op, bytes, kind",
        scope.params(),
    )


def _fastest_by_size(points: pd.DataFrame, column: str) -> pd.Series:
    """Size -> the algorithm with the smallest ``column`` there, sizes sorted.

    For predictions the autotuned 'mpi' is left out (the fastest library model is no
    contender) and ties between algorithms sharing a model go to collsweep's own code.
    """
    usable = points[points["status"].eq(PointStatus.OK) & points[column].gt(0)]
    usable = usable.assign(library=usable["algorithm"].map(is_library_call))
    order = [column, "algorithm"]
    if column == "predicted_s":  # shared models tie: collsweep's own code, as the pick
        usable = usable[~usable["model"].isin(NOT_SCHEDULES)]
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


def crossover_note(marked: pd.DataFrame) -> str | None:
    """A sentence for a chart whose marked crossovers are of one kind only (None otherwise):
    a predicted crossover without a measured one is the model's alone, and the reverse is a
    change the model does not foresee."""
    if marked.empty:
        return None
    kinds = set(marked["kind"])
    if kinds == {"predicted"}:
        return (
            "Only predicted crossovers are marked: no measured crossover among the shown "
            "algorithms changes which one is fastest, so the open diamonds are the model's alone."
        )
    if kinds == {"measured"}:
        return (
            "Only measured crossovers are marked: in the model, the fastest of the shown "
            "algorithms does not change here."
        )
    return None


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
      AND coalesce(collective, 'allreduce') = $collective
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
