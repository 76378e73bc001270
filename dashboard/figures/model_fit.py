"""The Model fit figures: the ping-pong fit and measured / predicted residuals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.style import (
    FALLBACK_COLORS,
    _bytes_axis,
    _empty_figure,
)
from runners.domain.model.closed_form import NOT_SCHEDULES
from runners.domain.units import format_bytes, format_per_byte, format_ratio, format_seconds

# --- model fit ---------------------------------------------------------------------------------


def _segment_trace(seg: dict, k: int) -> go.Scatter:
    """One piecewise segment of the ping-pong fit, dashed across its size range."""
    n = np.geomspace(max(float(seg["min_bytes"]), 1.0), max(float(seg["max_bytes"]), 2.0), 20)
    return go.Scatter(
        x=n.tolist(),
        y=((float(seg["alpha_s"]) + n * float(seg["beta_s_per_byte"])) * 1e6).tolist(),
        mode="lines",
        line={"dash": "dash", "width": 2, "color": FALLBACK_COLORS[k % len(FALLBACK_COLORS)]},
        name=f"segment {k + 1}: alpha={format_seconds(float(seg['alpha_s']))}, "
        f"beta={format_per_byte(float(seg['beta_s_per_byte']))}",
        meta={"role": "segment", "index": k},
    )


def pingpong_figure(cal: Mapping[str, Any]) -> go.Figure:
    """Ping-pong one-way medians vs the whole-range fit and the piecewise segments (in µs)."""
    pingpong = (cal.get("details") or {}).get("pingpong") or {}
    sizes = [float(s) for s in pingpong.get("bytes", [])]
    times = [float(t) * 1e6 for t in pingpong.get("one_way_median_s", [])]
    if not sizes:
        return _empty_figure("This calibration kept no ping-pong medians (details.pingpong).")
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=sizes,
            y=times,
            mode="markers",
            marker={"size": 8, "color": "black"},
            name="ping-pong one-way median",
            meta={"role": "pingpong"},
        )
    )
    n = np.geomspace(min(sizes), max(sizes), 60)
    alpha, beta = float(cal["alpha_s"]), float(cal["beta_s_per_byte"])
    fig.add_trace(
        go.Scatter(
            x=n.tolist(),
            y=((alpha + n * beta) * 1e6).tolist(),
            mode="lines",
            line={"color": "#7f7f7f", "width": 2},
            name=f"whole-range fit: alpha={format_seconds(alpha)}, beta={format_per_byte(beta)}",
            meta={"role": "fit"},
        )
    )
    for k, seg in enumerate(cal.get("segments") or []):
        fig.add_trace(_segment_trace(seg, k))
    for b in cal.get("breakpoints") or []:
        fig.add_vline(x=float(b), line_dash="dot", line_color="#999999")
    _bytes_axis(fig, sizes)
    fig.update_yaxes(type="log", dtick=1, title_text="One-way time (µs)")
    fig.update_layout(height=460, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return fig


def residuals_figure(resid: pd.DataFrame) -> go.Figure:
    """measured / predicted per algorithm (rows) and size (columns), 1 = the model is exact.

    The autotuned 'mpi' is predicted as the fastest library algorithm; its row says so.
    """
    if resid.empty:
        return _empty_figure("No points with both a measurement and a prediction.")
    bound = resid["model"].map(lambda m: f" vs {m}" if m in NOT_SCHEDULES else "")
    frame = resid.assign(label=resid["algorithm"] + bound + " · p=" + resid["ranks"].astype(str))
    table = frame.pivot_table(
        index="label", columns="bytes", values="measured_over_predicted", aggfunc="first"
    )
    z = np.log2(table.to_numpy(dtype=float))
    limit = max(1.0, float(np.nanmax(np.abs(z)))) if np.isfinite(z).any() else 1.0
    text = [[format_ratio(v) if np.isfinite(v) else "" for v in row] for row in table.to_numpy()]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[format_bytes(b) for b in table.columns],
            y=list(table.index),
            text=text,
            texttemplate="%{text}",
            colorscale="RdBu_r",
            zmid=0,
            zmin=-limit,
            zmax=limit,
            colorbar={"title": "log2(meas/pred)"},
            hovertemplate="%{y}, %{x}: measured / predicted = %{text}<extra></extra>",
            meta={"role": "residual"},
        )
    )
    fig.update_xaxes(type="category", title_text="Message size per rank")
    fig.update_layout(height=160 + 28 * len(table.index), margin={"t": 30})
    return fig
