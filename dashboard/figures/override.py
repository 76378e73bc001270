"""The Override impact figure: a forced algorithm against the autotuned one."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.style import (
    VERDICT_SYMBOLS,
    _bytes_axis,
    _empty_figure,
    _ratio_axis,
)
from runners.domain.units import format_bytes
from runners.store.dashboard_reads.override import SPEEDUP_TEXT

# --- override impact ---------------------------------------------------------------------------


def override_figure(impact: pd.DataFrame, forced: str, baseline: str = "mpi") -> go.Figure:
    """Speed-up of a forced algorithm over its baseline, a library's autotuned default
    ('mpi', 'openmpi'), vs bytes, one line per ranks.

    Above 1 the override wins; markers show whether the confidence intervals separate.
    """
    if impact.empty:
        return _empty_figure(f"No sizes where both {forced} and {baseline} were measured.")
    fig = go.Figure()
    fig.add_hrect(y0=1, y1=10, fillcolor="rgba(44,160,44,0.07)", line_width=0, layer="below")
    fig.add_hrect(y0=0.1, y1=1, fillcolor="rgba(214,39,40,0.07)", line_width=0, layer="below")
    palette = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
    for k, (ranks, rows) in enumerate(impact.groupby("ranks", sort=True)):
        fig.add_trace(
            go.Scatter(
                x=rows["bytes"].astype(float).tolist(),
                y=rows["speedup"].tolist(),
                mode="lines+markers",
                line={"color": palette[k % len(palette)]},
                marker={
                    "size": 11,
                    "symbol": [VERDICT_SYMBOLS.get(v, "circle") for v in rows["verdict"]],
                },
                name=f"p={ranks}",
                hovertext=[
                    f"p={ranks}, {format_bytes(b)}: {said}"
                    for b, said in zip(rows["bytes"], rows[SPEEDUP_TEXT], strict=True)
                ],
                hoverinfo="text",
                meta={"role": "speedup", "ranks": int(ranks)},
            )
        )
    fig.add_hline(y=1, line_dash="dot", annotation_text=f"autotuned MPI_Allreduce ({baseline})")
    _bytes_axis(fig, impact["bytes"].tolist())
    _ratio_axis(fig, impact["speedup"], f"Speed-up of {forced} over {baseline} (>1: wins)")
    fig.update_layout(height=480, margin={"t": 30})
    return fig
