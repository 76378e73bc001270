"""Assumptions page: each run's checks of the model's assumptions, holds / violated / unknown."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import queries, ui

STATES = ("violated", "unknown", "holds")


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    run_id = ui.choose_run(queries.runs_table(path))
    own = queries.run_assumptions(path, run_id).calibration_id  # the run's, as on every page
    data = queries.assumptions_data(path, run_id, own)
    if data.checks.empty:
        st.info(
            "This run's assumptions are not checked yet: the analysis records them after a "
            "sweep (`collsweep analyze RUN` checks an older run)."
        )
        return
    ui.show_run_assumptions(path, run_id, details=False)
    st.caption(
        "Each assumption per group size: holds, or the worst state and how many of the group's "
        "points it covers; `run`: checks of the whole run (of the calibrations, the run's own, "
        "named above). Recorded by the analysis after each sweep, one home for each rule."
    )
    ui.table(queries.assumption_matrix(data.checks), key="assumption_matrix")
    with st.expander("Every check, point by point"):
        left, right = st.columns(2)
        states = ui.choose_many("State", list(STATES), "state", container=left)
        all_names = sorted(data.checks["name"].unique())
        names = ui.choose_many("Assumption", all_names, "name", container=right)
        chosen = data.checks["state"].isin(states) & data.checks["name"].isin(names)
        ui.table(data.checks[chosen], key="assumption_table")
    with st.expander("Recorded checks of every run"):
        ui.table(queries.assumption_overview(path), key="assumption_overview")


ui.run_page("Assumptions", main)
