"""Writing a run's intervals widened by its host's history (runners.analysis.history).

Each ok point keeps the interval its launches gave in launch_low_s / launch_high_s (copied on
the first widening); its stored interval becomes that interval widened to where a repeat lands,
from the launches' interval every time, so the result does not depend on how often it runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from runners.domain.status import PointStatus
from runners.store.store import writing

KEEP_LAUNCHES = """
UPDATE points SET launch_low_s = coalesce(launch_low_s, interval_low_s),
                  launch_high_s = coalesce(launch_high_s, interval_high_s)
WHERE run_id = ? AND status = ?
"""
FROM_LAUNCHES = """
UPDATE points SET interval_low_s = launch_low_s, interval_high_s = launch_high_s
WHERE run_id = ? AND status = ? AND launch_low_s IS NOT NULL
"""
WIDEN = """
UPDATE points SET interval_low_s = least(launch_low_s, median_s * exp($low)),
                  interval_high_s = greatest(launch_high_s, median_s * exp($high))
WHERE run_id = $run AND status = $ok AND median_s > 0 AND launch_low_s IS NOT NULL
  AND ranks = $ranks AND coalesce(oversubscribed, false) = $over
"""
HALFWIDTH = """
UPDATE points SET interval_rel_halfwidth = (interval_high_s - interval_low_s) / 2 / median_s
WHERE run_id = ? AND status = ? AND median_s > 0 AND interval_low_s IS NOT NULL
"""


def apply_history(
    path: Path | str,
    run_id: str,
    bounds: Mapping[tuple[int, bool], tuple[float, float]],
    record: dict,
) -> None:
    """Widen the run's ok points' intervals to hold median x exp(low) .. median x exp(high) of
    each (ranks, oversubscribed) group and store `record` as runs.interval_history, in one
    transaction."""
    with writing(path) as con:
        ok = [run_id, PointStatus.OK]
        con.execute(KEEP_LAUNCHES, ok)
        con.execute(FROM_LAUNCHES, ok)
        for (ranks, over), (low, high) in bounds.items():
            keyed = {"low": low, "high": high, "run": run_id, "ranks": ranks, "over": over}
            con.execute(WIDEN, keyed | {"ok": PointStatus.OK})
        con.execute(HALFWIDTH, ok)
        con.execute(
            "UPDATE runs SET interval_history = ? WHERE run_id = ?", [json.dumps(record), run_id]
        )
