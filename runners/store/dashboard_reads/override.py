"""Data of the Override impact page: a library algorithm against its baseline, the autotuned
default (a forced algorithm against its library's own; Open MPI's default against MPICH's)."""

from __future__ import annotations

import pandas as pd

from runners.store.dashboard_reads.base import Scope, StorePath, _df, _open

# --- override impact ---------------------------------------------------------------------------


_AGAINST_DEFAULT_SQL = """
SELECT a.ranks, a.bytes, f.median_s AS algorithm_s, m.median_s AS baseline_s,
       a.ratio, a.ratio_low, a.ratio_high, a.verdict, a.launches, a.pairing,
       f.oversubscribed OR m.oversubscribed AS oversubscribed
FROM against_default a
JOIN points f ON f.run_id = a.run_id AND f.algorithm = a.algorithm AND f.ranks = a.ranks
 AND f.bytes = a.bytes AND f.dtype = a.dtype AND f.op = a.op
JOIN points m ON m.run_id = a.run_id AND m.algorithm = coalesce(a.baseline, 'mpi')
 AND m.ranks = a.ranks
 AND m.bytes = a.bytes AND m.dtype = a.dtype AND m.op = a.op
WHERE a.run_id = $run AND a.algorithm = $algorithm AND a.dtype = $dtype AND a.op = $op
  AND a.ratio > 0
ORDER BY a.ranks, a.bytes
"""


def against_default(path: StorePath, scope: Scope, algorithm: str) -> pd.DataFrame:
    """A library algorithm against its baseline (a library's autotuned default) at every
    (ranks, bytes) of the view, as the analysis stored it (against_default): both medians, the
    paired time ratio algorithm / baseline with its interval, and the verdict (faster, slower,
    within noise)."""
    with _open(path) as con:
        return _df(con, _AGAINST_DEFAULT_SQL, {**scope.params(), "algorithm": algorithm})


def override_impact(path: StorePath, scope: Scope, forced: str) -> pd.DataFrame:
    """Speed-up of ``forced`` over its baseline (against_default): speedup = baseline time /
    forced time from the paired launches (> 1: the override wins), with its interval."""
    frame = against_default(path, scope, forced).rename(columns={"algorithm_s": "forced_s"})
    return frame.assign(
        speedup=1 / frame["ratio"],
        speedup_low=1 / frame["ratio_high"],
        speedup_high=1 / frame["ratio_low"],
    )


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


_BASELINES_SQL = """
SELECT DISTINCT algorithm, coalesce(baseline, 'mpi') AS baseline FROM against_default
WHERE run_id = $run ORDER BY algorithm
"""


def baselines(path: StorePath, run_id: str) -> dict[str, str]:
    """Every algorithm of a run the analysis set against a default, and that default."""
    with _open(path) as con:
        frame = _df(con, _BASELINES_SQL, {"run": run_id})
    return dict(zip(frame["algorithm"], frame["baseline"], strict=True))
