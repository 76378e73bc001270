"""The best-algorithm heat maps, measured beside predicted."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures.style import (
    _empty_figure,
    color,
    short_name,
)
from runners.domain.model.closed_form import model_for
from runners.domain.units import format_bytes

# --- best choices ------------------------------------------------------------------------------


TIE_COLOR = "#d9d9d9"  # a cell the paired launches could not decide


def _best_grid(best: pd.DataFrame, ranks: list, sizes: list, algs: list[str]):
    """z (algorithm index + 0.5; the tie band for an undecided cell; nan where unmeasured)
    and cell text for one heatmap; a `decided` column (the measured winners) marks ties,
    whose cells say 'tie' (the two algorithms are in the hover text, tie_names)."""
    z = np.full((len(ranks), len(sizes)), np.nan)
    text = [["" for _ in sizes] for _ in ranks]
    for row in best.itertuples(index=False):
        i, j = ranks.index(row.ranks), sizes.index(row.bytes)
        if getattr(row, "decided", True):
            z[i, j] = algs.index(row.algorithm) + 0.5
            text[i][j] = short_name(row.algorithm)
        else:
            z[i, j] = len(algs) + 0.5
            text[i][j] = "tie"
    return z, text


def tie_names(best: pd.DataFrame, ranks: list, sizes: list) -> list[list[str]]:
    """Per cell, what the hover text says: the winner, or 'tie a ~ b'."""
    names = [["" for _ in sizes] for _ in ranks]
    for row in best.itertuples(index=False):
        i, j = ranks.index(row.ranks), sizes.index(row.bytes)
        tie = not getattr(row, "decided", True)
        names[i][j] = f"tie {row.algorithm} ~ {row.runner_up}" if tie else row.algorithm
    return names


def _discrete_scale(algs: list[str]) -> list[list]:
    """A stepwise colour scale giving algorithm i the band [i, i + 1] / (n + 1), and the
    last band to ties."""
    n = len(algs) + 1
    scale = []
    for i, shade in enumerate([*(color(alg) for alg in algs), TIE_COLOR]):
        scale += [[i / n, shade], [(i + 1) / n, shade]]
    return scale


def _heatmap_trace(z, text, kind: str, labels: tuple[list, list], algs: list[str], hover):
    """One best-algorithm heatmap (measured or predicted) with the shared colour scale."""
    xlabels, ylabels = labels
    return go.Heatmap(
        z=z,
        x=xlabels,
        y=ylabels,
        text=text,
        customdata=hover,
        texttemplate="%{text}",
        colorscale=_discrete_scale(algs),
        zmin=0,
        zmax=len(algs) + 1,
        textfont={"size": 12},
        showscale=False,
        xgap=2,
        ygap=2,
        hovertemplate="%{y}, %{x}: %{customdata}<extra>" + kind + "</extra>",
        meta={"role": "best", "kind": kind},
    )


def _legend_traces(algs: list[str]) -> list[go.Scatter]:
    """Invisible traces whose legend entries name each heatmap colour."""
    return [
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            marker={"symbol": "square", "size": 12, "color": color(alg)},
            name=alg if short_name(alg) == alg else f"{short_name(alg)} = {alg}",
            meta={"role": "legend", "algorithm": alg},
        )
        for alg in algs
    ]


def _mark_disagreement(measured: pd.DataFrame, text_p: list[list[str]], ranks, sizes) -> None:
    """Append ✗ to predicted cells whose pick differs from a decided measured winner that the
    model could have named (a tie, or a winner without a model such as 'mpi', judges none)."""
    for row in measured.itertuples(index=False):
        i, j = ranks.index(row.ranks), sizes.index(row.bytes)
        pick = text_p[i][j]
        judged = bool(row.decided) and model_for(row.algorithm) is not None
        if pick and judged and pick != short_name(row.algorithm):
            text_p[i][j] = pick + " ✗"


def best_heatmaps(measured: pd.DataFrame, predicted: pd.DataFrame) -> go.Figure:
    """The measured winners (the verdict's stored rows: decided cells in the winner's colour,
    ties grey and named 'tie a ~ b') beside the model's picks, over ranks (rows) x bytes
    (columns). Predicted cells that differ from a decided, modelled winner are marked ✗."""
    if measured.empty and predicted.empty:
        return _empty_figure("No measured or predicted times for this dtype and op.")
    both = pd.concat([measured, predicted])
    algs = sorted(both["algorithm"].unique())
    ranks, sizes = sorted(both["ranks"].unique()), sorted(both["bytes"].unique())
    z_m, text_m = _best_grid(measured, ranks, sizes, algs)
    z_p, text_p = _best_grid(predicted, ranks, sizes, algs)
    if "decided" in measured:
        _mark_disagreement(measured, text_p, ranks, sizes)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("Measured winner (ties grey)", "Model's pick"),
        horizontal_spacing=0.06,
    )
    labels = ([format_bytes(s) for s in sizes], [f"p={r}" for r in ranks])
    hover_m, hover_p = tie_names(measured, ranks, sizes), tie_names(predicted, ranks, sizes)
    fig.add_trace(_heatmap_trace(z_m, text_m, "measured", labels, algs, hover_m), row=1, col=1)
    fig.add_trace(_heatmap_trace(z_p, text_p, "predicted", labels, algs, hover_p), row=1, col=2)
    fig.add_traces(_legend_traces(algs))
    fig.update_xaxes(title_text="Message size per rank", type="category")
    fig.update_yaxes(type="category")
    fig.update_layout(height=260 + 40 * len(ranks), margin={"t": 50, "b": 40})
    return fig
