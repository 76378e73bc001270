"""An adaptive run's rounds (the Verdict page): every point it chose, at its size (x) and
algorithm (y, within its group), coloured by the round that chose it, a filled marker where it
was measured and an open one where it was not; the reason in the hover text."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.style import _bytes_axis, _empty_figure
from runners.domain.collectives.collective import group_title
from runners.domain.libraries.catalog import local_name
from runners.domain.status import PointStatus

ROUND_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


def rounds_figure(choices: pd.DataFrame) -> go.Figure:
    """One trace per round (meta role `round`, its index), one marker per chosen point."""
    if choices.empty:
        return _empty_figure("This run is not adaptive: every point of its grid was measured.")
    frame = choices.assign(
        row=[
            f"{group_title(r.ranks, r.dtype, r.op, r.collective)}: {local_name(r.algorithm)}"
            for r in choices.itertuples()
        ]
    )
    fig = go.Figure()
    for index, mine in frame.groupby("round", sort=True):
        measured = mine.status == PointStatus.OK
        fig.add_trace(
            go.Scatter(
                x=mine.bytes,
                y=mine.row,
                mode="markers",
                name=f"round {index}",
                marker={
                    "size": 11,
                    "color": ROUND_COLORS[int(index) % len(ROUND_COLORS)],
                    "symbol": ["circle" if m else "circle-open" for m in measured],
                },
                customdata=list(zip(mine["size"], mine.status, mine.reason, strict=True)),
                hovertemplate="%{y} at %{customdata[0]} (%{customdata[1]}): "
                "%{customdata[2]}<extra>" + f"round {index}</extra>",
                meta={"role": "round", "round": int(index)},
            )
        )
    _bytes_axis(fig, sorted(set(frame.bytes)))
    fig.update_yaxes(type="category", title_text="")
    rows = frame.row.nunique()
    fig.update_layout(height=160 + 22 * rows, margin={"t": 20, "b": 40}, legend_title="chosen in")
    return fig
