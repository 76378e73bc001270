"""Data of the Verdict page: the run's answer per size (runners.domain.verdict.winner_table), its
precision, and whether its winners are provisional; all read from what the analysis stored."""

from __future__ import annotations

from dataclasses import dataclass

from runners import store
from runners.domain.verdict.provisional import stored_reason
from runners.domain.verdict.winner_table import Cell, cells_of
from runners.store.dashboard_reads.base import StorePath


@dataclass(frozen=True)
class VerdictData:
    """A run's cells (every group, every size), its precision and its provisional reason."""

    cells: list[Cell]
    points_met: int
    points_ok: int
    provisional_reason: str
    oversubscribed: set[int]


def verdict_data(path: StorePath, run_id: str) -> VerdictData:
    """The stored winners of every group as cells, priced with the points' medians."""
    inputs = store.verdict_inputs(path, run_id)
    cells = cells_of(inputs["winners"], store.point_medians(path, run_id), inputs["inferred"])
    reason = stored_reason(inputs["winners"]) or ""
    met, ok = store.precision_counts(path, run_id)
    return VerdictData(cells, met, ok, reason, set(inputs["oversubscribed"]))
