"""A run's intervals widened by its host's run-to-run history (the rule:
runners.domain.verdict.history): the runs and points from the store, the widening stored with the
run."""

from __future__ import annotations

import math
from pathlib import Path

from runners import store
from runners.domain.verdict.history import EARLIER_RUNS, RunToRun, run_to_run
from runners.store.intervals import apply_history
from runners.store.run_reads import earlier_runs_on_host

Group = tuple[int, bool]  # (ranks, oversubscribed)


def host_history(path: Path, run_id: str) -> dict[Group, RunToRun]:
    """Per group size (dedicated and oversubscribed apart), where a repeat of the run lands,
    from the run and its host's most recent earlier runs at the points they share."""
    earlier = earlier_runs_on_host(path, run_id, EARLIER_RUNS)
    if not earlier:
        return {}
    frame = store.ok_points(path, [run_id, *earlier])
    by_group: dict[Group, dict[tuple, dict[str, float]]] = {}
    for row in frame.itertuples(index=False):
        point = (row.algorithm, row.bytes, row.dtype, row.op)
        group = by_group.setdefault((int(row.ranks), bool(row.oversubscribed)), {})
        group.setdefault(point, {})[row.run_id] = math.log(row.median_s)
    found = {g: run_to_run(points, run_id) for g, points in by_group.items()}
    return {g: spread for g, spread in found.items() if spread is not None}


def widen_by_history(path: Path, run_id: str) -> dict[Group, RunToRun]:
    """Widen the run's stored intervals to where a repeat lands and record how with the run
    (from the launches' intervals each time: analysing again changes nothing)."""
    spreads = host_history(path, run_id)
    bounds = {g: (s.shift - s.half, s.shift + s.half) for g, s in spreads.items()}
    record = {
        f"{ranks}{' oversubscribed' if over else ''}": spread.as_json()
        for (ranks, over), spread in sorted(spreads.items())
    }
    apply_history(path, run_id, bounds, record)
    return spreads
