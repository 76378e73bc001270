"""Data of the Override impact page: a library algorithm against its baseline, the autotuned
default (a forced algorithm against its library's own; Open MPI's default against MPICH's)."""

from __future__ import annotations

import pandas as pd

from runners.domain.verdict.speedup import Speedup
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


SPEEDUP_TEXT = "speed-up over the default"  # the column that says it in words


def against_default(path: StorePath, scope: Scope, algorithm: str) -> pd.DataFrame:
    """A library algorithm against its baseline (a library's autotuned default) at every
    (ranks, bytes) of the view, as the analysis stored it (against_default): both medians, the
    paired time ratio algorithm / baseline with its interval, the verdict (faster, slower,
    within noise), and the same pair said the one way collsweep says a speed-up
    (runners.domain.verdict.speedup): speedup = baseline time / algorithm time, its interval,
    and SPEEDUP_TEXT ('1.6x faster [1.2, 2.1]')."""
    with _open(path) as con:
        frame = _df(con, _AGAINST_DEFAULT_SQL, {**scope.params(), "algorithm": algorithm})
    said = [
        Speedup.against(r.ratio, r.ratio_low, r.ratio_high) for r in frame.itertuples(index=False)
    ]
    return frame.assign(
        speedup=[s.ratio for s in said],
        speedup_low=[s.low for s in said],
        speedup_high=[s.high for s in said],
        **{SPEEDUP_TEXT: [s.text() for s in said]},
    )


def readable(ratios: pd.DataFrame) -> pd.DataFrame:
    """An against_default frame as a page's table shows it: the speed-up in words, without
    the raw ratios it is made of."""
    raw = ["ratio", "ratio_low", "ratio_high", "speedup", "speedup_low", "speedup_high"]
    return ratios.drop(columns=[c for c in raw if c in ratios.columns])


def override_impact(path: StorePath, scope: Scope, forced: str) -> pd.DataFrame:
    """Speed-up of ``forced`` over its baseline (against_default): speedup = baseline time /
    forced time from the paired launches (> 1: the override wins), with its interval."""
    return against_default(path, scope, forced).rename(columns={"algorithm_s": "forced_s"})


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
