"""Data of the Verdict page: the run's answer per size (runners.domain.verdict.winner_table), its
precision, and whether its winners are provisional; all read from what the analysis stored; for
an adaptive run, its rounds: every point it chose, when, why, and whether it was measured."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from runners import store
from runners.domain.libraries.catalog import collective_of
from runners.domain.sweep.records import PointKey
from runners.domain.sweep.spec import SpecError, parse_spec
from runners.domain.units import format_bytes
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
    adaptive: dict[str, Any] = field(default_factory=dict)  # runs.adaptive ({}: not adaptive)


def verdict_data(path: StorePath, run_id: str) -> VerdictData:
    """The stored winners of every group as cells, priced with the points' medians."""
    inputs = store.verdict_inputs(path, run_id)
    cells = cells_of(inputs["winners"], store.point_medians(path, run_id), inputs["inferred"])
    reason = stored_reason(inputs["winners"]) or ""
    met, ok = store.precision_counts(path, run_id)
    rounds = (store.get_run(path, run_id) or {}).get("adaptive") or {}
    return VerdictData(cells, met, ok, reason, set(inputs["oversubscribed"]), dict(rounds))


CHOICE_COLUMNS = [
    "round", "collective", "ranks", "dtype", "op", "bytes", "size", "algorithm", "status",
    "reason",
]  # fmt: skip


def adaptive_choices(path: StorePath, run_id: str) -> pd.DataFrame:
    """An adaptive run's chosen points, round by round (its stored spec's adaptive_points),
    each with its stored status (`not measured` where a round has not measured it yet); no
    rows for any other run."""
    run = store.get_run(path, run_id) or {}
    try:
        spec = parse_spec(str(run.get("spec_toml") or ""))
    except SpecError:
        return pd.DataFrame(columns=CHOICE_COLUMNS)
    states = store.point_states(path, run_id)
    rows = []
    for algorithm, ranks, nbytes, dtype, op, index, reason in spec.adaptive_points:
        state = states.get(PointKey(run_id, algorithm, ranks, nbytes, dtype, op).point_id())
        status = str(state.status) if state else "not measured"
        collective = collective_of(algorithm)
        size = format_bytes(nbytes)
        rows.append([index, collective, ranks, dtype, op, nbytes, size, algorithm, status, reason])
    return pd.DataFrame(rows, columns=CHOICE_COLUMNS)
