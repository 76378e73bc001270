"""What kind of run a page shows, said before its figures: one imported from another tool (one
launch a file), or one simulated (not measured). Read from the run's own record, once a page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import queries
from runners.domain.sweep.simulated_run import not_measured_words, simulated_table


def simulation_of_run(path: Path, run_id: str) -> dict[str, Any] | None:
    """How a simulated run was simulated (its spec's `[simulated]` table), or None."""
    details = queries.run_details(path, [run_id])
    return simulated_table(details["spec_toml"].iloc[0]) if len(details) else None


def show_kind(path: Path, run_id: str) -> None:
    """Say that a run was imported (runs.environment.imported: one launch per file, so one file
    gives no interval over launches; and why it was not analysed) or simulated (every figure
    the simulator's, 'measured' meaning simulated, ties the run's stated margin)."""
    details = queries.run_details(path, [run_id])
    if not len(details):
        return
    row = details.iloc[0]
    simulated = simulated_table(row["spec_toml"])
    if simulated:
        words = not_measured_words(simulated)
        st.warning(f"{words} The Scale page sets it beside measured runs.", icon=":material/lan:")
    environment = row["environment"]
    if isinstance(environment, str):
        environment = json.loads(environment)
    imported = (environment or {}).get("imported") if isinstance(environment, dict) else None
    if imported:
        st.info(_imported_words(imported), icon=":material/input:")


def _imported_words(imported: dict[str, Any]) -> str:
    words = str(imported.get("launches", f"imported from {imported.get('tool')}"))
    note = f"{words[:1].upper()}{words[1:]}: each file is one launch of the tool"
    if words.startswith("one launch"):
        note += ", so its points have no interval over launches and no winner is decided"
    if imported.get("not_analysed"):
        note += f". Not analysed: {imported['not_analysed']}"
    return note + "."
