"""Two stored runs compared point by point and cell by cell: what `collsweep compare` prints
and the Compare runs page shows, from the same rows (the rule:
runners.domain.verdict.run_comparison)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from runners.domain.status import PointStatus
from runners.domain.units import counted, format_bytes, format_duration, format_ratio
from runners.domain.verdict.history import MIN_RUNS
from runners.domain.verdict.run_comparison import (
    PointTimes,
    RatioChange,
    WinnerChange,
    ratio_change,
    summary_counts,
    winner_changes,
)
from runners.store.point_reads import point_grid
from runners.store.reads import Source, get_run, query, reading
from runners.store.storefile import StoreError

MATCHING_SQL = """
SELECT a.algorithm, a.ranks, a.bytes, a.dtype, a.op,
       a.median_s AS a_median_s, b.median_s AS b_median_s,
       coalesce(a.launch_low_s, a.interval_low_s, a.ci_low_s) AS a_low_s,
       coalesce(a.launch_high_s, a.interval_high_s, a.ci_high_s) AS a_high_s,
       coalesce(b.launch_low_s, b.interval_low_s, b.ci_low_s) AS b_low_s,
       coalesce(b.launch_high_s, b.interval_high_s, b.ci_high_s) AS b_high_s,
       coalesce(a.launches, 1) AS a_launches, coalesce(b.launches, 1) AS b_launches
FROM points a
JOIN points b ON b.algorithm = a.algorithm AND b.ranks = a.ranks AND b.bytes = a.bytes
 AND b.dtype = a.dtype AND b.op = a.op
WHERE a.run_id = $a AND b.run_id = $b AND a.status = $ok AND b.status = $ok
  AND a.median_s > 0 AND b.median_s > 0
ORDER BY a.ranks, a.dtype, a.op, a.algorithm, a.bytes
"""

WINNERS_SQL = """
SELECT ranks, dtype, op, bytes, collective, winner, decided FROM winners
WHERE run_id = ? AND coalesce(library, 'all') = 'all'
"""

POINT_COLUMNS = [
    "algorithm",
    "ranks",
    "bytes",
    "dtype",
    "op",
    "a_median_s",
    "b_median_s",
    "b_over_a",
    "ratio_low",
    "ratio_high",
    "change",
]


@dataclass
class RunComparison:
    """Run B against run A: every matching point's ratio and verdict, every cell's winners."""

    run_a: str
    run_b: str
    points: pd.DataFrame
    winners: list[WinnerChange]

    @property
    def summary(self) -> dict[str, int]:
        """Counts of slower, faster and within-noise points, decided cells, winner changes."""
        changes = [
            RatioChange(r.b_over_a, r.ratio_low, r.ratio_high)
            for r in self.points.itertuples(index=False)
        ]
        return summary_counts(changes, self.winners)


def compare_runs(path: Source, run_a: str, run_b: str) -> RunComparison:
    """Run B against run A (both must be in the store: StoreError otherwise)."""
    for run_id in (run_a, run_b):
        if get_run(path, run_id) is None:
            raise StoreError(f"no run {run_id!r} in {path}; see `collsweep runs`")
    frame = query(path, MATCHING_SQL, {"a": run_a, "b": run_b, "ok": PointStatus.OK})
    changes = [
        ratio_change(
            PointTimes(r.a_median_s, r.a_low_s, r.a_high_s, int(r.a_launches)),
            PointTimes(r.b_median_s, r.b_low_s, r.b_high_s, int(r.b_launches)),
        )
        for r in frame.itertuples(index=False)
    ]
    frame["b_over_a"] = [c.ratio for c in changes]
    frame["ratio_low"] = [c.low for c in changes]
    frame["ratio_high"] = [c.high for c in changes]
    frame["change"] = [c.verdict for c in changes]
    winners = winner_changes(
        query(path, WINNERS_SQL, [run_a]).to_dict("records"),
        query(path, WINNERS_SQL, [run_b]).to_dict("records"),
    )
    return RunComparison(run_a, run_b, frame[POINT_COLUMNS], winners)


DIMENSIONS = ("algorithm", "ranks", "bytes", "dtype", "op")  # what makes two points the same


def no_overlap_reason(source: Source, run_a: str, run_b: str) -> str:
    """Why two runs share no point, in words: the dimensions whose values do not overlap
    (e.g. "ranks: A has 2, B has 4"); "" when they do share points or a run has none."""
    with reading(source) as con:
        values = {run: point_grid(con, run)[list(DIMENSIONS)] for run in (run_a, run_b)}
    if any(frame.empty for frame in values.values()):
        return ""
    points = [set(values[run].itertuples(index=False, name=None)) for run in (run_a, run_b)]
    if points[0] & points[1]:
        return ""
    parts = []
    for dim in DIMENSIONS:
        a, b = (set(values[run][dim].tolist()) for run in (run_a, run_b))
        if not a & b:
            parts.append(f"{dim}: A has {_listed(dim, a)}, B has {_listed(dim, b)}")
    return "; ".join(parts) or "every dimension overlaps, but no combination of them does"


def _listed(dim: str, values: set) -> str:
    """A dimension's values in order (numbers as numbers, sizes in bytes' units), six at most."""
    shown = sorted(values)
    words = [format_bytes(int(v)) if dim == "bytes" else str(v) for v in shown[:6]]
    more = f" and {len(shown) - 6} more" if len(shown) > 6 else ""
    return ", ".join(words) + more


HISTORY_SQL = """
SELECT o.run_id, o.started_at, median(b.median_s / a.median_s) AS ratio, count(*) AS shared
FROM runs r
JOIN runs o ON o.host = r.host AND o.run_id <> r.run_id AND o.started_at < r.started_at
JOIN points b ON b.run_id = r.run_id AND b.status = $ok AND b.median_s > 0
JOIN points a ON a.run_id = o.run_id AND a.status = $ok AND a.median_s > 0
 AND a.algorithm = b.algorithm AND a.ranks = b.ranks AND a.bytes = b.bytes
 AND a.dtype = b.dtype AND a.op = b.op
WHERE r.run_id = $run
GROUP BY ALL
"""

SPAN_SQL = """
SELECT r.host, r.started_at, date_diff('millisecond', r.started_at, r.finished_at) / 1000 AS span_s,
       (SELECT median(interval_rel_halfwidth) FROM points p WHERE p.run_id = r.run_id
        AND p.status = $ok AND NOT coalesce(p.oversubscribed, false)) AS halfwidth
FROM runs r WHERE r.run_id = $run
"""


def time_span_note(path: Source, run_id: str) -> str:
    """Over what time the run's intervals hold: its launches' span, and the host's
    run-to-run variation learnt from earlier runs (runs.interval_history: where a repeat
    lands, which the intervals were widened to hold), or, before the history says anything,
    how far the earlier runs moved."""

    run_ok = {"run": run_id, "ok": PointStatus.OK}
    span = query(path, SPAN_SQL, run_ok)
    if span.empty or pd.isna(span["span_s"].iloc[0]):
        return ""
    halfwidth = span["halfwidth"].iloc[0]
    shown = f"+-{halfwidth:.0%}" if halfwidth <= 10 else "more than +-1000%"
    width = f" ({shown} at the median dedicated point)" if pd.notna(halfwidth) else ""
    head = (
        f"the intervals{width} cover launch-to-launch variation over "
        f"{format_duration(float(span['span_s'].iloc[0]))}"
    )
    earlier = query(path, HISTORY_SQL, run_ok)
    if earlier.empty:
        return head + f"; no earlier run on {span['host'].iloc[0]} shares its points to say more"
    gaps = span["started_at"].iloc[0] - earlier["started_at"]
    seconds = gaps.dt.total_seconds()
    when = format_duration(seconds.min())
    if len(earlier) > 1:
        when += f" .. {format_duration(seconds.max())}"
    widened = _widened(path, run_id)
    if widened:
        return (
            head + f" and the run-to-run variation of this host, from "
            f"{counted(len(earlier), 'earlier run')} ({when} before): a repeat lands {widened}"
        )
    worst = max(earlier["ratio"].max(), 1 / earlier["ratio"].min())
    return (
        head + f"; {counted(len(earlier), 'earlier run')} on this host ({when} before) measured "
        f"the points they share with it up to {format_ratio(worst)} apart at the median point "
        f"(intervals learn the host's run-to-run variation from {MIN_RUNS} runs on)"
    )


def _widened(path: Source, run_id: str) -> str:
    """Where a repeat lands per group size, as the run's intervals were widened ('' for none)."""
    record = (get_run(path, run_id) or {}).get("interval_history") or {}
    if isinstance(record, str):
        record = json.loads(record)
    return "; ".join(
        f"at p={group} within {format_ratio(value['low_factor'])} .. "
        f"{format_ratio(value['high_factor'])} of this run's medians"
        for group, value in record.items()
    )
