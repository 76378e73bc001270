"""The winner strip of the Verdict page: one row per group, a cell per size, the winner's
colour and name with the margin over the runner-up; ties grey; the speed-up over the library
default in the hover text (runners.domain.verdict.winner_table's cells); an adaptive run's
inferred cells in their winner's colour, in italics, marked inferred (settled) or model pick."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.best import _discrete_scale, _legend_traces
from dashboard.figures.style import _empty_figure, short_name
from runners.domain.collectives.collective import group_title
from runners.domain.units import format_bytes, format_ratio, format_seconds
from runners.domain.verdict.winner_table import Cell, margin_text


def _label(cell: Cell) -> str:
    """The cell's text: the winner and its margin, or 'tie'; a † when provisional; an adaptive
    run's unmeasured cell its inferred winner, in italics, saying so."""
    if cell.inferred:
        return f"<i>{short_name(cell.best)}<br>{'inferred' if cell.decided else 'model pick'}</i>"
    mark = " †" if cell.provisional else ""
    if not cell.decided or cell.margin is None:
        return "tie" + mark
    return f"{short_name(cell.best)}<br>{format_ratio(cell.margin[0])}{mark}"


def _hover(cell: Cell) -> str:
    """Everything the cell stands for, in words."""
    if cell.inferred:
        return f"{cell.answer}, not measured: {cell.inferred}; runner-up {cell.runner_up}"
    best = format_seconds(cell.best_s) if cell.best_s else "?"
    default = (
        "; the default is the best"
        if cell.best == cell.default
        else f"; default {cell.default} {format_seconds(cell.default_s)}, best "
        f"{cell.speedup.text()}"
        if cell.default_s
        else ""
    )
    provisional = " (provisional: the machine was not steady)" if cell.provisional else ""
    return (
        f"{cell.answer} ({best}); runner-up {cell.runner_up}: {margin_text(cell)}"
        f"{default}{provisional}"
    )


def winner_strip(cells: Sequence[Cell]) -> go.Figure:
    """One row per group (p, dtype, op, collective), one cell per size, coloured by the
    winner; the cell texts (`text`) and what they stand for (`customdata`) are the cells'
    own."""
    if not cells:
        return _empty_figure("No winners stored for this run yet: `collsweep analyze RUN`.")
    groups = sorted({c.group for c in cells})
    sizes = sorted({c.nbytes for c in cells})
    algs = sorted({c.best for c in cells if c.decided or c.inferred})
    z = np.full((len(groups), len(sizes)), np.nan)
    text = [["" for _ in sizes] for _ in groups]
    hover = [["" for _ in sizes] for _ in groups]
    for cell in cells:
        i, j = groups.index(cell.group), sizes.index(cell.nbytes)
        z[i, j] = (algs.index(cell.best) if cell.decided or cell.inferred else len(algs)) + 0.5
        text[i][j], hover[i][j] = _label(cell), _hover(cell)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[format_bytes(s) for s in sizes],
            y=[group_title(*group) for group in groups],
            text=text,
            customdata=hover,
            texttemplate="%{text}",
            textfont={"size": 12},
            colorscale=_discrete_scale(algs),
            zmin=0,
            zmax=len(algs) + 1,
            showscale=False,
            xgap=3,
            ygap=3,
            hovertemplate="%{y}, %{x}: %{customdata}<extra></extra>",
            meta={"role": "strip"},
        )
    )
    fig.add_traces(_legend_traces(algs))
    fig.update_xaxes(type="category", title_text="message size per rank")
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_layout(height=140 + 60 * len(groups), margin={"t": 20, "b": 40})
    return fig
