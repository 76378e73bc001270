"""Crossovers page: the best algorithm over ranks x bytes, measured beside predicted."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.model.calibration_id import with_caveat
from runners.domain.units import format_bytes


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
    if data.agreement.empty and not data.measured_best.empty:
        st.info(
            "No agreement for this calibration: no cell of this run has two algorithms with "
            "a model of their own for the model to pick between."
        )
        return
    if data.agreement.empty:
        st.info(
            "No agreement stored for this run and calibration yet: run "
            f"`collsweep analyze {run_id}` to compute it."
        )
        return
    scopes = data.agreement.set_index("scope")
    where = "dedicated" if "dedicated" in scopes.index else "run"
    row = scopes.loc[where] if where in scopes.index else None
    a, b, c, d = st.columns(4)

    def figure(column: str) -> float:
        return math.nan if row is None or column not in row else float(row[column])

    label = "groups with a core per rank" if where == "dedicated" else "the whole run"
    a.metric("Model picks the measured best", _percent(figure("model_pick_share")))
    b.metric("Picks the right schedule", _percent(figure("same_model_share")))
    c.metric("Median slow-down of its pick", _percent(figure("median_slowdown")))
    d.metric("Cells compared", 0 if row is None else int(row["points"]))
    st.caption(f"Over {label}.")
    if "oversubscribed" in scopes.index:
        st.caption(
            "Oversubscribed groups (more ranks than cores) are left out of these figures; "
            "their rows are below."
        )
    st.caption("Per group of this datatype and op, as recorded by the analysis:")
    groups = data.agreement[~data.agreement["scope"].isin(["run", "dedicated"])]
    ui.table(_agreement_table(groups), key="agreement_table")


AGREEMENT_COLUMNS = {  # stored column: what the table calls it (shares and slowdowns in %)
    "model_pick_share": "picks the measured best (%)",
    "same_model_share": "picks the right schedule (%)",
    "median_slowdown": "median slow-down (%)",
    "mean_slowdown": "mean slow-down (%)",
}


def _agreement_table(groups: pd.DataFrame) -> pd.DataFrame:
    """One row per group (and one for all oversubscribed groups together), in percent."""
    shown = pd.DataFrame(
        {
            "group": groups["scope"].replace({"oversubscribed": "all oversubscribed groups"}),
            "cells": groups["points"],
        }
    )
    for column, title in AGREEMENT_COLUMNS.items():
        shown[title] = (groups[column] * 100).round(1)
    return shown


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    chosen = ui.choose_run_with_points(path)
    if chosen is None:
        return
    run_id, grid = chosen
    dtype, op = _dtype_op(grid)
    cals = queries.prediction_calibrations(path, run_id)
    cal = (
        ui.choose("Calibration of the predictions", cals, "cal", format_func=with_caveat)
        if cals
        else None
    )
    if cal is None:
        st.info("No predictions stored for this run yet: only measured choices are shown.")
    collective = str(grid["collective"].iloc[0])
    scope = queries.Scope(run_id, dtype=dtype, op=op, calibration_id=cal, collective=collective)
    data = queries.crossover_data(path, scope)
    ui.show_verdict(queries.verdict(path, run_id, dtype, op, collective=collective), run_id)
    ui.show_run_assumptions(path, run_id, data.summary, scope.words())
    ui.chart(charts.best_heatmaps(data.measured_best, data.predicted_best), "best_heatmaps")
    st.caption(
        "Left: the verdict's winners, every algorithm competing ('mpi' too), grey where the "
        "paired launches could not tell the two fastest apart (hover: which two). Right: the "
        "model's pick among "
        "the algorithms it can predict; ✗ where it differs from a decided winner it could "
        "have named."
    )
    st.subheader("Agreement")
    _agreement(data, run_id)
    st.subheader("Crossovers and their uncertainty")
    every = ui.toggle("Also pairs that never win a cell", "all_pairs")
    shown = data.crossovers if every else contending(data.crossovers, data.measured_best)
    st.caption(
        "The first algorithm is faster below the size, the second above; a measured one lies "
        "between two measured sizes. "
        + ("" if every else "Only pairs whose two algorithms both win or tie a cell here.")
    )
    ui.table(readable(shown), key="crossover_table")


def contending(crossovers: pd.DataFrame, winners: pd.DataFrame) -> pd.DataFrame:
    """The crossovers whose two algorithms each win, or tie for, some cell of their group."""
    if crossovers.empty or winners.empty:
        return crossovers
    named = set()
    for r in winners.itertuples(index=False):
        named.add((r.ranks, r.algorithm))
        if not r.decided:  # a tie: both could be the best here
            named.add((r.ranks, r.runner_up))
    keep = [
        (r.ranks, r.algorithm_a) in named and (r.ranks, r.algorithm_b) in named
        for r in crossovers.itertuples(index=False)
    ]
    return crossovers[keep]


def readable(crossovers: pd.DataFrame) -> pd.DataFrame:
    """The crossovers table for reading: sizes with units, plain headers, blanks not None."""
    if crossovers.empty:
        return crossovers

    def between(row) -> str:
        if pd.isna(row.low_bytes) or pd.isna(row.high_bytes):
            return ""
        return f"{format_bytes(row.low_bytes)} .. {format_bytes(row.high_bytes)}"

    return pd.DataFrame(
        {
            "group": [f"p={r}" for r in crossovers["ranks"]],
            "faster below": crossovers["algorithm_a"],
            "faster above": crossovers["algorithm_b"],
            "kind": crossovers["kind"],
            "at": [format_bytes(b) for b in crossovers["bytes"]],
            "measured between": [between(r) for r in crossovers.itertuples(index=False)],
            "calibration": crossovers["calibration_id"].fillna(""),
            "how": crossovers["detail"].fillna(""),
        }
    )


ui.run_page("Crossovers", main)
