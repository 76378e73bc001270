"""The Compare runs figure: B / A median ratios at matching points."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.style import (
    _bytes_axis,
    _empty_figure,
    _ratio_axis,
    color,
)
from runners.domain.units import format_bytes, format_ratio

# --- comparing runs ----------------------------------------------------------------------------


def compare_figure(ratios: pd.DataFrame, threshold: float, run_a: str, run_b: str) -> go.Figure:
    """b / a median ratio per point vs bytes, one colour per algorithm, threshold band shaded."""
    if ratios.empty:
        return _empty_figure("The two runs share no successfully measured points.")
    fig = go.Figure()
    fig.add_hrect(
        y0=1 / (1 + threshold),
        y1=1 + threshold,
        fillcolor="rgba(127,127,127,0.15)",
        line_width=0,
        layer="below",
    )
    for alg, rows in ratios.groupby("algorithm", sort=True):
        fig.add_trace(
            go.Scatter(
                x=rows["bytes"].astype(float).tolist(),
                y=rows["b_over_a"].tolist(),
                mode="markers",
                marker={"color": color(str(alg)), "size": 9},
                name=str(alg),
                hovertext=[
                    f"{alg} p={r} {format_bytes(b)} {d}/{o}: {format_ratio(v)}"
                    for r, b, d, o, v in zip(
                        rows["ranks"],
                        rows["bytes"],
                        rows["dtype"],
                        rows["op"],
                        rows["b_over_a"],
                        strict=True,
                    )
                ],
                hoverinfo="text",
                meta={"role": "ratio", "algorithm": str(alg)},
            )
        )
    fig.add_hline(y=1, line_dash="dot")
    _bytes_axis(fig, ratios["bytes"].tolist())
    limits = pd.concat([ratios["b_over_a"], pd.Series([1 + threshold, 1 / (1 + threshold)])])
    _ratio_axis(fig, limits, f"median B / A (>1: {run_b} slower)")
    fig.update_layout(height=440, margin={"t": 30})
    return fig
