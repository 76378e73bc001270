"""The y span of a chart of medians: set by the medians (and predictions), never by an
interval or a band, so one noisy point cannot flatten the rest; what runs past it is cut at
the edge and marked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from runners.domain.units import format_bytes

SPAN_MARGIN = 2.0  # the y axis reaches this factor beyond the outermost medians


PREDICTION_REACH = 10.0  # predictions widen the span only within this factor of the medians


def _positive(series: pd.Series) -> pd.Series:
    finite = series.astype(float).replace([np.inf, -np.inf], np.nan)
    return finite[finite > 0].dropna()


def median_span(values: pd.DataFrame, relative: bool) -> tuple[float, float]:
    """The y axis' ends: the medians' span with a margin, widened by the predictions that lie
    within PREDICTION_REACH of it (a model off by orders of magnitude, an imported run's on a
    foreign calibration, leaves the axis to the measurements); the relative view starts just
    below 1 (the fastest)."""
    medians, predicted = _positive(values["y"]), _positive(values["y_pred"])
    if not medians.empty:
        low, high = medians.min() / PREDICTION_REACH, medians.max() * PREDICTION_REACH
        predicted = predicted[(predicted >= low) & (predicted <= high)]
    shown = pd.concat([medians, predicted])
    if shown.empty:
        return 0.5, 2.0
    if relative:
        return 0.95, max(float(shown.max()) * 1.3, 1.2)
    return float(shown.min()) / SPAN_MARGIN, float(shown.max()) * SPAN_MARGIN


def clipped(values: pd.DataFrame, low: float, high: float) -> pd.DataFrame:
    """The values with every interval and band cut to the axis' span, `cut` marking points
    whose interval reached past its top."""
    out = values.copy()
    out["cut"] = out["y_int_high"].astype(float) > high
    for column in ("y_int_low", "y_int_high", "y_low", "y_high"):
        out[column] = out[column].astype(float).clip(lower=low, upper=high)
    return out


def cut_trace(cut: pd.DataFrame, high: float) -> go.Scatter:
    """Triangles at the axis' top where an interval runs past it."""
    return go.Scatter(
        x=cut["bytes"].astype(float).tolist(),
        y=[high] * len(cut),
        mode="markers",
        marker={"symbol": "triangle-up", "size": 9, "color": "#555555"},
        name="interval runs past the axis",
        hovertext=[
            f"{r.algorithm}, {format_bytes(r.bytes)}: its 95% interval runs past the axis"
            for r in cut.itertuples(index=False)
        ],
        hoverinfo="text",
        meta={"role": "cut"},
    )
