"""Reading a run's points: the named reads the sweep, the merge, the analysis, the CLI and the
dashboard share, so each question of the points table is asked in one place.

Statuses are bound as parameters (runners.domain.status). Every read takes a Source: the store's
path or a connection open on it (runners.store.reads). No MPI here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from runners.domain.status import PointStatus
from runners.store.reads import Source, _lookup, calibration_order, read_frame

OK_POINTS_SQL = """
SELECT run_id, point_id, algorithm, collective, ranks, bytes, dtype, op, median_s,
       coalesce(oversubscribed, false) AS oversubscribed
FROM points
WHERE list_contains($runs, run_id) AND status = $ok AND median_s > 0
ORDER BY run_id, ranks, dtype, op, algorithm, bytes
"""

GRID_SQL = """
SELECT DISTINCT algorithm, collective, ranks, bytes, dtype, op FROM points
WHERE run_id = $run AND list_contains($statuses, status)
ORDER BY ALL
"""

# Each ok point's median per (launch, pass): the units its paired comparisons are made of.
UNITS_SQL = """
SELECT s.point_id, coalesce(s.launch, 0) AS launch, coalesce(s.pass, 0) AS pass,
       median(s.seconds) AS median_s
FROM samples s JOIN points p USING (point_id)
WHERE p.run_id = $run AND p.status = $ok
GROUP BY ALL
"""

STATES_SQL = """
SELECT point_id, status, coalesce(launches, 1) AS launches FROM points WHERE run_id = $run
"""


@dataclass(frozen=True)
class PointState:
    """Where a stored point stands: its status and how many launches measured it."""

    status: PointStatus
    launches: int


def ok_points(source: Source, run_ids: str | Sequence[str]) -> pd.DataFrame:
    """The ok, timed points (median_s > 0) of one run or several: run_id, point_id, algorithm,
    collective, ranks, bytes, dtype, op, median_s and oversubscribed (false where not recorded),
    ordered by run, ranks, dtype, op, algorithm and bytes."""
    runs = [run_ids] if isinstance(run_ids, str) else list(run_ids)
    return read_frame(source, OK_POINTS_SQL, {"runs": runs, "ok": PointStatus.OK})


def point_medians(source: Source, run_id: str) -> dict[tuple[int, str, str, int, str], float]:
    """Every ok point's median by (ranks, dtype, op, bytes, algorithm): what the winner
    tables and strips (runners.domain.verdict.winner_table) price the best and the default with."""
    rows = ok_points(source, run_id)
    keys = zip(rows.ranks, rows.dtype, rows.op, rows.bytes, rows.algorithm, strict=True)
    return {
        (int(p), dtype, op, int(n), alg): float(median)
        for (p, dtype, op, n, alg), median in zip(keys, rows.median_s, strict=True)
    }


def point_states(source: Source, run_id: str) -> dict[str, PointState]:
    """Every stored point of the run by id: its status and launches (1 where not recorded)."""
    rows = read_frame(source, STATES_SQL, {"run": run_id})
    states = zip(rows.point_id, rows.status, rows.launches, strict=True)
    return {pid: PointState(PointStatus(status), int(n)) for pid, status, n in states}


def point_ids(source: Source, run_id: str, statuses: Iterable[str] | None = None) -> set[str]:
    """Ids of the run's stored points (all final), optionally only those with given statuses."""
    wanted = [str(s) for s in (statuses if statuses is not None else PointStatus)]
    rows = _lookup(
        source,
        "SELECT point_id FROM points WHERE run_id = ? AND list_contains(?, status)",
        [run_id, wanted],
    )
    return {row["point_id"] for row in rows}


def point_grid(source: Source, run_id: str, statuses: Iterable[str] | None = None) -> pd.DataFrame:
    """The distinct (algorithm, collective, ranks, bytes, dtype, op) the run stored points of,
    optionally only of points with given statuses; sorted."""
    wanted = [str(s) for s in (statuses if statuses is not None else PointStatus)]
    return read_frame(source, GRID_SQL, {"run": run_id, "statuses": wanted})


def precision_counts(source: Source, run_id: str) -> tuple[int, int]:
    """(met, ok): how many of the run's ok points met their precision target, of how many."""
    (row,) = _lookup(
        source,
        "SELECT count(*) FILTER (WHERE ci_target_met) AS met, count(*) AS ok "
        "FROM points WHERE run_id = ? AND status = ?",
        [run_id, PointStatus.OK],
    )
    return int(row["met"]), int(row["ok"])


def oversubscribed_ranks(source: Source, run_id: str) -> set[int]:
    """The group sizes of the run whose points ran oversubscribed."""
    rows = _lookup(
        source,
        "SELECT DISTINCT ranks FROM points WHERE run_id = ? AND coalesce(oversubscribed, false)",
        [run_id],
    )
    return {int(row["ranks"]) for row in rows}


def unit_medians(source: Source, run_id: str) -> pd.DataFrame:
    """Each ok point's median per (launch, pass), from its samples: point_id, launch, pass
    (0 where not recorded) and median_s."""
    return read_frame(source, UNITS_SQL, {"run": run_id, "ok": PointStatus.OK})


def point_jobs(source: Source, run_id: str) -> dict[str, str]:
    """The job whose launches measured each point, by point id (points stored before
    points.job have none)."""
    rows = _lookup(
        source, "SELECT point_id, job FROM points WHERE run_id = ? AND job IS NOT NULL", [run_id]
    )
    return {row["point_id"]: row["job"] for row in rows}


def verdict_inputs(path: Source, run_id: str) -> dict[str, Any]:
    """What runners.domain.verdict.summary.verdict_lines needs of a stored run: its winners and
    crossovers rows, its oversubscribed group sizes, its calibrations, most direct first
    (calibration_order), and an adaptive run's inferred cells."""
    return {
        "winners": _lookup(
            path,
            "SELECT * FROM winners WHERE run_id = ? AND coalesce(library, 'all') = 'all'",
            [run_id],
        ),
        "crossovers": _lookup(path, "SELECT * FROM crossovers WHERE run_id = ?", [run_id]),
        "oversubscribed": oversubscribed_ranks(path, run_id),
        "calibrations": calibration_order(path, run_id),
        "inferred": _lookup(path, "SELECT * FROM cell_inferences WHERE run_id = ?", [run_id]),
    }
