"""The verdict of a stored run (runners.domain.verdict.summary over its winners and crossovers), and
its winners per group as tables (runners.domain.verdict.winner_table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runners import store
from runners.analysis.checks import stored_spec
from runners.domain.adaptive.rounds import rounds_words
from runners.domain.nodes.network import nodes_line
from runners.domain.units import counted
from runners.domain.verdict.summary import verdict_lines
from runners.domain.verdict.winner_table import group_tables


def run_verdict(path: store.Source, run: Mapping[str, Any]) -> list[str]:
    """The verdict of a stored, analysed run ([] before its analysis), said first for a run
    measured on emulated nodes, and for an adaptive run how its rounds ended."""
    inputs = store.verdict_inputs(path, run["run_id"])
    lines = verdict_lines(**inputs)
    return [*_on_nodes(run), *adaptive_lines(run, inputs["inferred"]), *lines] if lines else lines


def adaptive_lines(run: Mapping[str, Any], inferred: Sequence[Mapping[str, Any]]) -> list[str]:
    """An adaptive run's rounds and its inferred cells, in two lines ([] for any other run)."""
    rounds = run.get("adaptive")
    if not isinstance(rounds, dict):
        return []
    settled = sum(bool(row["settled"]) for row in inferred)
    return [
        f"adaptive: {rounds_words(rounds)}",
        f"inferred, not measured: {counted(len(inferred), 'cell')} ({settled} between two "
        f"measured sizes won by the same algorithm, {len(inferred) - settled} picked by the "
        "model corrected by the measurements); each says so below",
    ]


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
