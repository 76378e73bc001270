"""Data of the Assumptions page and the badges above every chart."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from runners.domain.model.calibration_id import with_caveat
from runners.domain.verdict.assumptions import MEANINGS
from runners.store.dashboard_reads.base import (
    OWN_CALIBRATIONS,
    Catalog,
    Connection,
    Scope,
    StorePath,
    _catalog,
    _df,
    _open,
    calibration_params,
)
from runners.store.dashboard_reads.runs import prediction_calibrations

# --- assumptions -------------------------------------------------------------------------------


def _checks_cte(cat: Catalog) -> str:
    """CTEs `pts` (the run's points), `checks` (what its analysis recorded) and `scoped`.

    `scoped`: the checks that apply to individual points, i.e. without the run-level summary
    row of a check that also has per-point rows. A run the analysis has not checked has no
    rows here: the page says so rather than deriving checks of its own.
    Parameters: $run and $cal (the calibration, which filters a calibration_id column: its
    rows and other libraries' namesakes').
    """
    cal_filter = (
        f"AND (calibration_id IS NULL OR $cal IS NULL OR calibration_id {OWN_CALIBRATIONS})"
        if cat.has("assumptions", "calibration_id")
        else ""
    )
    return f"""
    pts AS (
        SELECT point_id, algorithm, ranks, bytes, dtype, op, status, oversubscribed, collective
        FROM points WHERE run_id = $run
    ), checks AS (
        SELECT point_id, name, state, detail FROM assumptions
        WHERE run_id = $run {cal_filter}
    ), scoped AS (
        SELECT * FROM checks
        WHERE point_id IS NOT NULL
           OR name NOT IN (SELECT name FROM checks WHERE point_id IS NOT NULL)
    )"""


_SUMMARY_SQL = """
SELECT c.name, c.state, count(*) AS checks, count(c.point_id) AS points,
       any_value(c.detail ORDER BY c.point_id NULLS FIRST) AS detail
FROM scoped c LEFT JOIN pts p USING (point_id)
WHERE c.point_id IS NULL OR (
    ($ranks IS NULL OR p.ranks = $ranks) AND ($dtype IS NULL OR p.dtype = $dtype)
    AND ($op IS NULL OR p.op = $op) AND coalesce(p.collective, 'allreduce') = $collective
    AND ($algorithms IS NULL OR list_contains($algorithms, p.algorithm)))
GROUP BY ALL ORDER BY c.name, c.state
"""


def _summary(con: Connection, cat: Catalog, scope: Scope) -> pd.DataFrame:
    """Assumption checks within the scope, per (name, state), with counts and an example."""
    return _df(con, f"WITH {_checks_cte(cat)} {_SUMMARY_SQL}", scope.params())


def assumption_summary(path: StorePath, scope: Scope) -> pd.DataFrame:
    """Per (name, state): how many checks and points in ``scope``, with one detail."""
    with _open(path) as con:
        return _summary(con, _catalog(con), scope)


# The run's one summary: the stored run-level rows (point_id NULL: each point check's summary
# the analysis wrote, and the run checks; of the calibrations only the run's own, and each
# other library's namesake), with how many points each state of a point check covers.
_RUN_SUMMARY_SQL = f"""
WITH levels AS (
    SELECT name, state, detail FROM assumptions
    WHERE run_id = $run AND point_id IS NULL
      AND (calibration_id IS NULL OR $cal IS NULL OR calibration_id {OWN_CALIBRATIONS})
), counted AS (
    SELECT name, state, count(*) AS points FROM assumptions
    WHERE run_id = $run AND point_id IS NOT NULL GROUP BY ALL
)
SELECT l.name, l.state, count(*) AS checks, coalesce(any_value(c.points), 0) AS points,
       min(l.detail) AS detail
FROM levels l LEFT JOIN counted c USING (name, state) GROUP BY l.name, l.state
UNION ALL
SELECT c.name, c.state, 0 AS checks, c.points, NULL AS detail FROM counted c
WHERE NOT EXISTS (SELECT 1 FROM levels l WHERE l.name = c.name AND l.state = c.state)
ORDER BY name, state
"""


@dataclass(frozen=True)
class RunAssumptions:
    """A run's one assumption summary (per name and state: checks, points, one detail) and
    the calibration whose checks it holds (the run's first: its launches', else the one made
    before it; None for a run without predictions)."""

    summary: pd.DataFrame
    calibration_id: str | None

    def words(self) -> str:
        """What the summary counts, for its line: 'the whole run, calibration <id>'."""
        cal = f", calibration {with_caveat(self.calibration_id)}" if self.calibration_id else ""
        return f"the whole run{cal}"


def run_assumptions(path: StorePath, run_id: str) -> RunAssumptions:
    """The run's assumption summary, the same on every page whatever the page's view or
    calibration picker: read from the stored run-level rows."""
    with _open(path) as con:
        calibrations = prediction_calibrations(path, run_id)
        cal = calibrations[0] if calibrations else None
        summary = _df(con, _RUN_SUMMARY_SQL, {"run": run_id, **calibration_params(cal)})
    return RunAssumptions(summary, cal)


@dataclass(frozen=True)
class AssumptionData:
    """A run's checks one per row (with the point's grid) and their summary."""

    checks: pd.DataFrame
    summary: pd.DataFrame


def assumptions_data(
    path: StorePath, run_id: str, calibration_id: str | None = None
) -> AssumptionData:
    """Every check the run's analysis recorded and the per-name summary."""
    scope = Scope(run_id, calibration_id=calibration_id)
    with _open(path) as con:
        cat = _catalog(con)
        checks = _df(
            con,
            f"WITH {_checks_cte(cat)} "
            "SELECT c.name, c.state, p.algorithm, p.ranks, p.bytes, p.dtype, p.op, "
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


def assumption_matrix(checks: pd.DataFrame) -> pd.DataFrame:
    """One row per assumption, one column per group size (and `run` for run-level checks):
    'holds', or 'violated 3/7' / 'unknown 2/7' (the worst state and how many points of the
    group it covers), beside what a break means for the model."""
    rows = []
    for name, mine in checks.groupby("name", sort=False):
        row: dict[str, str] = {"assumption": str(name)}
        for ranks, group in mine.groupby(mine["ranks"].fillna(-1).astype(int)):
            column = "run" if ranks < 0 else f"p={ranks}"
            row[column] = _cell(group["state"])
        row["what a break means"] = MEANINGS.get(str(name), "")
        rows.append(row)
    frame = pd.DataFrame(rows).fillna("")
    groups = sorted((c for c in frame.columns if c.startswith("p=")), key=lambda c: int(c[2:]))
    ordered = ["assumption", *(["run"] if "run" in frame else []), *groups, "what a break means"]
    return frame[ordered]


def _cell(states: pd.Series) -> str:
    for state in ("violated", "unknown"):
        hits = int((states == state).sum())
        if hits:
            return state if len(states) == 1 else f"{state} {hits}/{len(states)}"
    return "holds"
