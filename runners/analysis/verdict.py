"""The verdict of a stored run (runners.domain.verdict.summary over its winners and crossovers), and
its winners per group as tables (runners.domain.verdict.winner_table)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runners import store
from runners.analysis.checks import stored_spec
from runners.domain.nodes.network import nodes_line
from runners.domain.verdict.summary import verdict_lines
from runners.domain.verdict.winner_table import group_tables


def run_verdict(path: store.Source, run: Mapping[str, Any]) -> list[str]:
    """The verdict of a stored, analysed run ([] before its analysis), said first for a run
    measured on emulated nodes."""
    lines = verdict_lines(**store.verdict_inputs(path, run["run_id"]))
    return [*_on_nodes(run), *lines] if lines else lines


def _on_nodes(run: Mapping[str, Any]) -> list[str]:
    """Where a run measured on nodes asked for ran (emulated, or a cluster launcher's), in one
    line ([] for any other run; a simulated run's platform is said by its own banner)."""
    environment = run.get("environment")
    if isinstance(environment, dict) and "simulated" in environment:
        return []
    spec = stored_spec(run)
    if spec is not None and spec.nodes.real and spec.nodes.placed:
        return [spec.nodes.launcher_line()]
    if spec is None or not spec.nodes.emulated:
        return []
    return [nodes_line(spec.nodes.ranks_per_node, spec.placement, spec.shaped_network)]


def run_tables(path: store.Source, run: Mapping[str, Any]) -> list[str]:
    """Per group, the stored winners as a table (runners.domain.verdict.winner_table): best,
    runner-up,
    margin, the library default and the speed-up over it ([] before the analysis)."""
    found = store.verdict_inputs(path, run["run_id"])
    medians = store.point_medians(path, run["run_id"])
    return group_tables(found["winners"], medians, found["oversubscribed"], found["inferred"])
