"""Plotly figures for the dashboard, built from the small frames of dashboard.queries.

No Streamlit, no store access. Every trace carries ``meta`` = {"role": ..., ...} (roles: band,
measured, predicted, crossover, best, speedup, pingpong, fit, segment, residual, ratio, probe,
share, total, replayed, delta), so tests and readers can find a figure's parts without relying
on colours or names.
"""

from __future__ import annotations

from dashboard.figures.adaptive import rounds_figure
from dashboard.figures.best import best_heatmaps
from dashboard.figures.compare import compare_figure
from dashboard.figures.curves import curves_figure, metric_values
from dashboard.figures.machine import probes_figure
from dashboard.figures.model_fit import pingpong_figure, residuals_figure
from dashboard.figures.override import override_figure
from dashboard.figures.parameters import parameter_figure
from dashboard.figures.placements import placements_figure
from dashboard.figures.scale import (
    AGREES,
    DIFFERS,
    crossover_by_ranks,
    flipping_pairs,
    scale_heatmap,
)
from dashboard.figures.strip import winner_strip
from dashboard.figures.style import (
    FALLBACK_COLORS,
    METRICS,
    color,
    ratio_ticks,
    rgba,
    short_name,
)
from dashboard.figures.workload import call_shares_figure, policies_figure, wins_figure

__all__ = [
    "AGREES",
    "DIFFERS",
    "FALLBACK_COLORS",
    "METRICS",
    "best_heatmaps",
    "call_shares_figure",
    "color",
    "compare_figure",
    "crossover_by_ranks",
    "curves_figure",
    "flipping_pairs",
    "metric_values",
    "override_figure",
    "parameter_figure",
    "pingpong_figure",
    "placements_figure",
    "policies_figure",
    "probes_figure",
    "ratio_ticks",
    "residuals_figure",
    "rgba",
    "rounds_figure",
    "scale_heatmap",
    "short_name",
    "winner_strip",
    "wins_figure",
]
