"""The verdict of a stored run (runners.domain.verdict.summary over its winners and crossovers), and
its winners per group as tables (runners.domain.verdict.winner_table)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runners import store
from runners.domain.verdict.summary import verdict_lines
from runners.domain.verdict.winner_table import group_tables


def run_verdict(path: store.Source, run: Mapping[str, Any]) -> list[str]:
    """The verdict of a stored, analysed run ([] before its analysis)."""
    return verdict_lines(**store.verdict_inputs(path, run["run_id"]))


def run_tables(path: store.Source, run: Mapping[str, Any]) -> list[str]:
    """Per group, the stored winners as a table (runners.domain.verdict.winner_table): best,
    runner-up,
    margin, the library default and the speed-up over it ([] before the analysis)."""
    found = store.verdict_inputs(path, run["run_id"])
    medians = store.point_medians(path, run["run_id"])
    return group_tables(found["winners"], medians, found["oversubscribed"])
