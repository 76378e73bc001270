"""The Placements figure: each chosen algorithm's median time against size on each placement
(one colour per algorithm, one dash per placement), so a crossover a network moves is seen."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.style import _bytes_axis, _empty_figure, color
from runners.domain.units import format_bytes, format_seconds

PLACEMENT_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def placements_figure(
    medians: pd.DataFrame, placements: Sequence[tuple[str, str]], algorithms: Sequence[str]
) -> go.Figure:
    """Median time (µs) per size of each algorithm on each placement; `medians` holds one
    cell's ok points of the runs (run_id, algorithm, bytes, median_s), `placements` each
    run's (run id, label) in the order their dashes follow."""
    fig = go.Figure()
    for algorithm in algorithms:
        for index, (run_id, label) in enumerate(placements):
            rows = medians[(medians["run_id"] == run_id) & (medians["algorithm"] == algorithm)]
            if rows.empty:
                continue
            rows = rows.sort_values("bytes")
            dash = PLACEMENT_DASHES[index % len(PLACEMENT_DASHES)]
            fig.add_trace(_trace(rows, algorithm, label, dash))
    if not fig.data:
        return _empty_figure("None of the chosen algorithms was measured in this cell.")
    _bytes_axis(fig, medians["bytes"].tolist())
    fig.update_yaxes(type="log", tickformat="~g", title_text="Time per call (µs)")
    fig.update_layout(height=460, legend={"orientation": "h", "y": -0.2})
    return fig


def _trace(rows: pd.DataFrame, algorithm: str, label: str, dash: str) -> go.Scatter:
    return go.Scatter(
        x=rows["bytes"].astype(float).tolist(),
        y=(rows["median_s"] * 1e6).tolist(),
        mode="lines+markers",
        line={"color": color(algorithm), "dash": dash},
        name=f"{algorithm} · {label}",
        hovertext=[
            f"{algorithm} on {label}, {format_bytes(b)}: {format_seconds(s)}"
            for b, s in zip(rows["bytes"], rows["median_s"], strict=True)
        ],
        hoverinfo="text",
        meta={"role": "measured", "algorithm": algorithm, "placement": label},
    )
