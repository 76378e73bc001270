"""Data of the Placements page: runs of one grid on several placements (a sweep of several
ranks_per_node makes a run each), their winners, crossovers and medians side by side."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from runners import store
from runners.domain.sweep.spec import SpecError, parse_spec
from runners.domain.verdict.placements import PLACED_NAME, Run
from runners.store.dashboard_reads.base import StorePath


@dataclass(frozen=True)
class PlacementsData:
    """The chosen runs as placements (runners.domain.verdict.placements.Run: ranks per node,
    run id, winners, crossovers), one host first, then the fewest nodes first, and their ok
    points' medians (run_id, algorithm, collective, ranks, bytes, dtype, op, median_s)."""

    runs: list[Run]
    medians: pd.DataFrame


def placements_data(path: StorePath, run_ids: Sequence[str]) -> PlacementsData:
    """What the Placements page shows of these runs (each its placement from its spec)."""
    runs: list[Run] = []
    for run_id in run_ids:
        found = store.verdict_inputs(path, run_id)
        runs.append((ranks_per_node(path, run_id), run_id, found["winners"], found["crossovers"]))
    runs.sort(key=lambda run: (run[0] != 0, -run[0]))  # one host, then the fewest nodes first
    columns = ["run_id", "algorithm", "collective", "ranks", "bytes", "dtype", "op", "median_s"]
    medians = store.ok_points(path, list(run_ids))[columns] if run_ids else pd.DataFrame()
    return PlacementsData(runs, medians)


def ranks_per_node(path: StorePath, run_id: str) -> int:
    """The nodes' size a run's spec asked for (0: every rank on one host, or unreadable)."""
    run = store.get_run(path, run_id)
    try:
        return parse_spec(str((run or {}).get("spec_toml") or "")).nodes.ranks_per_node
    except SpecError:
        return 0


def newest_placements(runs: pd.DataFrame) -> list[str]:
    """The runs of the newest sweep of several placements (`runs`: the Runs table, newest
    first): the newest run named for its placement and those of the same command."""
    placed = runs[runs["name"].fillna("").str.contains(PLACED_NAME, regex=False)]
    if placed.empty:
        return []
    command = placed.iloc[0]["command_line"]
    return placed[placed["command_line"] == command]["run_id"].tolist()
