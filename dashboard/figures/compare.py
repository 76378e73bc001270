"""The Compare runs figure: B / A median ratios at matching points, with their intervals."""

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
from runners.domain.verdict.run_comparison import WITHIN_NOISE

# --- comparing runs ----------------------------------------------------------------------------


def compare_figure(ratios: pd.DataFrame, run_a: str, run_b: str) -> go.Figure:
    """B / A median ratio per point vs bytes with its 95% interval, one colour per
    algorithm; filled markers where the interval excludes 1 (a decided change), open ones
    within noise."""
    if ratios.empty:
        return _empty_figure("The two runs share no successfully measured points.")
    fig = go.Figure()
    for alg, rows in ratios.groupby("algorithm", sort=True):
        decided = rows["change"] != WITHIN_NOISE
        fig.add_trace(
            go.Scatter(
                x=rows["bytes"].astype(float).tolist(),
                y=rows["b_over_a"].tolist(),
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (rows["ratio_high"] - rows["b_over_a"]).tolist(),
                    "arrayminus": (rows["b_over_a"] - rows["ratio_low"]).tolist(),
                    "thickness": 1,
                },
                mode="markers",
                marker={
                    "color": color(str(alg)),
                    "size": 9,
                    "symbol": ["circle" if d else "circle-open" for d in decided],
                },
                name=str(alg),
                hovertext=[
                    f"{alg} p={r} {format_bytes(b)} {d}/{o}: {format_ratio(v)} "
                    f"({format_ratio(lo)} .. {format_ratio(hi)}), {c}"
                    for r, b, d, o, v, lo, hi, c in zip(
                        rows["ranks"],
                        rows["bytes"],
                        rows["dtype"],
                        rows["op"],
                        rows["b_over_a"],
                        rows["ratio_low"],
                        rows["ratio_high"],
                        rows["change"],
                        strict=True,
                    )
                ],
                hoverinfo="text",
                meta={"role": "ratio", "algorithm": str(alg)},
            )
        )
    fig.add_hline(y=1, line_dash="dot")
    _bytes_axis(fig, ratios["bytes"].tolist())
    limits = pd.concat([ratios["ratio_low"], ratios["ratio_high"]])
    _ratio_axis(fig, limits, f"median B / A (>1: {run_b} slower than {run_a})")
    fig.update_layout(height=440, margin={"t": 30})
    return fig
