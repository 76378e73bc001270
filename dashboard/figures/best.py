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
from runners.domain.units import format_bytes

# --- best choices ------------------------------------------------------------------------------


def _best_grid(best: pd.DataFrame, ranks: list, sizes: list, algs: list[str]):
    """z (algorithm index + 0.5, nan where unmeasured) and cell text for one heatmap."""
    z = np.full((len(ranks), len(sizes)), np.nan)
    text = [["" for _ in sizes] for _ in ranks]
    for row in best.itertuples(index=False):
        i, j = ranks.index(row.ranks), sizes.index(row.bytes)
        z[i, j] = algs.index(row.algorithm) + 0.5
        text[i][j] = short_name(row.algorithm)
    return z, text


def _discrete_scale(algs: list[str]) -> list[list]:
    """A stepwise colour scale giving algorithm i the band [i, i + 1] / n."""
    n = len(algs)
    scale = []
    for i, alg in enumerate(algs):
        scale += [[i / n, color(alg)], [(i + 1) / n, color(alg)]]
    return scale


def _heatmap_trace(z, text, kind: str, labels: tuple[list, list], algs: list[str]):
    """One best-algorithm heatmap (measured or predicted) with the shared colour scale."""
    xlabels, ylabels = labels
    return go.Heatmap(
        z=z,
        x=xlabels,
        y=ylabels,
        text=text,
        texttemplate="%{text}",
        colorscale=_discrete_scale(algs),
        zmin=0,
        zmax=len(algs),
        showscale=False,
        xgap=2,
        ygap=2,
        hovertemplate="%{y}, %{x}: %{text}<extra>" + kind + "</extra>",
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
            name=f"{short_name(alg)} = {alg}",
            meta={"role": "legend", "algorithm": alg},
        )
        for alg in algs
    ]


def _mark_disagreement(text_m: list[list[str]], text_p: list[list[str]]) -> None:
    """Append ✗ to predicted cells whose pick differs from the measured best."""
    for row_m, row_p in zip(text_m, text_p, strict=True):
        for j, (m, p) in enumerate(zip(row_m, row_p, strict=True)):
            if m and p and m != p:
                row_p[j] = p + " ✗"


def best_heatmaps(measured: pd.DataFrame, predicted: pd.DataFrame) -> go.Figure:
    """Measured best beside predicted best, over ranks (rows) x bytes (columns).

    Predicted cells whose pick differs from the measured best are marked with ✗.
    """
    if measured.empty and predicted.empty:
        return _empty_figure("No measured or predicted times for this dtype and op.")
    both = pd.concat([measured, predicted])
    algs = sorted(both["algorithm"].unique())
    ranks, sizes = sorted(both["ranks"].unique()), sorted(both["bytes"].unique())
    z_m, text_m = _best_grid(measured, ranks, sizes, algs)
    z_p, text_p = _best_grid(predicted, ranks, sizes, algs)
    _mark_disagreement(text_m, text_p)
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("Measured best", "Predicted best"), horizontal_spacing=0.06
    )
    labels = ([format_bytes(s) for s in sizes], [f"p={r}" for r in ranks])
    fig.add_trace(_heatmap_trace(z_m, text_m, "measured", labels, algs), row=1, col=1)
    fig.add_trace(_heatmap_trace(z_p, text_p, "predicted", labels, algs), row=1, col=2)
    fig.add_traces(_legend_traces(algs))
    fig.update_xaxes(title_text="Message size per rank", type="category")
    fig.update_yaxes(type="category")
    fig.update_layout(height=260 + 40 * len(ranks), margin={"t": 50, "b": 40})
    return fig
