"""The machine-state probe of a run over time (Runs page)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures.style import FALLBACK_COLORS


def probes_figure(probes: pd.DataFrame) -> go.Figure:
    """8 B ping-pong (us, top) and 4 MiB copy rate (GB/s, bottom) at the start and end of
    every launch, a line per job: a step in either is the machine changing state."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    for i, (job, rows) in enumerate(probes.groupby("job", sort=True)):
        colour = FALLBACK_COLORS[i % len(FALLBACK_COLORS)]
        hover = [f"{job}, launch {r.launch + 1} {r.moment}" for r in rows.itertuples(index=False)]
        for row, column in ((1, "pingpong_us"), (2, "copy_gbps")):
            fig.add_trace(
                go.Scatter(
                    x=rows["measured_at"],
                    y=rows[column],
                    mode="lines+markers",
                    line={"color": colour},
                    name=job,
                    legendgroup=job,
                    showlegend=row == 1,
                    hovertext=hover,
                    meta={"role": "probe", "job": job, "measure": column},
                ),
                row=row,
                col=1,
            )
    fig.update_yaxes(title_text="8 B ping-pong, us", row=1, col=1)
    fig.update_yaxes(title_text="4 MiB copy, GB/s", row=2, col=1)
    fig.update_layout(height=420, margin={"t": 30, "b": 30}, legend={"orientation": "h"})
    return fig
