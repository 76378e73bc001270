"""Crossovers page: the best algorithm over ranks x bytes, measured beside predicted."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui


def _dtype_op(grid: pd.DataFrame) -> tuple[str, str]:
    """Datatype and op pickers over what the run measured."""
    left, right = st.columns(2)
    dtype = ui.choose("Datatype", sorted(grid["dtype"].unique()), "dtype", container=left)
    ops = sorted(grid[grid["dtype"] == dtype]["op"].unique())
    return str(dtype), str(ui.choose("Op", ops, "op", container=right))


def _percent(value: float) -> str:
    """A share as a percentage, or 'n/a'."""
    return "n/a" if value is None or math.isnan(value) else f"{value:.0%}"


def _agreement(data: queries.CrossoverData, run_id: str) -> None:
    """Headline figures of the whole run, then each group of this dtype and op, as stored by
    the analysis (never recomputed here)."""
    if data.agreement.empty:
        st.info(
            "No agreement stored for this run and calibration yet: run "
            f"`collsweep analyze {run_id}` to compute it."
        )
        return
    whole = data.agreement[data.agreement["scope"] == "run"]
    row = whole.iloc[0] if not whole.empty else None
    a, b, c = st.columns(3)
    share = math.nan if row is None else float(row["model_pick_share"])
    slowdown = math.nan if row is None else float(row["mean_slowdown"])
    a.metric("Model picks the measured best (whole run)", _percent(share))
    b.metric("Mean slow-down of the model's pick", _percent(slowdown))
    c.metric("Points compared", 0 if row is None else int(row["points"]))
    st.caption("Per group of this datatype and op, as recorded by the analysis:")
    groups = data.agreement[data.agreement["scope"] != "run"]
    ui.table(groups.drop(columns=["scope"]), key="agreement_table")


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    chosen = ui.choose_run_with_points(path)
    if chosen is None:
        return
    run_id, grid = chosen
    dtype, op = _dtype_op(grid)
    cals = queries.prediction_calibrations(path, run_id)
    cal = ui.choose("Calibration of the predictions", cals, "cal") if cals else None
    if cal is None:
        st.info("No predictions stored for this run yet: only measured choices are shown.")
    modelled = not ui.toggle(
        "Let every measured algorithm compete (also 'mpi', which the model cannot predict)",
        "everyone",
    )
    scope = queries.Scope(run_id, dtype=dtype, op=op, calibration_id=cal)
    data = queries.crossover_data(path, scope, modelled_only=modelled)
    ui.show_badges(data.summary)
    ui.chart(charts.best_heatmaps(data.measured_best, data.predicted_best), "best_heatmaps")
    st.subheader("Agreement")
    _agreement(data, run_id)
    st.subheader("Crossovers and their uncertainty")
    st.caption("algorithm_a is faster below `bytes`, algorithm_b above; low/high bound it.")
    ui.table(data.crossovers, key="crossover_table")


ui.run_page("Crossovers", main)
