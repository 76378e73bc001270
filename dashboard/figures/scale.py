"""The Scale page's figures: the simulated winner over (ranks x size) with the measured cells
marked, and where the choice flips as a function of p, simulated beside the closed form."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.best import _best_grid, _heatmap_trace, _legend_traces, tie_names
from dashboard.figures.style import _empty_figure, color, short_name
from runners.domain.units import format_bytes

AGREES, DIFFERS = "●", "✗"  # a measured cell's mark: the same winner, another one


def scale_heatmap(simulated: pd.DataFrame, measured: pd.DataFrame) -> go.Figure:
    """The simulated winners (ties grey) over ranks (rows) x size (columns); where a measured
    run decided a winner at the same cell, the cell is marked ● (the same winner) or ✗
    (another), with the measured winner and its run in the hover; a cell only measured shows
    the measured answer in brackets."""
    if simulated.empty:
        return _empty_figure("No simulated winners for this collective, dtype and op.")
    ranks = sorted(set(simulated["ranks"]) | set(measured["ranks"]))
    sizes = sorted(set(simulated["bytes"]) | set(measured["bytes"]))
    algs = sorted(set(simulated["algorithm"]) | set(measured["algorithm"]))
    z, text = _best_grid(simulated, ranks, sizes, algs)
    hover = tie_names(simulated, ranks, sizes)
    for (r, b), rows in measured.groupby(["ranks", "bytes"]):
        i, j = ranks.index(r), sizes.index(b)
        decided = rows[rows["decided"].astype(bool)]
        said = decided.iloc[0] if len(decided) else rows.iloc[0]
        found = said["algorithm"] if len(decided) else f"tie {said['algorithm']}"
        hover[i][j] = f"{hover[i][j] or 'not simulated'}; measured: {found} (run {said['run_id']})"
        if not text[i][j]:  # measured only: the measured answer, in brackets
            text[i][j] = f"({short_name(said['algorithm']) if len(decided) else 'tie'})"
            continue
        same = bool(len(decided)) and said["algorithm"] == _winner_at(simulated, r, b)
        text[i][j] = f"{text[i][j]} {AGREES if same or not len(decided) else DIFFERS}"
    labels = ([format_bytes(s) for s in sizes], [f"p={r}" for r in ranks])
    fig = go.Figure([_heatmap_trace(z, text, "simulated", labels, algs, hover)])
    fig.add_traces(_legend_traces(algs))
    fig.update_xaxes(title_text="Message size per rank", type="category")
    fig.update_yaxes(title_text="Ranks", type="category")
    fig.update_layout(height=220 + 34 * len(ranks), margin={"t": 30, "b": 40})
    return fig


def _winner_at(simulated: pd.DataFrame, ranks: int, nbytes: int) -> str | None:
    """The simulated decided winner of a cell (None: not simulated, or a tie)."""
    found = simulated[
        (simulated["ranks"] == ranks) & (simulated["bytes"] == nbytes) & simulated["decided"]
    ]
    return str(found["algorithm"].iloc[0]) if len(found) else None


def crossover_by_ranks(crossovers: pd.DataFrame, pair: tuple[str, str]) -> go.Figure:
    """Where ``pair``'s order flips, against p: each simulated crossover between its two
    simulated sizes (the bar), and the closed form's on the platform's parameters (dashed)."""
    a, b = pair
    mine = crossovers[
        ((crossovers["algorithm_a"] == a) & (crossovers["algorithm_b"] == b))
        | ((crossovers["algorithm_a"] == b) & (crossovers["algorithm_b"] == a))
    ]
    if mine.empty:
        return _empty_figure(f"{a} and {b} never swap places in this run.")
    fig = go.Figure()
    simulated = mine[mine["kind"] == "measured"].sort_values("ranks")
    predicted = mine[mine["kind"] == "predicted"].sort_values("ranks")
    fig.add_trace(
        go.Scatter(
            x=simulated["ranks"].tolist(),
            y=simulated["bytes"].tolist(),
            mode="markers+lines",
            name="simulated (between two simulated sizes)",
            marker={"color": color(a), "size": 9},
            error_y={
                "type": "data",
                "symmetric": False,
                "array": (simulated["high_bytes"] - simulated["bytes"]).tolist(),
                "arrayminus": (simulated["bytes"] - simulated["low_bytes"]).tolist(),
            },
            customdata=[
                f"{format_bytes(lo)} .. {format_bytes(hi)}"
                for lo, hi in zip(simulated["low_bytes"], simulated["high_bytes"], strict=True)
            ],
            hovertemplate="p=%{x}: between %{customdata}<extra>simulated</extra>",
            meta={"role": "crossover", "kind": "simulated"},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=predicted["ranks"].tolist(),
            y=predicted["bytes"].tolist(),
            mode="markers+lines",
            name="closed form on the platform",
            line={"dash": "dash", "color": "#555555"},
            hovertemplate="p=%{x}: %{y:.3s} B<extra>closed form</extra>",
            meta={"role": "crossover", "kind": "predicted"},
        )
    )
    fig.update_xaxes(title_text="Ranks", type="log", dtick=0.30103)
    fig.update_yaxes(title_text=f"Crossover size ({a} / {b})", type="log")
    fig.update_layout(height=380, margin={"t": 30, "b": 40}, legend={"orientation": "h"})
    return fig


def flipping_pairs(winners: pd.DataFrame, crossovers: pd.DataFrame) -> list[tuple[str, str]]:
    """The pairs whose simulated crossovers are between two algorithms that each win some
    decided cell, the most crossovers first."""
    winning = set(winners.loc[winners["decided"].astype(bool), "algorithm"])
    simulated = crossovers[crossovers["kind"] == "measured"]
    counts: dict[tuple[str, str], int] = {}
    for row in simulated.itertuples(index=False):
        a, b = sorted((str(row.algorithm_a), str(row.algorithm_b)))
        if {a, b} <= winning:
            counts[(a, b)] = counts.get((a, b), 0) + 1
    return sorted(counts, key=lambda p: (-counts[p], p))
