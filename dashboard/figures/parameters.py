"""The Parameters figure: one size's time against an algorithm's parameter (a radix), measured
with its interval beside the model's prediction, the measured best and the model's optimum
marked, so a user sees whether the model picks the parameter the measurement does."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.style import _empty_figure, color
from runners.domain.algorithms.parameters import ParameterCurve
from runners.domain.units import format_bytes, format_seconds


def parameter_figure(rows: pd.DataFrame, curve: ParameterCurve, nbytes: int) -> go.Figure:
    """Median (with its interval over launches) and prediction, in µs, against the curve's
    parameter; `rows` holds one size's points of its members: value, algorithm, median_s,
    interval_low_s, interval_high_s, predicted_s (NaN where none)."""
    family, parameter = curve.family, curve.parameter
    rows = rows.dropna(subset=["median_s"]).sort_values("value")
    if rows.empty:
        return _empty_figure(f"No point of {family} measured at {format_bytes(nbytes)}.")
    fig = go.Figure()
    shade = color(str(rows["algorithm"].iloc[0]))
    x, us = rows["value"].tolist(), (rows["median_s"] * 1e6).tolist()
    fig.add_trace(
        go.Scatter(
            x=x, y=us, mode="lines+markers", name="measured median", line={"color": shade},
            error_y={"type": "data", "symmetric": False,
                     "array": ((rows["interval_high_s"] - rows["median_s"]) * 1e6).tolist(),
                     "arrayminus": ((rows["median_s"] - rows["interval_low_s"]) * 1e6).tolist()},
            hovertext=[f"{a}: {format_seconds(s)}" for a, s in zip(rows["algorithm"],
                                                                  rows["median_s"], strict=True)],
            meta={"role": "measured"},
        )
    )  # fmt: skip
    best = rows.loc[rows["median_s"].idxmin()]
    fig.add_trace(_mark(best["value"], best["median_s"], "measured best", "star", shade))
    predicted = rows.dropna(subset=["predicted_s"])
    if not predicted.empty:
        fig.add_trace(
            go.Scatter(
                x=predicted["value"].tolist(), y=(predicted["predicted_s"] * 1e6).tolist(),
                mode="lines", name="model", line={"color": shade, "dash": "longdashdot"},
                meta={"role": "predicted"},
            )
        )  # fmt: skip
        optimum = predicted.loc[predicted["predicted_s"].idxmin()]
        fig.add_trace(
            _mark(optimum["value"], optimum["predicted_s"], "model's optimum", "diamond-open",
                  shade)
        )  # fmt: skip
    ticks = [curve.value_text(int(v)) for v in x]
    fig.update_xaxes(type="log", tickvals=x, ticktext=ticks, title_text=parameter)
    fig.update_yaxes(type="log", tickformat="~g", title_text="Time per call (µs)")
    fig.update_layout(height=420, legend={"orientation": "h", "y": -0.25})
    return fig


def _mark(value: float, seconds: float, name: str, symbol: str, shade: str) -> go.Scatter:
    role = "best" if name == "measured best" else "optimum"
    return go.Scatter(
        x=[value], y=[seconds * 1e6], mode="markers", name=name,
        marker={"symbol": symbol, "size": 16, "color": shade, "line": {"width": 2}},
        meta={"role": role},
    )  # fmt: skip
