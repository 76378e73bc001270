"""Model fit page: calibration parameters and fit, microbenchmark vs fitted, residuals."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.model.calibration_id import (
    CalibrationId,
    CalibrationKind,
    own_calibrations,
    with_caveat,
)
from runners.domain.units import (
    counted,
    format_bytes,
    format_per_byte,
    format_ratio,
    format_seconds,
)


def _fmt(value: float | None, spec: str, unit: str = "") -> str:
    """A parameter for st.metric, or 'n/a' when missing."""
    return "n/a" if value is None or value != value else f"{value:{spec}}{unit}"


def _calibration_panel(path, run_id: str) -> None:
    """A calibration's parameters, segments, gammas, overheads and the ping-pong fit: the
    run's own calibrations first (its launches', the one made before it, the fitted one)."""
    cals = queries.calibrations(path)
    if cals.empty:
        st.info("No calibrations in this store yet: predictions need a ping-pong calibration.")
        return
    labels = {
        r.calibration_id: f"{with_caveat(r.calibration_id)} · {r.source}" for r in cals.itertuples()
    }
    # the run's own, each library's namesake with it (fitted:<run>@nccl with fitted:<run>)
    runs = queries.prediction_calibrations(path, run_id)
    mine = [c for run in runs for c in own_calibrations(run) or [] if c in labels]
    options = [*mine, *(c for c in labels if c not in mine)]
    cal_id = ui.choose("Calibration", options, "kal", options[0], format_func=labels.__getitem__)
    cal = queries.calibration(path, cal_id)
    if cal is None:
        return
    # three cards with short values, the long words below them: four cut off at 1600 px
    beta, bandwidth = _rate(cal["beta_s_per_byte"])
    a, b, c = st.columns(3)
    a.metric("alpha (latency)", _seconds(cal["alpha_s"]))
    b.metric("beta (per byte)", beta)
    c.metric("R² (whole range)", _fmt(cal["r_squared"], ".4f"))
    means = f"beta {beta} is a bandwidth of {bandwidth} · " if bandwidth else ""
    st.caption(f"{means}source: `{cal.get('source') or 'unknown'}`")
    _suspicious(cal)
    ui.chart(charts.pingpong_figure(cal), "pingpong_chart")
    left, right = st.columns(2)
    left.markdown("**Piecewise segments**")
    with left:
        ui.table(pd.DataFrame(cal.get("segments") or []), key="segments")
    right.markdown("**Reduction cost gamma**")
    gammas = cal.get("gammas") or {}
    with right:
        ui.table(pd.DataFrame({"dtype/op": list(gammas), "gamma_s_per_byte": [*gammas.values()]}))
    overheads = _decoded(cal.get("overheads"))
    if overheads:
        st.markdown("**Software overheads** (zero-byte runs of each implementation, p=2)")
        ui.table(
            pd.DataFrame(
                [
                    {
                        "family": f,
                        "per call": _seconds(v["call_s"]),
                        "per round": _seconds(v["round_s"]),
                    }
                    for f, v in overheads.items()
                ]
            ),
            key="overheads",
        )


def _seconds(value: float | None) -> str:
    return "n/a" if value is None or value != value else format_seconds(float(value))


def _rate(seconds_per_byte: float | None) -> tuple[str, str]:
    """beta as people read it: ns per byte, and the bandwidth it means ('' when unknown);
    format_per_byte's two parts."""
    if seconds_per_byte is None or seconds_per_byte != seconds_per_byte:
        return "n/a", ""
    per_byte, _, bandwidth = format_per_byte(seconds_per_byte).partition(" (")
    return per_byte, bandwidth.removesuffix(")")


def _decoded(value):
    return json.loads(value) if isinstance(value, str) else value


def _suspicious(cal: Mapping[str, Any]) -> None:
    """Say what in a fit deserves doubt: a zero gamma (no reduction cost was separable), or
    the assumption the fit made instead (details.assumption: NCCL's gamma inside beta)."""
    zero = [key for key, gamma in (cal.get("gammas") or {}).items() if not gamma]
    assumed = (_decoded(cal.get("details")) or {}).get("assumption")
    if zero and assumed:
        st.warning(f"{assumed}.", icon=":material/help:")
    elif zero:
        st.warning(
            f"gamma = 0 for {', '.join(zero)}: the reduction cost could not be separated from "
            "the rest, so predictions leave it out.",
            icon=":material/help:",
        )


def _fitted_panel(path, run_id: str) -> None:
    """The microbenchmark calibration beside the parameters fitted to the run's collectives."""
    comparison = queries.fit_comparison(path, run_id)
    if comparison.fitted_id is None:
        fitted = CalibrationId(CalibrationKind.FITTED, run_id)
        st.info(f"No calibration fitted to this run's collectives (source '{fitted}').")
    st.caption(
        f"Microbenchmark: `{comparison.micro_id or 'none'}` · "
        f"fitted from collectives: `{comparison.fitted_id or 'none'}`"
    )
    ui.table(_as_text(comparison.table), key="fit_comparison")


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Numbers to four significant digits and a dash where a calibration lacks a parameter."""
    return frame.apply(
        lambda column: (
            column.map(lambda v: "—" if v != v else f"{v:.4g}")
            if pd.api.types.is_float_dtype(column)
            else column
        )
    )


def _residual_summary(resid: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm: geometric mean and extremes of measured / predicted."""
    ratio = resid["measured_over_predicted"]
    grouped = resid.assign(log_ratio=np.log(ratio)).groupby("algorithm")
    return pd.DataFrame(
        {
            "points": grouped.size(),
            "geo_mean": np.exp(grouped["log_ratio"].mean()),
            "min": grouped["measured_over_predicted"].min(),
            "max": grouped["measured_over_predicted"].max(),
        }
    ).reset_index()


def _residual_panel(path, run_id: str) -> None:
    """measured / predicted per algorithm and size, for one dtype/op and ranks."""
    cals = queries.prediction_calibrations(path, run_id)
    if not cals:
        st.info("No predictions stored for this run yet.")
        return
    grid = queries.run_grid(path, run_id)
    collective, grid = ui.choose_collective(grid)
    cols = st.columns(4)
    cal = ui.choose("Calibration of the predictions", cals, "cal", container=cols[0])
    dtype = ui.choose("Datatype", sorted(grid["dtype"].unique()), "dtype", container=cols[1])
    ops = sorted(grid[grid["dtype"] == dtype]["op"].unique())
    op = ui.choose("Op", ops, "op", container=cols[2])
    ranks = ui.choose(
        "Ranks", ["all", *sorted(grid["ranks"].unique().tolist())], "ranks", container=cols[3]
    )
    scope = queries.Scope(
        run_id,
        None if ranks == "all" else int(ranks),
        dtype,
        op,
        calibration_id=cal,
        collective=collective,
    )
    resid = queries.residuals(path, scope)
    view = queries.assumption_summary(path, scope)
    ui.show_run_assumptions(path, run_id, view, scope.words())
    ui.chart(charts.residuals_figure(resid), "residuals_chart")
    if not resid.empty:
        _outliers(resid)
        ui.table(_residual_summary(resid), key="residual_summary")


def _outliers(resid: pd.DataFrame) -> None:
    """Name the points the model misses by more than queries.OUTLIER_FACTOR."""
    far = queries.outliers(resid)
    if far.empty:
        return
    shown = ", ".join(
        f"{r.algorithm} p={r.ranks} {format_bytes(r.bytes)} "
        f"({format_ratio(r.measured_over_predicted)})"
        for r in far.head(3).itertuples()
    )
    st.warning(
        f"{counted(len(far), 'point')} with a core per rank measured more than "
        f"{queries.OUTLIER_FACTOR:g}x away from the prediction, e.g. {shown}: a missing term, "
        "or a machine that changed state (see the Runs page's probes).",
        icon=":material/help:",
    )


ACCURACY_COLUMNS = {
    "calibration_id": "calibration",
    "variant": "variant",
    "placement": "placement",
    "family": "family",
    "points": "points",
    "median_abs_error": "median |pred/meas - 1|",
    "p90_abs_error": "p90 |pred/meas - 1|",
    "winner_share": "winner named",
    "decided_cells": "of decided cells",
    "crossover_inside_share": "crossover inside",
    "measured_crossovers": "of measured crossovers",
}


def _accuracy_panel(path, run_id: str) -> None:
    """How well each model variant predicts the run, as the analysis stored it."""
    frame = queries.model_accuracy(path, run_id)
    if frame.empty:
        st.info(f"No accuracy report for this run yet: `collsweep analyze {run_id}` makes one.")
        return
    st.caption(
        "Each variant adds one term to the one before: textbook (closed form), schedule (every "
        "round priced on the ping-pong curve), overheads (each implementation's measured "
        "per-call and per-round costs), contention (exchanges priced on the exchange curve); "
        "on emulated nodes two_level (each message on the level it crosses, the network a bus "
        "every message between nodes shares). Oversubscribed groups are reported apart."
    )
    shown = frame[list(ACCURACY_COLUMNS)].rename(columns=ACCURACY_COLUMNS)
    percent = st.column_config.NumberColumn(format="percent")
    config = {
        name: percent
        for name in (
            "median |pred/meas - 1|",
            "p90 |pred/meas - 1|",
            "winner named",
            "crossover inside",
        )
    }
    st.dataframe(shown, hide_index=True, key="accuracy_table", column_config=config)


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    run_id = ui.choose_run(queries.runs_table(path))
    st.subheader("Calibration")
    _calibration_panel(path, run_id)
    st.subheader("Microbenchmark vs fitted from collectives")
    _fitted_panel(path, run_id)
    st.subheader("How well each model variant predicts this run")
    _accuracy_panel(path, run_id)
    st.subheader("Residuals: measured / predicted")
    _residual_panel(path, run_id)


ui.run_page("Model fit", main)
