"""Data of the Override impact page: a forced library algorithm against the autotuned one."""

from __future__ import annotations

import pandas as pd

from dashboard.data.base import Scope, StorePath, _df, _open

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
