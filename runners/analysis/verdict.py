"""The verdict of a stored run (runners.domain.verdict over its winners and crossovers)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runners import store
from runners.domain.verdict import verdict_lines


def run_verdict(path: Path, run: Mapping[str, Any]) -> list[str]:
    """The verdict of a stored, analysed run ([] before its analysis)."""
    return verdict_lines(**store.verdict_inputs(path, run["run_id"]))
