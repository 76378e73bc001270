"""Plotly figures for the dashboard, built from the small frames of dashboard.queries.

No Streamlit, no store access. Every trace carries ``meta`` = {"role": ..., ...} (roles: band,
measured, predicted, crossover, best, speedup, pingpong, fit, segment, residual, ratio), so
tests and readers can find a figure's parts without relying on colours or names.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from runners.domain.units import format_bytes

METRICS = {
    "time": "Time per call (µs)",
    "algbw": "Algorithm bandwidth (GB/s)",
    "busbw": "Bus bandwidth (GB/s)",
}
ALGORITHM_COLORS = {
    "recursive_doubling": "#1f77b4",
    "binomial_tree": "#ff7f0e",
    "rabenseifner": "#2ca02c",
    "ring": "#d62728",
    "mpi": "#3b3b3b",
    "lower_bound": "#9467bd",
    "mpi:recursive_doubling": "#7fb3e0",
    "mpi:tree": "#ffbb78",
    "mpi:reduce_scatter_allgather": "#98df8a",
    "mpi:ring": "#f19a9b",
}
FALLBACK_COLORS = ("#8c564b", "#e377c2", "#bcbd22", "#17becf", "#7f7f7f", "#9edae5")
SHORT_NAMES = {
    "recursive_doubling": "rd",
    "binomial_tree": "tree",
    "rabenseifner": "rab",
    "ring": "ring",
    "mpi": "mpi",
}
VERDICT_SYMBOLS = {
    "faster": "triangle-up",
    "slower": "triangle-down",
    "within noise": "circle-open",
    "unknown": "circle",
}


# --- small helpers -----------------------------------------------------------------------------


def color(algorithm: str) -> str:
    """A stable colour per algorithm; library-forced variants are lighter than their model."""
    if algorithm in ALGORITHM_COLORS:
        return ALGORITHM_COLORS[algorithm]
    return FALLBACK_COLORS[zlib.crc32(algorithm.encode()) % len(FALLBACK_COLORS)]


def rgba(hex_color: str, alpha: float) -> str:
    """'#rrggbb' as an rgba() string with the given opacity."""
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def short_name(algorithm: str) -> str:
    """A compact label for heatmap cells: rd, tree, rab, ring, mpi, mpi:ring..."""
    prefix, sep, forced = algorithm.partition(":")
    if sep:
        return f"{prefix}:{SHORT_NAMES.get(forced, forced)}"
    return SHORT_NAMES.get(algorithm, algorithm)


def _empty_figure(message: str) -> go.Figure:
    """A blank figure that says why it is blank."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=300)
    return fig


def _bytes_axis(fig: go.Figure, sizes: Sequence[float], **where: int) -> None:
    """A log x axis ticked at the measured sizes, labelled in binary units."""
    ticks = sorted({float(s) for s in sizes if s and s > 0})
    step = max(1, math.ceil(len(ticks) / 12))
    shown = ticks[::step]
    fig.update_xaxes(
        type="log",
        title_text="Message size per rank",
        tickvals=shown,
        ticktext=[format_bytes(s) for s in shown],
        **where,
    )


RATIO_TICKS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20)


def _ratio_axis(fig: go.Figure, values: pd.Series, title: str) -> None:
    """A log y axis for ratios around 1, ticked at round ratios (0.5x, 1x, 2x...)."""
    lo, hi = float(values.min()), float(values.max())
    span = max(abs(math.log10(lo)), abs(math.log10(hi)), 0.05) * 1.15
    ticks = [t for t in RATIO_TICKS if -span <= math.log10(t) <= span]
    if len(ticks) > 9:
        ticks = [t for t in ticks if t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20)]
    fig.update_yaxes(
        type="log",
        range=[-span, span],
        tickvals=ticks,
        ticktext=[f"{t:g}x" for t in ticks],
        title_text=title,
    )


# --- curves ------------------------------------------------------------------------------------


def metric_values(points: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The points with y, y_low, y_high (p5-p95 band) and y_pred in the chosen metric.

    time: microseconds. algbw: bytes / time / 1e9 GB/s (the band flips: the p95 time gives
    the low bandwidth). busbw: algbw x 2 (ranks - 1) / ranks.
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
    out = points.copy()
    cols = {"y": "median_s", "y_low": "p5_s", "y_high": "p95_s", "y_pred": "predicted_s"}
    if metric == "time":
        for new, old in cols.items():
            out[new] = out[old].astype(float) * 1e6
        return out
    factor = 2 * (out["ranks"] - 1) / out["ranks"] if metric == "busbw" else 1.0
    per_second = out["bytes"].astype(float) / 1e9 * factor
    out["y"] = per_second / out["median_s"].astype(float)
    out["y_low"] = per_second / out["p95_s"].astype(float)
    out["y_high"] = per_second / out["p5_s"].astype(float)
    out["y_pred"] = per_second / out["predicted_s"].astype(float)
    return out


def _hover(row: dict) -> str:
    """Hover text of one measured point, with its broken assumptions."""
    text = (
        f"{row['algorithm']}, {format_bytes(row['bytes'])}<br>"
        f"median {row['median_s']:.3g} s (p5 {row['p5_s']:.3g}, p95 {row['p95_s']:.3g})"
    )
    predicted = row.get("predicted_s")
    if isinstance(predicted, float) and not math.isnan(predicted):
        text += f"<br>model {row.get('model', '')}: {predicted:.3g} s"
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
        fillcolor=rgba(color(alg), 0.15),
        line={"width": 0},
        hoverinfo="skip",
        showlegend=False,
        legendgroup=alg,
        name=f"{alg} p5-p95",
        meta={"role": "band", "algorithm": alg},
    )


def _median_trace(alg: str, rows: pd.DataFrame) -> go.Scatter:
    """The measured median of one algorithm; points breaking an assumption are crosses."""
    c = color(alg)
    return go.Scatter(
        x=rows["bytes"].astype(float).tolist(),
        y=rows["y"].tolist(),
        mode="lines+markers",
        line={"color": c, "width": 2},
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


def _prediction_trace(alg: str, rows: pd.DataFrame) -> go.Scatter | None:
    """The model's prediction of one algorithm, dashed in its colour (None without one)."""
    predicted = rows.dropna(subset=["y_pred"])
    if predicted.empty:
        return None
    model = str(predicted["model"].iloc[0])
    return go.Scatter(
        x=predicted["bytes"].astype(float).tolist(),
        y=predicted["y_pred"].tolist(),
        mode="lines",
        line={"color": color(alg), "width": 2, "dash": "dash"},
        name=f"{alg} (model)" if model == alg else f"{alg} (model: {model})",
        legendgroup=alg,
        meta={"role": "predicted", "algorithm": alg, "model": model},
    )


def _algorithm_traces(alg: str, rows: pd.DataFrame) -> list[go.Scatter]:
    """Band, measured median and (if any) dashed prediction of one algorithm."""
    traces = [_band_trace(alg, rows), _median_trace(alg, rows), _prediction_trace(alg, rows)]
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
        ys.append(fallback if logx is None else float(np.exp(np.interp(at, logx, logy))))
    return ys


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
        textposition="top center" if measured else "bottom center",
        hovertext=[
            f"{kind} crossover {a} → {b} at {format_bytes(at)} "
            f"(range {format_bytes(lo)} .. {format_bytes(hi)})"
            for (a, b), at, lo, hi in zip(pairs, x, low, high, strict=True)
        ],
        hoverinfo="text",
        name=f"{kind} crossover",
        meta={"role": "crossover", "kind": kind},
    )


def curves_figure(
    points: pd.DataFrame,
    crossovers: pd.DataFrame,
    metric: str = "time",
    warning: str | None = None,
) -> go.Figure:
    """Metric vs bytes on log-log axes: per algorithm a p5-p95 band, the measured median and
    the model's prediction dashed in the same colour; crossovers marked and labelled.

    Points that break an assumption are drawn as crosses; ``warning`` is shown on the figure.
    """
    ok = points[(points["status"] == "ok") & points["median_s"].notna()]
    if ok.empty:
        return _empty_figure("No successfully measured points in this view.")
    values = metric_values(ok, metric)
    fig = go.Figure()
    for alg, rows in values.groupby("algorithm", sort=True):
        fig.add_traces(_algorithm_traces(str(alg), rows.sort_values("bytes")))
    for kind in ("measured", "predicted"):
        rows = crossovers[crossovers["kind"] == kind] if not crossovers.empty else crossovers
        if not rows.empty:
            fig.add_trace(_crossover_trace(values, rows, kind))
    _bytes_axis(fig, values["bytes"].tolist())
    fig.update_yaxes(type="log", dtick=1, title_text=METRICS[metric])
    fig.update_layout(
        height=560,
        margin={
            "l": 60,
            "r": 20,
            "t": 30 + 18 * (warning or "").count("<br>") + (40 if warning else 0),
            "b": 50,
        },
        legend={"groupclick": "togglegroup"},
        hovermode="closest",
    )
    if warning:
        fig.add_annotation(
            text=f"⚠ {warning}",
            x=0,
            y=1.02,
            xref="paper",
            yref="paper",
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            align="left",
            font={"color": "#b00020", "size": 12},
        )
    return fig


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


# --- override impact ---------------------------------------------------------------------------


def override_figure(impact: pd.DataFrame, forced: str) -> go.Figure:
    """Speed-up of a forced algorithm over the autotuned 'mpi' vs bytes, one line per ranks.

    Above 1 the override wins; markers show whether the confidence intervals separate.
    """
    if impact.empty:
        return _empty_figure(f"No sizes where both {forced} and mpi were measured.")
    fig = go.Figure()
    fig.add_hrect(y0=1, y1=10, fillcolor="rgba(44,160,44,0.07)", line_width=0, layer="below")
    fig.add_hrect(y0=0.1, y1=1, fillcolor="rgba(214,39,40,0.07)", line_width=0, layer="below")
    palette = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
    for k, (ranks, rows) in enumerate(impact.groupby("ranks", sort=True)):
        fig.add_trace(
            go.Scatter(
                x=rows["bytes"].astype(float).tolist(),
                y=rows["speedup"].tolist(),
                mode="lines+markers",
                line={"color": palette[k % len(palette)]},
                marker={
                    "size": 11,
                    "symbol": [VERDICT_SYMBOLS.get(v, "circle") for v in rows["verdict"]],
                },
                name=f"p={ranks}",
                hovertext=[
                    f"p={ranks}, {format_bytes(b)}: {s:.2f}x ({v})"
                    for b, s, v in zip(rows["bytes"], rows["speedup"], rows["verdict"], strict=True)
                ],
                hoverinfo="text",
                meta={"role": "speedup", "ranks": int(ranks)},
            )
        )
    fig.add_hline(y=1, line_dash="dot", annotation_text="autotuned MPI_Allreduce (mpi)")
    _bytes_axis(fig, impact["bytes"].tolist())
    _ratio_axis(fig, impact["speedup"], f"Speed-up of {forced} over mpi (>1: wins)")
    fig.update_layout(height=480, margin={"t": 30})
    return fig


# --- model fit ---------------------------------------------------------------------------------


def _segment_trace(seg: dict, k: int) -> go.Scatter:
    """One piecewise segment of the ping-pong fit, dashed across its size range."""
    n = np.geomspace(max(float(seg["min_bytes"]), 1.0), max(float(seg["max_bytes"]), 2.0), 20)
    return go.Scatter(
        x=n.tolist(),
        y=((float(seg["alpha_s"]) + n * float(seg["beta_s_per_byte"])) * 1e6).tolist(),
        mode="lines",
        line={"dash": "dash", "width": 2, "color": FALLBACK_COLORS[k % len(FALLBACK_COLORS)]},
        name=f"segment {k + 1}: alpha={float(seg['alpha_s']):.3g} s, "
        f"beta={float(seg['beta_s_per_byte']):.3g} s/B",
        meta={"role": "segment", "index": k},
    )


def pingpong_figure(cal: dict) -> go.Figure:
    """Ping-pong one-way medians vs the whole-range fit and the piecewise segments (in µs)."""
    pingpong = (cal.get("details") or {}).get("pingpong") or {}
    sizes = [float(s) for s in pingpong.get("bytes", [])]
    times = [float(t) * 1e6 for t in pingpong.get("one_way_median_s", [])]
    if not sizes:
        return _empty_figure("This calibration kept no ping-pong medians (details.pingpong).")
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=sizes,
            y=times,
            mode="markers",
            marker={"size": 8, "color": "black"},
            name="ping-pong one-way median",
            meta={"role": "pingpong"},
        )
    )
    n = np.geomspace(min(sizes), max(sizes), 60)
    alpha, beta = float(cal["alpha_s"]), float(cal["beta_s_per_byte"])
    fig.add_trace(
        go.Scatter(
            x=n.tolist(),
            y=((alpha + n * beta) * 1e6).tolist(),
            mode="lines",
            line={"color": "#7f7f7f", "width": 2},
            name=f"whole-range fit: alpha={alpha:.3g} s, beta={beta:.3g} s/B",
            meta={"role": "fit"},
        )
    )
    for k, seg in enumerate(cal.get("segments") or []):
        fig.add_trace(_segment_trace(seg, k))
    for b in cal.get("breakpoints") or []:
        fig.add_vline(x=float(b), line_dash="dot", line_color="#999999")
    _bytes_axis(fig, sizes)
    fig.update_yaxes(type="log", dtick=1, title_text="One-way time (µs)")
    fig.update_layout(height=460, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return fig


def residuals_figure(resid: pd.DataFrame) -> go.Figure:
    """measured / predicted per algorithm (rows) and size (columns), 1 = the model is exact.

    The autotuned 'mpi' is predicted by the lower bound; its row says so.
    """
    if resid.empty:
        return _empty_figure("No points with both a measurement and a prediction.")
    bound = resid["model"].eq("lower_bound").map({True: " vs lower_bound", False: ""})
    frame = resid.assign(label=resid["algorithm"] + bound + " · p=" + resid["ranks"].astype(str))
    table = frame.pivot_table(
        index="label", columns="bytes", values="measured_over_predicted", aggfunc="first"
    )
    z = np.log2(table.to_numpy(dtype=float))
    limit = max(1.0, float(np.nanmax(np.abs(z)))) if np.isfinite(z).any() else 1.0
    text = [[f"{v:.2f}x" if np.isfinite(v) else "" for v in row] for row in table.to_numpy()]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[format_bytes(b) for b in table.columns],
            y=list(table.index),
            text=text,
            texttemplate="%{text}",
            colorscale="RdBu_r",
            zmid=0,
            zmin=-limit,
            zmax=limit,
            colorbar={"title": "log2(meas/pred)"},
            hovertemplate="%{y}, %{x}: measured / predicted = %{text}<extra></extra>",
            meta={"role": "residual"},
        )
    )
    fig.update_xaxes(type="category", title_text="Message size per rank")
    fig.update_layout(height=160 + 28 * len(table.index), margin={"t": 30})
    return fig


# --- comparing runs ----------------------------------------------------------------------------


def compare_figure(ratios: pd.DataFrame, threshold: float, run_a: str, run_b: str) -> go.Figure:
    """b / a median ratio per point vs bytes, one colour per algorithm, threshold band shaded."""
    if ratios.empty:
        return _empty_figure("The two runs share no successfully measured points.")
    fig = go.Figure()
    fig.add_hrect(
        y0=1 / (1 + threshold),
        y1=1 + threshold,
        fillcolor="rgba(127,127,127,0.15)",
        line_width=0,
        layer="below",
    )
    for alg, rows in ratios.groupby("algorithm", sort=True):
        fig.add_trace(
            go.Scatter(
                x=rows["bytes"].astype(float).tolist(),
                y=rows["b_over_a"].tolist(),
                mode="markers",
                marker={"color": color(str(alg)), "size": 9},
                name=str(alg),
                hovertext=[
                    f"{alg} p={r} {format_bytes(b)} {d}/{o}: {v:.2f}x"
                    for r, b, d, o, v in zip(
                        rows["ranks"],
                        rows["bytes"],
                        rows["dtype"],
                        rows["op"],
                        rows["b_over_a"],
                        strict=True,
                    )
                ],
                hoverinfo="text",
                meta={"role": "ratio", "algorithm": str(alg)},
            )
        )
    fig.add_hline(y=1, line_dash="dot")
    _bytes_axis(fig, ratios["bytes"].tolist())
    limits = pd.concat([ratios["b_over_a"], pd.Series([1 + threshold, 1 / (1 + threshold)])])
    _ratio_axis(fig, limits, f"median B / A (>1: {run_b} slower)")
    fig.update_layout(height=440, margin={"t": 30})
    return fig
