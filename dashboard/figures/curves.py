"""The Curves figure: medians with bands, predictions and crossovers on log-log axes."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.span import clipped, cut_trace, median_span
from dashboard.figures.style import (
    METRICS,
    _bytes_axis,
    _empty_figure,
    dash_legend,
    family_color,
    library_dash,
    ratio_ticks,
    rgba,
    short_name,
)
from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.status import PointStatus
from runners.domain.units import format_bytes, format_seconds

# --- curves ------------------------------------------------------------------------------------


def metric_values(points: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The points with y, y_low, y_high (p5-p95 band), y_int_low, y_int_high (the 95%
    interval over launches) and y_pred in the chosen metric.

    relative: each time over the fastest median at its size among the points shown (1: the
    fastest), intervals likewise; no band or prediction (the absolute metrics draw them).
    time: microseconds. algbw: bytes / time / 1e9 GB/s (bands and intervals flip: the p95
    time gives the low bandwidth). busbw: algbw x the collective's factor (nccl-tests': allreduce
    2 (ranks - 1) / ranks, reduce_scatter and allgather (ranks - 1) / ranks, bcast and reduce 1).
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
    out = points.copy()
    for column in ("interval_low_s", "interval_high_s"):
        if column not in out:
            out[column] = out["median_s"]
    if metric == "relative":
        fastest = out.groupby("bytes")["median_s"].transform("min").astype(float)
        for new, old in (("y", "median_s"), ("y_int_low", "interval_low_s")):
            out[new] = out[old].astype(float) / fastest
        out["y_int_high"] = out["interval_high_s"].astype(float) / fastest
        out["y_low"] = out["y_high"] = out["y_pred"] = np.nan
        return out
    cols = {
        "y": "median_s",
        "y_low": "p5_s",
        "y_high": "p95_s",
        "y_int_low": "interval_low_s",
        "y_int_high": "interval_high_s",
        "y_pred": "predicted_s",
    }
    if metric == "time":
        for new, old in cols.items():
            out[new] = out[old].astype(float) * 1e6
        return out
    factor = busbw_factors(out) if metric == "busbw" else 1.0
    per_second = out["bytes"].astype(float) / 1e9 * factor
    flipped = {
        "y_low": "y_high",
        "y_high": "y_low",
        "y_int_low": "y_int_high",
        "y_int_high": "y_int_low",
    }
    for new, old in cols.items():
        out[flipped.get(new, new)] = per_second / out[old].astype(float)
    return out


def _hover(row: dict) -> str:
    """Hover text of one measured point, with its broken assumptions."""
    text = (
        f"{row['algorithm']}, {format_bytes(row['bytes'])}<br>"
        f"median {format_seconds(row['median_s'])} "
        f"(p5 {format_seconds(row['p5_s'])}, p95 {format_seconds(row['p95_s'])})"
    )
    if row.get("launches"):
        text += (
            f"<br>95% interval over {row['launches']} launches: "
            f"{format_seconds(row['interval_low_s'])} .. {format_seconds(row['interval_high_s'])}"
        )
    predicted = row.get("predicted_s")
    if isinstance(predicted, float) and not math.isnan(predicted):
        text += f"<br>model {row.get('model', '')}: {format_seconds(predicted)}"
    if row.get("violated"):
        text += f"<br>⚠ violated: {row['violated']}"
    return text


def _band_trace(alg: str, rows: pd.DataFrame) -> go.Scatter:
    """The p5-p95 band of one algorithm: out along y_high, back along y_low, filled."""
    x = rows["bytes"].astype(float).tolist()
    return go.Scatter(
        x=x + x[::-1],
        y=rows["y_high"].tolist() + rows["y_low"].tolist()[::-1],
        mode="lines",
        fill="toself",
        fillcolor=rgba(family_color(alg), 0.15),
        line={"width": 0},
        hoverinfo="skip",
        showlegend=False,
        legendgroup=alg,
        name=f"{alg} p5-p95",
        meta={"role": "band", "algorithm": alg},
    )


def _median_trace(alg: str, rows: pd.DataFrame) -> go.Scatter:
    """The measured median of one algorithm with its 95% interval over launches as error bars,
    in its family's colour and its library's line style; points breaking an assumption are
    crosses."""
    c = family_color(alg)
    return go.Scatter(
        x=rows["bytes"].astype(float).tolist(),
        y=rows["y"].tolist(),
        error_y={
            "type": "data",
            "symmetric": False,
            "array": (rows["y_int_high"] - rows["y"]).clip(lower=0).tolist(),
            "arrayminus": (rows["y"] - rows["y_int_low"]).clip(lower=0).tolist(),
            "color": c,
            "thickness": 1.5,
            "width": 4,
        },
        mode="lines+markers",
        line={"color": c, "width": 2, "dash": library_dash(alg)},
        marker={
            "color": c,
            "size": [11 if v else 7 for v in rows["violated"]],
            "symbol": ["x-thin-open" if v else "circle" for v in rows["violated"]],
            "line": {"width": 2, "color": c},
        },
        name=alg,
        legendgroup=alg,
        hovertext=[_hover(r) for r in rows.to_dict("records")],
        hoverinfo="text",
        meta={"role": "measured", "algorithm": alg},
    )


LEGEND_PER_ROW = 5  # algorithms per row of the horizontal legend (for the figure's height)
PREDICTION_DASH = "longdashdot"  # apart from every library's style (solid, dash, dot)


def _prediction_trace(alg: str, rows: pd.DataFrame) -> go.Scatter | None:
    """The model's prediction of one algorithm: a thin long-dash-dot line in its colour (None
    without one)."""
    predicted = rows.dropna(subset=["y_pred"])
    if predicted.empty:
        return None
    model = str(predicted["model"].iloc[0])
    return go.Scatter(
        x=predicted["bytes"].astype(float).tolist(),
        y=predicted["y_pred"].tolist(),
        mode="lines",
        line={"color": family_color(alg), "width": 1.5, "dash": PREDICTION_DASH},
        name=f"{alg} (model)" if model == alg else f"{alg} (model: {model})",
        legendgroup=alg,
        showlegend=False,  # one legend entry per algorithm: it toggles the whole group
        meta={"role": "predicted", "algorithm": alg, "model": model},
    )


def _algorithm_traces(alg: str, rows: pd.DataFrame, bands: bool) -> list[go.Scatter]:
    """Band (where asked and known), measured median and (if any) dashed prediction of one
    algorithm."""
    band = _band_trace(alg, rows) if bands and rows["y_low"].notna().any() else None
    traces = [band, _median_trace(alg, rows), _prediction_trace(alg, rows)]
    return [t for t in traces if t is not None]


def _log_curves(values: pd.DataFrame, column: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per algorithm, (log bytes, log value) in size order, for log-log interpolation."""
    usable = values[values[column] > 0].sort_values("bytes")
    return {
        str(alg): (
            np.log(rows["bytes"].to_numpy(dtype=float)),
            np.log(rows[column].to_numpy(dtype=float)),
        )
        for alg, rows in usable.groupby("algorithm")
    }


def _crossover_ys(values: pd.DataFrame, rows: pd.DataFrame) -> list[float]:
    """Where to draw each crossover: on algorithm_a's curve (else algorithm_b's), the predicted
    curve for a predicted crossover when there is one, interpolated on log-log axes."""
    curves = {column: _log_curves(values, column) for column in ("y", "y_pred")}
    finite = values["y"][values["y"] > 0]
    fallback = float(np.exp(np.log(finite).mean())) if len(finite) else 1.0
    ys = []
    for row in rows.itertuples(index=False):
        columns = ("y_pred", "y") if row.kind == "predicted" else ("y",)
        found = (
            curves[column][alg]
            for column in columns
            for alg in (row.algorithm_a, row.algorithm_b)
            if alg in curves[column]
        )
        logx, logy = next(found, (None, None))
        at = math.log(float(row.bytes))
        if logx is None or logy is None:
            ys.append(fallback)
        else:
            ys.append(float(np.exp(np.interp(at, logx, logy))))
    return ys


LABEL_SIDES = ("center", "right", "left")
NEAR_DECADES = 0.35  # labels of crossovers closer than this (log10 of bytes) would overlap


def label_positions(xs: list[float], vertical: str) -> list[str]:
    """Text positions for crossover labels: a lone one centred, neighbours closer than
    NEAR_DECADES pushed right and left in turn so their labels do not overlap."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    positions = [""] * len(xs)
    turn, previous = 0, None
    for i in order:
        near = previous is not None and math.log10(xs[i] / previous) < NEAR_DECADES
        turn = turn + 1 if near else 0
        positions[i] = f"{vertical} {LABEL_SIDES[turn % len(LABEL_SIDES)]}"
        previous = xs[i]
    return positions


def _crossover_trace(values: pd.DataFrame, rows: pd.DataFrame, kind: str) -> go.Scatter:
    """Markers and labels for crossovers of one kind, with their uncertainty as x error bars."""
    x = rows["bytes"].astype(float)
    low = rows["low_bytes"].astype(float).fillna(x)
    high = rows["high_bytes"].astype(float).fillna(x)
    pairs = list(zip(rows["algorithm_a"], rows["algorithm_b"], strict=True))
    measured = kind == "measured"
    return go.Scatter(
        x=x.tolist(),
        y=_crossover_ys(values, rows),
        mode="markers+text",
        marker={
            "symbol": "diamond" if measured else "diamond-open",
            "size": 13,
            "color": "black" if measured else "#555555",
            "line": {"width": 2, "color": "black" if measured else "#555555"},
        },
        error_x={
            "type": "data",
            "symmetric": False,
            "array": (high - x).clip(lower=0).tolist(),
            "arrayminus": (x - low).clip(lower=0).tolist(),
            "color": "#555555",
            "thickness": 1.5,
        },
        text=[f"{short_name(a)}→{short_name(b)}" for a, b in pairs],
        textposition=label_positions(x.tolist(), "top" if measured else "bottom"),
        textfont={"size": 13, "color": "black" if measured else "#444444"},
        hovertext=[
            f"{kind} crossover {a} → {b} at {format_bytes(at)} "
            f"(range {format_bytes(lo)} .. {format_bytes(hi)})"
            for (a, b), at, lo, hi in zip(pairs, x, low, high, strict=True)
        ],
        hoverinfo="text",
        name=f"{kind} crossover",
        meta={"role": "crossover", "kind": kind},
    )


def busbw_factors(points: pd.DataFrame) -> pd.Series:
    """nccl-tests' busbw / algbw of each point: its collective's factor at its group size."""

    def factor(algorithm: str, ranks: int) -> float:
        spec = ALGORITHMS.get(algorithm)  # a name it does not know: allreduce's, as ever
        collective = spec.collective if spec is not None else "allreduce"
        return COLLECTIVES[collective].busbw(int(ranks))

    algorithms = points["algorithm"] if "algorithm" in points else ["allreduce"] * len(points)
    return pd.Series(
        [factor(a, r) for a, r in zip(algorithms, points["ranks"], strict=True)],
        index=points.index,
        dtype=float,
    )


def curves_figure(
    points: pd.DataFrame,
    crossovers: pd.DataFrame,
    metric: str = "time",
    bands: bool = False,
) -> go.Figure:
    """Metric vs bytes: per algorithm a p5-p95 band, the measured median and the model's
    prediction (thin long-dash-dot) in the same colour, crossovers marked and labelled, on
    log-log axes; the colour is the algorithm's family (`ring`, `ring@openmpi`, `ring@impi`
    alike), the line style its library (solid MPICH, dash Open MPI, dot Intel MPI), which the
    legend's title says when a library other than MPICH is drawn;
    `relative` draws each median over the fastest at its size, with its interval, on a log
    axis from 1 (how much slower each one is, where the absolute curves merge). The y axis
    spans the medians (and predictions), never an interval or band: one wide interval cannot
    flatten the medians; an interval that leaves the axis is cut at its edge and marked by a
    triangle there. The p5-p95 bands only with `bands`.

    Points that break an assumption are drawn as crosses (the page says why).
    """
    ok = points[(points["status"] == PointStatus.OK) & points["median_s"].notna()]
    if ok.empty:
        return _empty_figure("No successfully measured points in this view.")
    values = metric_values(ok, metric)
    fig = go.Figure()
    low, high = median_span(values, relative=metric == "relative")
    values = clipped(values, low, high)
    for alg, rows in values.groupby("algorithm", sort=True):
        fig.add_traces(_algorithm_traces(str(alg), rows.sort_values("bytes"), bands))
    cut = values[values["cut"]]
    if not cut.empty:
        fig.add_trace(cut_trace(cut, high))
    relative = metric == "relative"
    for kind in () if relative else ("measured", "predicted"):
        rows = crossovers[crossovers["kind"] == kind] if not crossovers.empty else crossovers
        if not rows.empty:
            fig.add_trace(_crossover_trace(values, rows, kind))
    _bytes_axis(fig, values["bytes"].tolist())
    _y_axis(fig, metric, low, high)
    _legend_below(fig, values)
    return fig


def _y_axis(fig: go.Figure, metric: str, low: float, high: float) -> None:
    """A log y axis from ``low`` to ``high``: ratios ticked as 1x, 2x, ... in the relative
    view, plain numbers otherwise."""
    span = [math.log10(low), math.log10(high)]
    if metric == "relative":
        fig.add_hline(y=1, line_dash="dot")
        ticks = [t for t in ratio_ticks(low, high) if low <= t <= high]
        labels = [f"{t:g}x" for t in ticks]
        fig.update_yaxes(type="log", range=span, tickvals=ticks, ticktext=labels,
                         title_text=METRICS[metric])  # fmt: skip
    else:
        # "~g": 0.0001 and 100000 as numbers, never SI prefixes ("100µ" GB/s read as a unit)
        fig.update_yaxes(type="log", range=span, dtick=1, tickformat="~g",
                         title_text=METRICS[metric])  # fmt: skip


def _legend_below(fig: go.Figure, values: pd.DataFrame) -> None:
    """The legend below the plot (the plot keeps the page's width), the figure tall enough."""
    styles = dash_legend(values["algorithm"].unique().tolist())
    rows_of_legend = math.ceil(values["algorithm"].nunique() / LEGEND_PER_ROW) + bool(styles)
    fig.update_layout(
        height=660 + 24 * rows_of_legend,
        margin={"l": 60, "r": 20, "t": 30, "b": 70 + 24 * rows_of_legend},
        legend={
            "groupclick": "togglegroup",
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": -0.12,
            "yanchor": "top",
            "title": {"text": styles, "side": "top"},
        },
        hovermode="closest",
    )
