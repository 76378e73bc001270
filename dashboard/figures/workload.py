"""The Workload page's figures: where the job's time goes, the policies' job totals side by
side, and one policy's wins and losses per call against the default.

Trace roles (meta): share, total, predicted, replayed, delta."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.style import _empty_figure
from runners.domain.units import column_unit, format_ratio, format_seconds

VERDICT_COLORS = {"faster": "#2ca02c", "slower": "#d62728"}
UNDECIDED = "#c7c7c7"
BAR_COLOR = "#1f77b4"
ROW_PX = 34  # height per bar of a horizontal bar chart


def _height(rows: int) -> int:
    """A horizontal bar chart's height for `rows` bars."""
    return max(260, 120 + ROW_PX * rows)


def _scaled(seconds: Sequence[float]) -> tuple[str, float]:
    """The unit a linear axis of these seconds is drawn in (the one its largest value reads
    best in), and its scale."""
    found = [abs(s) for s in seconds if s is not None and math.isfinite(s)]
    return column_unit([max(found, default=0.0)])


def _seconds_axis(fig: go.Figure, values: Sequence[float], title: str) -> None:
    """A log x axis over `values` (seconds) with a margin either side, ticked at round times
    (finer where the values span less than a decade) in the units people read."""
    found = [v for v in values if v and math.isfinite(v) and v > 0]
    if not found:
        return
    low, high = min(found) / 1.25, max(found) * 1.25
    span = math.log10(high / low)
    steps = (1, 1.5, 2, 3, 5, 7) if span <= 1 else (1, 2, 5) if span <= 3 else (1,)
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    ticks = [m * 10.0**k for k in decades for m in steps if low <= m * 10.0**k <= high]
    fig.update_xaxes(
        type="log",
        range=[math.log10(low), math.log10(high)],
        tickvals=ticks,
        ticktext=[format_seconds(t) for t in ticks],
        title_text=title,
    )


def call_shares_figure(calls: pd.DataFrame, policy: str = "default") -> go.Figure:
    """The job's calls under `policy` (its rows of workload_calls, labelled in `call`): each
    call's time (calls x median), costliest on top, with its share of the job."""
    if calls.empty:
        return _empty_figure("The report priced none of the workload's calls.")
    rows = calls.sort_values("time_s", ascending=False)
    whole = float(rows["time_s"].sum()) or 1.0
    unit, scale = _scaled(rows["time_s"].tolist())
    shares = [100 * t / whole for t in rows["time_s"]]
    fig = go.Figure(
        go.Bar(
            x=(rows["time_s"] / scale).tolist(),
            y=rows["call"].tolist(),
            orientation="h",
            marker_color=BAR_COLOR,
            text=[f"{s:.1f}%" for s in shares],
            textposition="auto",
            hovertext=[
                f"{r.call}: {r.algorithm}, {format_seconds(r.median_s)} per call, "
                f"{format_seconds(r.time_s)} per job ({s:.1f}%)"
                for r, s in zip(rows.itertuples(index=False), shares, strict=True)
            ],
            hoverinfo="text",
            meta={"role": "share", "policy": policy},
        )
    )
    fig.update_yaxes(autorange="reversed", title_text=None)
    fig.update_xaxes(title_text=f"Time per job under {policy} ({unit}): calls x median")
    fig.update_layout(height=_height(len(rows)), margin={"t": 30})
    return fig


def _error_bars(policies: pd.DataFrame) -> dict:
    """Asymmetric error bars from each total to its interval's ends (none where unknown)."""
    low = (policies["total_s"] - policies["interval_low_s"]).clip(lower=0).fillna(0)
    high = (policies["interval_high_s"] - policies["total_s"]).clip(lower=0).fillna(0)
    return {
        "type": "data",
        "symmetric": False,
        "array": high.tolist(),
        "arrayminus": low.tolist(),
        "color": "#444",
        "thickness": 1.5,
    }


def _total_hover(row: pd.Series) -> str:
    """One policy's total in words: interval, against the default, calls won and lost."""
    interval = (
        f" [{format_seconds(row.interval_low_s)}, {format_seconds(row.interval_high_s)}]"
        if pd.notna(row.interval_low_s) and pd.notna(row.interval_high_s)
        else ""
    )
    versus = (
        f"; {format_ratio(row.ratio)} the default, {row.verdict}"
        if pd.notna(row.ratio)
        else f"; {row.verdict}"
    )
    return (
        f"{row.policy} ({row.kind}): {format_seconds(row.total_s)}{interval}{versus}; "
        f"{int(row.faster_calls)} calls faster, {int(row.slower_calls)} slower"
    )


def policies_figure(policies: pd.DataFrame, replayed: Mapping[str, float]) -> go.Figure:
    """Every policy's job total (policies: workload_policies rows, in reading order) with its
    95% interval as error bars, coloured by its verdict against the default, the default's
    total as a line, the model's prediction beside each and, per replayed policy, its replayed
    job time (`replayed`, seconds)."""
    if policies.empty:
        return _empty_figure("No policy could price the workload's calls.")
    names = policies["policy"].tolist()
    predicted = policies.dropna(subset=["predicted_s"])
    shown = {p: s for p, s in replayed.items() if p in names}
    fig = go.Figure(_totals_trace(policies))
    fig.add_trace(_predicted_trace(predicted))
    fig.add_trace(_replayed_trace(shown))
    _default_line(fig, float(policies["default_total_s"].iloc[0]))
    values = [
        *policies["interval_low_s"].dropna(),
        *policies["interval_high_s"].dropna(),
        *policies["total_s"],
        *predicted["predicted_s"],
        *shown.values(),
    ]
    _seconds_axis(fig, values, "Communication time per job")
    fig.update_yaxes(autorange="reversed", title_text=None)
    fig.update_layout(
        height=_height(len(names)) + 40,
        margin={"t": 40},
        legend={"orientation": "h", "y": -0.15},
    )
    return fig


def _totals_trace(policies: pd.DataFrame) -> go.Scatter:
    """Each policy's job total with its 95% interval, coloured by its verdict."""
    return go.Scatter(
        x=policies["total_s"].tolist(),
        y=policies["policy"].tolist(),
        mode="markers",
        marker={
            "size": 14,
            "color": [VERDICT_COLORS.get(v, UNDECIDED) for v in policies["verdict"]],
            "symbol": "square",
        },
        error_x=_error_bars(policies),
        name="job total (95% interval)",
        hovertext=[_total_hover(row) for _, row in policies.iterrows()],
        hoverinfo="text",
        meta={"role": "total"},
    )


def _predicted_trace(predicted: pd.DataFrame) -> go.Scatter:
    """The model's prediction of each policy's job total (policies that have one)."""
    return go.Scatter(
        x=predicted["predicted_s"].tolist(),
        y=predicted["policy"].tolist(),
        mode="markers",
        marker={"size": 11, "symbol": "diamond-open", "color": "#7f7f7f", "line_width": 2},
        name="predicted by the model",
        hovertext=[
            f"{p}: the model predicts {format_seconds(s)}"
            for p, s in zip(predicted["policy"], predicted["predicted_s"], strict=True)
        ],
        hoverinfo="text",
        meta={"role": "predicted"},
    )


def _replayed_trace(shown: Mapping[str, float]) -> go.Scatter:
    """Each replayed policy's job time on real ranks (in the legend only when none was)."""
    return go.Scatter(
        x=list(shown.values()),
        y=list(shown),
        mode="markers",
        marker={"size": 13, "symbol": "x-thin-open", "color": "#000", "line_width": 3},
        name="replayed on real ranks",
        hovertext=[f"{p}: replayed {format_seconds(s)}" for p, s in shown.items()],
        hoverinfo="text",
        meta={"role": "replayed"},
        visible=True if shown else "legendonly",
    )


def _default_line(fig: go.Figure, default: float) -> None:
    """The default policy's job total as a dotted line, named above the plot."""
    fig.add_vline(x=default, line_dash="dot", line_color="#555")
    fig.add_annotation(  # on a log axis an annotation's x is the exponent (a shape's is not)
        x=math.log10(default),
        xref="x",
        y=1,
        yref="paper",
        yanchor="bottom",
        text=f"default {format_seconds(default)}",
        showarrow=False,
    )


def wins_figure(calls: pd.DataFrame, policy: str) -> go.Figure:
    """Per call, what `policy` changes in the job's time against the default (delta_s: below
    zero it saves time), green where decidedly faster, red where decidedly slower, grey where
    the launches could not tell (or it is the default's own choice); the share of the default
    job beside each bar."""
    if calls.empty:
        return _empty_figure(f"{policy} prices none of the workload's calls.")
    rows = calls.sort_values("delta_s")
    unit, scale = _scaled(rows["delta_s"].tolist())
    shares = rows["share_of_default"].fillna(0)
    fig = go.Figure(
        go.Bar(
            x=(rows["delta_s"] / scale).tolist(),
            y=rows["call"].tolist(),
            orientation="h",
            marker_color=[VERDICT_COLORS.get(v, UNDECIDED) for v in rows["verdict"]],
            text=[f"{100 * s:+.1f}% of the job" for s in shares],
            textposition="auto",
            hovertext=[
                f"{r.call}: {r.algorithm}, {format_seconds(r.time_s)} instead of "
                f"{format_seconds(r.default_time_s)} ({r.verdict}"
                + (f", {format_ratio(r.ratio)} per call" if pd.notna(r.ratio) else "")
                + ")"
                for r in rows.itertuples(index=False)
            ],
            hoverinfo="text",
            customdata=rows["verdict"].tolist(),
            meta={"role": "delta", "policy": policy},
        )
    )
    fig.add_vline(x=0, line_color="#555")
    fig.update_yaxes(autorange="reversed", title_text=None)
    fig.update_xaxes(
        title_text=f"Change in the job's time against the default ({unit}; below 0: saves)"
    )
    fig.update_layout(height=_height(len(rows)), margin={"t": 30})
    return fig
