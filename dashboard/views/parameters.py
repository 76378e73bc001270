"""Parameters page: an algorithm's parameter as a curve (one size's time against a radix),
measured beside the model, the measured best and the model's optimum marked: does the model
pick the parameter the measurement does?"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.algorithms import FAMILIES
from runners.domain.algorithms.parameters import ParameterCurve, parameter_curves
from runners.domain.model.calibration_id import with_caveat
from runners.domain.units import format_bytes

NO_CURVE = (
    "This run sweeps no algorithm at two values of a parameter: `collsweep sweep --radixes "
    "2,4,8 --algorithms knomial,mpi:knomial` does, or `--segment-sizes 4K,64K --algorithms "
    "chain,mpi:chain`."
)


def curve_rows(points: pd.DataFrame, curve: ParameterCurve, nbytes: int) -> pd.DataFrame:
    """One size's points of the curve's members, each with its parameter's value."""
    value_of = {name: value for value, name in curve.members}
    mine = points[(points["bytes"] == nbytes) & points["algorithm"].isin(value_of)]
    return mine.assign(value=mine["algorithm"].map(value_of))


def _calibration(path: Path, run_id: str) -> str | None:
    """The calibration whose predictions are drawn (a picker where there is a choice)."""
    cals = queries.prediction_calibrations(path, run_id)
    if len(cals) < 2:
        return cals[0] if cals else None
    return ui.choose("Calibration of the predictions", cals, "cal", format_func=with_caveat)


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    chosen = ui.choose_run_with_points(path)
    if chosen is None:
        return
    run_id, grid = chosen
    curves = {c.title: c for c in parameter_curves(grid["algorithm"].unique(), FAMILIES)}
    if not curves:
        st.info(NO_CURVE, icon=":material/tune:")
        return
    curve = curves[ui.choose("Algorithm and parameter", list(curves), "curve")]
    names = {name for _, name in curve.members}
    mine = grid[grid["algorithm"].isin(names)]
    cols = st.columns(4)
    ranks = ui.choose("Ranks", sorted(mine["ranks"].unique().tolist()), "ranks", container=cols[0])
    here = mine[mine["ranks"] == ranks]
    dtype = ui.choose("Datatype", sorted(here["dtype"].unique()), "dtype", container=cols[1])
    op = ui.choose("Op", sorted(here[here["dtype"] == dtype]["op"].unique()), "op",
                   container=cols[2])  # fmt: skip
    collective = str(mine["collective"].iloc[0])
    scope = queries.Scope(run_id, int(ranks), dtype, op, tuple(sorted(names)),
                          _calibration(path, run_id), collective)  # fmt: skip
    points = queries.curves_data(path, scope).points
    sizes = sorted(int(b) for b in points["bytes"].unique())
    nbytes = ui.choose("Size", sizes, "bytes", sizes[-1] if sizes else None, container=cols[3],
                       format_func=format_bytes)  # fmt: skip
    if nbytes is None:
        st.info("No point of these members in this group.")
        return
    rows = curve_rows(points, curve, int(nbytes))
    ui.chart(charts.parameter_figure(rows, curve, int(nbytes)), "param_chart")
    st.caption(
        f"Time per call against {curve.parameter} at {format_bytes(nbytes)}: the measured "
        "median with its 95% interval over launches, the model's prediction (dash-dot); the "
        "star marks the measured best, the open diamond the model's optimum."
    )
    shown = rows[["value", "algorithm", "median_s", "interval_low_s", "interval_high_s",
                  "predicted_s"]].sort_values("value")  # fmt: skip
    ui.table(shown.rename(columns={"value": curve.parameter}), key="param_table")


ui.run_page("Parameters", main)
