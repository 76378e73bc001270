"""The figures' shared look: metrics, colours and short names per algorithm, axes."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from runners.domain.collectives.descriptor import IMPI, MPICH, OPENMPI
from runners.domain.libraries import LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.units import format_bytes

METRICS = {
    "relative": "Time over the fastest at each size (1 = fastest)",
    "time": "Time per call (µs)",
    "algbw": "Algorithm bandwidth (GB/s)",
    "busbw": "Bus bandwidth (GB/s)",
}
# Colours and short labels come from each algorithm's entry in the catalog (color, short_name).
FALLBACK_COLORS = ("#aec7e8", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d")
VERDICT_SYMBOLS = {
    "faster": "triangle-up",
    "slower": "triangle-down",
    "within noise": "circle-open",
    "unknown": "circle",
}


# Where curves of several libraries share a figure: the line style says the library, the
# colour the algorithm family (the MPICH algorithm an entry stands for), so ring, ring@openmpi
# and ring@impi are one hue in three styles.
LIBRARY_DASHES = {MPICH: "solid", OPENMPI: "dash", IMPI: "dot"}
DASH_WORDS = {"solid": "solid", "dash": "dashed", "dot": "dotted"}


# --- small helpers -----------------------------------------------------------------------------


def color(algorithm: str) -> str:
    """A stable colour per algorithm (its descriptor's); a stable fallback for other names."""
    spec = ALGORITHMS.get(algorithm)  # a family's member (hierarchical(node=2)) too
    if spec is not None:
        return spec.color
    return FALLBACK_COLORS[zlib.crc32(algorithm.encode()) % len(FALLBACK_COLORS)]


def family(algorithm: str) -> str:
    """The MPICH algorithm an entry stands for (`ring@openmpi`, `impi:ring`: `ring`,
    `mpi:ring`; `openmpi`: `mpi`), else itself (also a name the catalog does not know)."""
    spec = ALGORITHMS.get(algorithm)
    return (spec.mirrors or algorithm) if spec else algorithm


def family_color(algorithm: str) -> str:
    """The colour of the algorithm's family: one hue for an algorithm on every library."""
    return color(family(algorithm))


def _library(algorithm: str) -> str:
    """The library whose ranks ran the algorithm (MPICH for an unknown name)."""
    spec = ALGORITHMS.get(algorithm)
    return spec.runs_on if spec else MPICH


def library_dash(algorithm: str) -> str:
    """The line style of the algorithm's library: solid MPICH, dash Open MPI, dot Intel MPI."""
    return LIBRARY_DASHES.get(_library(algorithm), "solid")


def dash_legend(algorithms: Sequence[str]) -> str:
    """What the line styles mean, for a figure of these algorithms ('' when all run on MPICH,
    whose lines are plain solid): 'Line style = library: solid MPICH, dashed Open MPI ...'."""
    libraries = [lib for lib in LIBRARY_DASHES if lib in {_library(a) for a in algorithms}]
    if libraries in ([], [MPICH]):
        return ""
    styles = ", ".join(
        f"{DASH_WORDS[LIBRARY_DASHES[lib]]} {LIBRARIES[lib].title}" for lib in libraries
    )
    return f"Line style = library: {styles}; colour = algorithm"


def rgba(hex_color: str, alpha: float) -> str:
    """'#rrggbb' as an rgba() string with the given opacity."""
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def short_name(algorithm: str) -> str:
    """A compact label for heatmap cells, its descriptor's (rd, tree, mpi:ring, o:basi, ...);
    the name itself where the catalog gives none."""
    spec = ALGORITHMS.get(algorithm)  # a family's member too
    return (spec.short or algorithm) if spec is not None else algorithm


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


MAX_TICKS = 9


TICK_STEPS = (
    (1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.7, 2, 3, 5, 7, 8, 9),
    (1, 1.5, 2, 3, 5, 7),
    (1, 2, 5),
    (1,),
)


def ratio_ticks(lo: float, hi: float) -> list[float]:
    """Round ratios covering [lo, hi], 1x always among them: the finest steps that give at
    most MAX_TICKS, so the ticks follow the data whatever its range."""
    span = max(abs(math.log10(lo)), abs(math.log10(hi)), 0.05) * 1.15
    ticks: list[float] = [1.0]
    for steps in TICK_STEPS:
        decades = range(math.floor(-span) - 1, math.ceil(span) + 1)
        values = {m * 10.0**k for k in decades for m in steps}
        ticks = sorted({float(f"{v:.3g}") for v in values if abs(math.log10(v)) <= span})
        if len(ticks) <= MAX_TICKS:
            return ticks
    return ticks


def _ratio_axis(fig: go.Figure, values: pd.Series, title: str) -> None:
    """A log y axis for ratios around 1, ticked at round ratios derived from the data."""
    lo, hi = float(values.min()), float(values.max())
    span = max(abs(math.log10(lo)), abs(math.log10(hi)), 0.05) * 1.15
    ticks = ratio_ticks(lo, hi)
    fig.update_yaxes(
        type="log",
        range=[-span, span],
        tickvals=ticks,
        ticktext=[f"{t:g}x" for t in ticks],
        title_text=title,
    )
