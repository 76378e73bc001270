"""Curves page: time (or algbw, busbw) vs bytes per algorithm, measured beside the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.libraries import DEFAULT, LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.model.calibration_id import with_caveat


def _library(algorithm: str) -> str:
    """The MPI library whose ranks ran an algorithm, as users name it (MPICH, Open MPI); MPICH
    for a name this collsweep does not list (stored by another version)."""
    spec = ALGORITHMS.get(algorithm)
    return LIBRARIES[spec.runs_on].title if spec else DEFAULT.title


def _on_libraries(in_view: pd.DataFrame) -> pd.DataFrame:
    """The view's points on the libraries chosen (a picker only when it has several)."""
    names = in_view["algorithm"].map(_library)
    libraries = sorted(set(names))
    if len(libraries) < 2:
        return in_view
    chosen = ui.choose_many("Libraries", libraries, "lib")
    return in_view[names.isin(chosen)]


POINT_COLUMNS = [
    "algorithm",
    "bytes",
    "status",
    "median_s",
    "p5_s",
    "p95_s",
    "ci_rel_halfwidth",
    "model",
    "predicted_s",
    "latency_s",
    "bandwidth_s",
    "reduction_s",
    "violated",
    "unknown",
    "reason",
]


def _view(grid: pd.DataFrame) -> tuple[int, str, str, str]:
    """Ranks, dtype, op and metric pickers, each offering what the run measured."""
    cols = st.columns([1, 1, 1, 2])
    ranks = ui.choose("Ranks", sorted(grid["ranks"].unique().tolist()), "ranks", container=cols[0])
    at_ranks = grid[grid["ranks"] == ranks]
    dtype = ui.choose("Datatype", sorted(at_ranks["dtype"].unique()), "dtype", container=cols[1])
    op = ui.choose(
        "Op", sorted(at_ranks[at_ranks["dtype"] == dtype]["op"].unique()), "op", container=cols[2]
    )
    metric = ui.choose("Metric", list(charts.METRICS), "metric", kind="radio", container=cols[3])
    return int(ranks), str(dtype), str(op), str(metric)


def _calibration(path, run_id: str, container: Any) -> str | None:
    """The calibration whose predictions are drawn (a picker only when there is a choice),
    named with its kind's caveat where it has one (a fitted one predicts its own points)."""
    cals = queries.prediction_calibrations(path, run_id)
    if not cals:
        container.caption("No predictions stored for this run yet: only measurements are drawn.")
        return None
    if len(cals) == 1:
        st.query_params["cal"] = cals[0]
        container.caption(f"Predictions of calibration {with_caveat(cals[0])}.")
        return cals[0]
    return ui.choose(
        "Calibration of the predictions",
        cals,
        "cal",
        container=container,
        format_func=with_caveat,
    )


CROSSOVER_CHOICES = {
    "best": "where the fastest changes",
    "all": "every pair",
    "none": "none",
}


def _crossovers_shown(data: queries.CurvesData, container: Any) -> pd.DataFrame:
    """The crossovers to mark, as chosen (?xo=best|all|none): by default only those where the
    fastest shown algorithm changes, since every pair of curves may cross."""
    choice = ui.choose(
        "Crossovers to mark",
        list(CROSSOVER_CHOICES),
        "xo",
        kind="radio",
        format_func=CROSSOVER_CHOICES.__getitem__,
        container=container,
    )
    if choice == "none":
        return data.crossovers.iloc[0:0]
    if choice == "all":
        return data.crossovers
    return queries.envelope_crossovers(data.points, data.crossovers)


def _details(path, scope: queries.Scope, data: queries.CurvesData) -> None:
    """The view's points, its crossovers and, on request, per-pass medians from raw samples."""
    with st.expander(f"Points of this view ({len(data.points)})"):
        ui.table(data.points[POINT_COLUMNS], key="curves_points")
    with st.expander(f"Crossovers in this view ({len(data.crossovers)})"):
        ui.table(data.crossovers, key="curves_crossovers")
    if ui.toggle("Per-pass medians from the raw samples (drift check)", "passes"):
        ui.table(queries.pass_spread(path, scope), key="curves_passes")


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    chosen = ui.choose_run_with_points(path)
    if chosen is None:
        return
    run_id, grid = chosen
    ranks, dtype, op, metric = _view(grid)
    in_view = grid[(grid["ranks"] == ranks) & (grid["dtype"] == dtype) & (grid["op"] == op)]
    in_view = _on_libraries(in_view)
    algorithms = ui.choose_many("Algorithms", sorted(in_view["algorithm"].unique()), "alg")
    collective = str(grid["collective"].iloc[0])
    chart_slot = st.container()  # the chart comes first; its options and words below it
    left, right = st.columns(2)
    cal = _calibration(path, run_id, left)
    bands = ui.toggle("p5-p95 bands", "bands", container=left) if metric != "relative" else False
    scope = queries.Scope(run_id, ranks, dtype, op, tuple(algorithms), cal, collective)
    data = queries.curves_data(path, scope)
    marked = _crossovers_shown(data, right)
    with chart_slot:
        ui.chart(charts.curves_figure(data.points, marked, metric, bands), "curves_chart")
        note = queries.crossover_note(marked)
        if note and metric != "relative":
            st.info(note, icon=":material/info:")
        st.caption(
            "Each algorithm's median over the fastest median at that size (1x: the fastest), "
            "with its 95% interval over launches (bars): how much slower each one is. The "
            "absolute curves, bands, predictions and crossovers: Metric time, algbw or busbw. "
            "A triangle at the top: an interval that runs past the axis."
            if metric == "relative"
            else "Lines with markers: measured median with its 95% interval over launches "
            "(bars; a triangle at the top where one runs past the axis), and with the toggle "
            "below its p5-p95 band. Thin dash-dot, same colour: the model's prediction "
            "(one legend entry toggles both). Filled diamonds: measured crossovers, open "
            "diamonds: predicted ones (bars: their uncertainty). Crosses: points that break an "
            "assumption. Several libraries: the colour is the algorithm, the line style the "
            "library (solid MPICH, dashed Open MPI, dotted Intel MPI)."
        )
        ui.show_verdict(queries.verdict(path, run_id, dtype, op, int(ranks), collective), run_id)
        ui.show_run_assumptions(path, run_id, data.summary, scope.words())
    _details(path, scope, data)


ui.run_page("Curves", main)
