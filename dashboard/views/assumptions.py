"""Assumptions page: each run's checks of the model's assumptions, holds / violated / unknown."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import queries, ui

STATES = ("violated", "unknown", "holds")


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    run_id = ui.choose_run(queries.runs_table(path))
    data = queries.assumptions_data(path, run_id)
    if data.checks.empty:
        st.info(
            "This run's assumptions are not checked yet: the analysis records them after a "
            "sweep (`collsweep analyze RUN` checks an older run)."
        )
        return
    ui.show_badges(data.summary)
    counts = data.checks["state"].value_counts()
    for col, state in zip(st.columns(len(STATES)), STATES, strict=True):
        col.metric(state, int(counts.get(state, 0)))
    st.caption("The checks come from the analysis after each sweep, one home for each rule.")
    left, right = st.columns(2)
    states = ui.choose_many("State", list(STATES), "state", container=left)
    all_names = sorted(data.checks["name"].unique())
    names = ui.choose_many("Assumption", all_names, "name", container=right)
    shown = data.checks[data.checks["state"].isin(states) & data.checks["name"].isin(names)]
    ui.table(shown, key="assumption_table")
    with st.expander("Recorded checks of every run"):
        ui.table(queries.assumption_overview(path), key="assumption_overview")


ui.run_page("Assumptions", main)
