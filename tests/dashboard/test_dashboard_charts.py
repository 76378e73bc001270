"""The dashboard's figures (dashboard/charts.py) and badges, built from a real store's frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import synthetic

from dashboard import badges, charts, queries
from runners import store
from runners.domain.units import format_bytes, format_seconds

RUN_A, RUN_B = (spec.run_id for spec in synthetic.demo_specs())
CAL = synthetic.calibration_id("synth-node")
# The labels the figures must show for the demo runs' algorithms, written out here: expected
# values that charts.short_name does not compute.
SHORT = {
    "recursive_doubling": "rd",
    "binomial_tree": "tree",
    "rabenseifner": "rab",
    "ring": "ring",
    "mpi": "mpi",
    "mpi:recursive_doubling": "mpi:rd",
    "mpi:ring": "mpi:ring",
}


def _view(demo_store: Path, ranks: int = 4, algorithms: tuple[str, ...] | None = None):
    """Curves data of run A at ``ranks``, float32 sum, with the ping-pong predictions."""
    return queries.curves_data(
        demo_store, queries.Scope(RUN_A, ranks, "float32", "sum", algorithms, CAL)
    )


def _traces(fig, role: str, **match) -> list:
    """The figure's traces with meta role ``role`` (and the other meta keys given)."""
    return [
        t
        for t in fig.data
        if (t.meta or {}).get("role") == role
        and all((t.meta or {}).get(k) == v for k, v in match.items())
    ]


# --- helpers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (8, "8 B"),
        (1000, "1000 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (4700, "4.59 KiB"),
        (65536, "64 KiB"),
        (2097152, "2 MiB"),
        (2**40, "1 TiB"),
    ],
)
def test_format_bytes(nbytes: int, text: str) -> None:
    """Binary units, whole numbers exact, others three significant digits, never an exponent."""
    assert format_bytes(nbytes) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(2.337e-6, "2.34 us"), (8.5e-7, "850 ns"), (1.5e-3, "1.5 ms"), (12.0, "12 s"), (0, "0 s")],
)
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


def test_colours_are_stable_and_far_apart() -> None:
    """Known names have fixed colours, every two of them far apart (in particular X and mpi:X,
    which once were two shades of one hue); unknown names a stable fallback."""
    import itertools
    import re

    def rgb(hex_color: str) -> tuple[int, ...]:
        return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))

    from runners.domain.algorithms.allreduce.hierarchical import FAMILY, LEADERS
    from runners.domain.libraries.catalog import ALGORITHMS

    members = [FAMILY.member_name(FAMILY.values({"leaders": a}, {"ranks_per_node": 2}))
               for a in LEADERS]  # fmt: skip
    known = {name: charts.color(name) for name in (*ALGORITHMS, *members)}
    assert all(re.fullmatch("#[0-9a-f]{6}", charts.color(name)) for name in known)
    for a, b in itertools.combinations(known, 2):
        if ALGORITHMS[a].collective != ALGORITHMS[b].collective:
            continue  # never drawn together
        distance = sum((x - y) ** 2 for x, y in zip(rgb(known[a]), rgb(known[b]), strict=True))
        assert distance**0.5 >= 70, (a, b)
    for name in ("recursive_doubling", "ring"):
        assert charts.color(name) != charts.color(f"mpi:{name}")
    assert not set(charts.FALLBACK_COLORS) & set(known.values())
    assert charts.color("ring") == "#d62728" and charts.color("mpi:ring") == "#bcbd22"
    # a fallback from the name's CRC-32: the same in every process (hash() would not be)
    assert (charts.color("mpi:weird"), charts.color("x")) == ("#c49c94", "#f7b6d2")
    assert charts.color("mpi:weird") in charts.FALLBACK_COLORS
    assert charts.short_name("mpi:recursive_doubling") == "mpi:rd"
    # the descriptor's label first, whatever the name holds: not openmpi:basic_linear
    assert charts.short_name("openmpi:basic_linear") == "o:basi"
    assert charts.short_name("reduce_scatter.mpi:tuned") == "tuned"
    assert charts.short_name("mpi:weird") == "mpi:weird"  # a name the catalog lacks: itself
    assert charts.short_name("hierarchical(node=4,leaders=ring)") == "h4/ring"  # a member
    assert charts.rgba("#ff0000", 0.5) == "rgba(255,0,0,0.5)"


def test_metric_values_convert_time_to_bandwidths() -> None:
    """time in microseconds; algbw = bytes / t / 1e9, its band flipped; busbw x 2(p-1)/p."""
    points = pd.DataFrame(
        {
            "ranks": [4],
            "bytes": [1_000_000],
            "median_s": [1e-3],
            "p5_s": [0.5e-3],
            "p95_s": [2e-3],
            "predicted_s": [0.8e-3],
        }
    )
    time = charts.metric_values(points, "time").iloc[0]
    assert (time.y, time.y_low, time.y_high, time.y_pred) == pytest.approx((1e3, 500, 2e3, 800))
    alg = charts.metric_values(points, "algbw").iloc[0]
    assert (alg.y, alg.y_low, alg.y_high, alg.y_pred) == pytest.approx((1.0, 0.5, 2.0, 1.25))
    bus = charts.metric_values(points, "busbw").iloc[0]
    assert bus.y == pytest.approx(1.5) and bus.y_high == pytest.approx(3.0)
    factors = {"ring": 1.5, "allgather.ring": 0.75, "bcast.binomial_tree": 1.0}
    for algorithm, factor in factors.items():  # nccl-tests' factor of each collective
        bus = charts.metric_values(points.assign(algorithm=algorithm), "busbw").iloc[0]
        assert bus.y == pytest.approx(factor)
    with pytest.raises(ValueError, match="unknown metric"):
        charts.metric_values(points, "flops")


def test_relative_values_are_each_median_over_the_fastest_at_its_size() -> None:
    points = pd.DataFrame(
        {
            "ranks": [2, 2, 2, 2],
            "bytes": [8, 8, 64, 64],
            "algorithm": ["a", "b", "a", "b"],
            "median_s": [2e-6, 3e-6, 5e-6, 4e-6],
            "p5_s": [1e-6] * 4,
            "p95_s": [9e-6] * 4,
            "interval_low_s": [1.8e-6, 2.7e-6, 4.5e-6, 3.6e-6],
            "interval_high_s": [2.2e-6, 3.3e-6, 5.5e-6, 4.4e-6],
            "predicted_s": [1e-6] * 4,
        }
    )
    rel = charts.metric_values(points, "relative")
    assert rel["y"].tolist() == pytest.approx([1.0, 1.5, 1.25, 1.0])
    assert rel["y_int_low"].tolist() == pytest.approx([0.9, 1.35, 1.125, 0.9])
    assert rel["y_int_high"].tolist() == pytest.approx([1.1, 1.65, 1.375, 1.1])
    assert rel[["y_low", "y_high", "y_pred"]].isna().all().all()


# --- curves ------------------------------------------------------------------------------------


def test_curves_have_band_median_and_dashed_prediction_per_algorithm(demo_store: Path) -> None:
    """Per algorithm: a band, a solid median and a thin dash-dot prediction of the same colour
    (for the autotuned 'mpi', the lower bound, and labelled so). Both axes are logarithmic."""
    data = _view(demo_store)
    fig = charts.curves_figure(data.points, data.crossovers, "time", bands=True)
    algorithms = sorted(data.points["algorithm"].unique())
    assert [t.meta["algorithm"] for t in _traces(fig, "measured")] == algorithms
    assert len(_traces(fig, "band")) == len(algorithms)
    assert not _traces(charts.curves_figure(data.points, data.crossovers, "time"), "band")
    predicted = {t.meta["algorithm"]: t for t in _traces(fig, "predicted")}
    assert set(predicted) == set(algorithms)
    for measured in _traces(fig, "measured"):
        alg = measured.meta["algorithm"]
        assert measured.line.dash == "solid"  # MPICH's
        assert predicted[alg].line.dash == "longdashdot"
        assert predicted[alg].line.color == measured.line.color == charts.color(alg)
    assert predicted["mpi"].name == "mpi (model: library_min)"
    ring = data.points[(data.points["algorithm"] == "ring")].sort_values("bytes")
    np.testing.assert_allclose(predicted["ring"].y, ring["predicted_s"] * 1e6)
    np.testing.assert_allclose(
        _traces(fig, "measured", algorithm="ring")[0].y, ring["median_s"] * 1e6
    )
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.tickformat == "~g"  # plain numbers, no SI prefixes on GB/s
    assert predicted["mpi:ring"].name == "mpi:ring (model: ring)"
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend[: len(algorithms)] == algorithms  # one entry per algorithm, below the plot
    rest = legend[len(algorithms) :]  # then the crossovers, and intervals cut at the axis
    assert all("crossover" in name or name == "interval runs past the axis" for name in rest)
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0
    assert not fig.layout.legend.title.text  # one library: nothing to say about line styles


LIBRARY_FAMILIES = {  # algorithm: (its library's line style, the family whose colour it takes)
    "ring": ("solid", "ring"),
    "ring@openmpi": ("dash", "ring"),
    "ring@impi": ("dot", "ring"),
    "mpi:ring": ("solid", "mpi:ring"),
    "openmpi:ring": ("dash", "mpi:ring"),
    "impi:ring": ("dot", "mpi:ring"),
    "mpi": ("solid", "mpi"),
    "openmpi": ("dash", "mpi"),
    "openmpi:segmented_ring": ("dash", "openmpi:segmented_ring"),  # stands for no MPICH one
}


@pytest.fixture(scope="module")
def three_libraries(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An analysed run at p=2 of MPICH's, Open MPI's and Intel MPI's algorithms."""
    path = tmp_path_factory.mktemp("libraries") / "libraries.duckdb"
    spec = synthetic.RunSpec(
        run_id="r20261204-120000-libs",
        ranks=(2,),
        algorithms=tuple(LIBRARY_FAMILIES),
        timeout_point=False,
    )
    synthetic.build_store(path, [spec])
    return path


@pytest.mark.parametrize("metric", ["time", "relative"])
def test_curves_tell_libraries_by_dash_and_families_by_hue(
    three_libraries: Path, metric: str
) -> None:
    """With three libraries in one figure, an algorithm keeps its family's hue on every library
    (ring, ring@openmpi, ring@impi alike) and each library draws in its own line style, solid
    MPICH, dash Open MPI, dot Intel MPI, which the legend's title says; predictions keep a
    style of their own."""
    scope = queries.Scope("r20261204-120000-libs", 2, "float32", "sum", calibration_id=CAL)
    data = queries.curves_data(three_libraries, scope)
    fig = charts.curves_figure(data.points, data.crossovers, metric)
    measured = {t.meta["algorithm"]: t for t in _traces(fig, "measured")}
    assert set(measured) == set(LIBRARY_FAMILIES)
    for alg, (dash, family) in LIBRARY_FAMILIES.items():
        assert measured[alg].line.dash == dash, alg
        assert measured[alg].line.color == charts.color(family), alg
        assert measured[alg].marker.color == measured[alg].error_y.color == charts.color(family)
    hues = {t.line.color for t in measured.values()}
    assert len(hues) == len(set(family for _, family in LIBRARY_FAMILIES.values()))
    assert fig.layout.legend.title.text == (
        "Line style = library: solid MPICH, dashed Open MPI, dotted Intel MPI; colour = algorithm"
    )
    predicted = _traces(fig, "predicted")
    assert metric == "relative" or predicted
    assert all(t.line.dash == "longdashdot" for t in predicted)
    for band in _traces(fig, "band"):
        family = LIBRARY_FAMILIES[band.meta["algorithm"]][1]
        assert band.fillcolor == charts.rgba(charts.color(family), 0.15)


def test_a_figure_of_one_other_library_still_says_what_its_dashes_mean() -> None:
    from dashboard.figures.style import dash_legend

    assert dash_legend(["openmpi", "openmpi:ring"]) == (
        "Line style = library: dashed Open MPI; colour = algorithm"
    )
    assert dash_legend(["ring", "mpi", "nccl-tests-thing"]) == ""


def test_band_spans_p5_to_p95(demo_store: Path) -> None:
    """The band goes out along p95 and back along p5 (cut at the axis' ends)."""
    data = _view(demo_store, algorithms=("ring",))
    fig = charts.curves_figure(data.points, data.crossovers, "time", bands=True)
    band = _traces(fig, "band")[0]
    low, high = (10**end for end in fig.layout.yaxis.range)
    ring = data.points.sort_values("bytes")
    n = len(ring)
    np.testing.assert_allclose(band.y[:n], (ring["p95_s"] * 1e6).clip(low, high))
    np.testing.assert_allclose(band.y[n:], (ring["p5_s"][::-1] * 1e6).clip(low, high))
    assert band.fill == "toself"


def test_each_median_carries_its_interval_over_launches(demo_store: Path) -> None:
    """Error bars reach the stored interval_low_s .. interval_high_s (cut at the axis' ends,
    which the medians set); in bandwidth they flip."""
    data = _view(demo_store, algorithms=("ring",))
    ring = data.points.sort_values("bytes")
    assert (ring["launches"] == 3).all()
    fig = charts.curves_figure(data.points, data.crossovers, "time")
    low, high = (10**end for end in fig.layout.yaxis.range)
    time = _traces(fig, "measured")[0]
    np.testing.assert_allclose(
        np.asarray(time.y) + np.asarray(time.error_y.array),
        (ring["interval_high_s"] * 1e6).clip(low, high),
    )
    np.testing.assert_allclose(
        np.asarray(time.y) - np.asarray(time.error_y.arrayminus),
        (ring["interval_low_s"] * 1e6).clip(low, high),
    )
    fig = charts.curves_figure(data.points, data.crossovers, "algbw")
    low, high = (10**end for end in fig.layout.yaxis.range)
    algbw = _traces(fig, "measured")[0]
    top = (ring["bytes"] / ring["interval_low_s"] / 1e9).clip(low, high)
    np.testing.assert_allclose(np.asarray(algbw.y) + np.asarray(algbw.error_y.array), top)
    assert "over 3 launches" in time.hovertext[0]


def test_crossover_markers_sit_at_the_stored_bytes(demo_store: Path) -> None:
    """Measured and predicted crossovers: x = stored bytes, error bars to low/high, labels."""
    data = _view(demo_store)
    fig = charts.curves_figure(data.points, data.crossovers, "busbw")
    stored = store.query(
        demo_store,
        "SELECT kind, bytes, coalesce(low_bytes, bytes) AS low_bytes, "
        "coalesce(high_bytes, bytes) AS high_bytes, algorithm_a, algorithm_b FROM crossovers "
        "WHERE run_id = ? AND ranks = 4 AND (kind = 'measured' OR calibration_id = ?) "
        "ORDER BY bytes",
        [RUN_A, CAL],
    )
    for kind in ("measured", "predicted"):
        (trace,) = _traces(fig, "crossover", kind=kind)
        rows = stored[stored["kind"] == kind].sort_values("bytes")
        order = np.argsort(trace.x)
        np.testing.assert_allclose(np.array(trace.x)[order], rows["bytes"])
        np.testing.assert_allclose(
            np.array(trace.x)[order] + np.array(trace.error_x.array)[order], rows["high_bytes"]
        )
        np.testing.assert_allclose(
            np.array(trace.x)[order] - np.array(trace.error_x.arrayminus)[order], rows["low_bytes"]
        )
        labels = {
            f"{SHORT[a]}→{SHORT[b]}"
            for a, b in zip(rows["algorithm_a"], rows["algorithm_b"], strict=True)
        }
        assert set(trace.text) == labels
        assert all(np.isfinite(trace.y)) and all(y > 0 for y in trace.y)
    assert _traces(fig, "crossover", kind="measured")[0].marker.symbol == "diamond"
    assert _traces(fig, "crossover", kind="predicted")[0].marker.symbol == "diamond-open"


def test_measured_crossover_lies_on_the_faster_curve(demo_store: Path) -> None:
    """A crossover's y is algorithm_a's measured curve, interpolated on log-log axes."""
    data = _view(demo_store)
    fig = charts.curves_figure(data.points, data.crossovers, "time")
    (trace,) = _traces(fig, "crossover", kind="measured")
    row = data.crossovers[data.crossovers["kind"] == "measured"].iloc[0]
    curve = data.points[data.points["algorithm"] == row["algorithm_a"]].sort_values("bytes")
    expected = np.exp(
        np.interp(np.log(row["bytes"]), np.log(curve["bytes"]), np.log(curve["median_s"] * 1e6))
    )
    assert trace.y[list(trace.x).index(row["bytes"])] == pytest.approx(expected)


def test_points_breaking_assumptions_are_drawn_as_crosses(demo_store: Path) -> None:
    """At p=3 (oversubscribed) every marker is a cross whose hover names the broken check (the
    page's warning says why, once, above the chart); at p=2 none is (the autotuned 'mpi' is
    predicted as a bound: which algorithm it ran is unknown, not a broken assumption)."""
    data = _view(demo_store, ranks=3)
    fig = charts.curves_figure(data.points, data.crossovers, "time")
    for trace in _traces(fig, "measured"):
        assert set(trace.marker.symbol) == {"x-thin-open"}
        assert all("violated: " in h and "not_oversubscribed" in h for h in trace.hovertext)
    assert not fig.layout.annotations
    at2 = _view(demo_store, ranks=2)
    fig2 = charts.curves_figure(at2.points, at2.crossovers, "time")
    symbols = {t.meta["algorithm"]: set(t.marker.symbol) for t in _traces(fig2, "measured")}
    assert symbols["mpi"] == symbols["recursive_doubling"] == {"circle"}
    assert not fig2.layout.annotations


def test_curves_without_ok_points_say_so() -> None:
    """A view whose points all failed draws a message, not an empty plot."""
    failed = pd.DataFrame({"status": ["timeout"], "median_s": [None], "algorithm": ["ring"]})
    fig = charts.curves_figure(failed, pd.DataFrame(), "time")
    assert not fig.data and "No successfully measured" in fig.layout.annotations[0].text


# --- other figures -----------------------------------------------------------------------------


def test_best_heatmaps_show_the_winners_ties_and_mark_disagreement(demo_store: Path) -> None:
    """Each measured cell names the stored winner, or says 'tie' in grey (hover: which two);
    a predicted cell
    carries ✗ only where it differs from a decided winner the model could name."""
    scope = queries.Scope(RUN_A, dtype="float32", op="sum", calibration_id=CAL)
    data = queries.crossover_data(demo_store, scope)
    fig = charts.best_heatmaps(data.measured_best, data.predicted_best)
    (measured,) = _traces(fig, "best", kind="measured")
    (predicted,) = _traces(fig, "best", kind="predicted")
    sizes = sorted(data.measured_best["bytes"].unique())
    assert list(measured.x) == [format_bytes(s) for s in sizes]
    assert list(measured.y) == ["p=2", "p=3", "p=4", "p=8"]
    cells = data.measured_best.set_index(["ranks", "bytes"])
    pick = data.predicted_best.set_index(["ranks", "bytes"])["algorithm"]
    ties = len(measured.colorscale) // 2 - 1  # the last band of the scale is the ties'
    for i, ranks in enumerate((2, 3, 4, 8)):
        for j, size in enumerate(sizes):
            cell = cells.loc[(ranks, size)]
            if cell["decided"]:
                assert measured.text[i][j] == SHORT[cell["algorithm"]]
                assert int(measured.z[i][j]) != ties
            else:
                tie = f"tie {cell['algorithm']} ~ {cell['runner_up']}"
                assert measured.text[i][j] == "tie" and int(measured.z[i][j]) == ties
                assert measured.customdata[i][j] == tie
            judged = cell["decided"] and cell["algorithm"] != "mpi"
            mark = " ✗" if judged and pick[(ranks, size)] != cell["algorithm"] else ""
            assert predicted.text[i][j] == SHORT[pick[(ranks, size)]] + mark
    legend = {t.meta["algorithm"] for t in _traces(fig, "legend")}
    assert legend == set(cells["algorithm"]) | set(pick)


def test_override_figure_one_line_per_ranks(demo_store: Path) -> None:
    """The speed-up line of each ranks is the stored paired mpi / forced ratio, a line at 1."""
    scope = queries.Scope(RUN_A, dtype="float32", op="sum")
    impact = queries.override_impact(demo_store, scope, "mpi:ring")
    fig = charts.override_figure(impact, "mpi:ring")
    lines = _traces(fig, "speedup")
    assert [t.meta["ranks"] for t in lines] == [2, 3, 4, 8]
    at4 = impact[impact["ranks"] == 4]
    np.testing.assert_allclose(lines[2].y, at4["speedup"])
    np.testing.assert_allclose(at4["speedup"], at4["baseline_s"] / at4["forced_s"], rtol=0.25)
    assert any(shape.y0 == 1 and shape.y1 == 1 for shape in fig.layout.shapes)
    assert "No sizes" in charts.override_figure(impact.iloc[0:0], "x").layout.annotations[0].text


def test_pingpong_figure_shows_medians_fit_and_segments(demo_store: Path) -> None:
    """Ping-pong medians as markers, the whole-range line and one dashed line per segment."""
    cal = queries.calibration(demo_store, CAL)
    fig = charts.pingpong_figure(cal)
    (points,) = _traces(fig, "pingpong")
    assert list(points.x) == [float(b) for b in synthetic.PINGPONG_SIZES]
    medians = cal["details"]["pingpong"]["one_way_median_s"]
    np.testing.assert_allclose(points.y, np.array(medians) * 1e6)  # microseconds
    (fit,) = _traces(fig, "fit")
    assert fit.y[0] == pytest.approx((cal["alpha_s"] + fit.x[0] * cal["beta_s_per_byte"]) * 1e6)
    segments = _traces(fig, "segment")
    assert len(segments) == len(cal["segments"]) and segments[0].line.dash == "dash"
    assert len(fig.layout.shapes) == len(cal["breakpoints"])
    empty = charts.pingpong_figure({"details": {}, "alpha_s": 1, "beta_s_per_byte": 1})
    assert "no ping-pong" in empty.layout.annotations[0].text


def test_residuals_heatmap_is_log2_of_measured_over_predicted(demo_store: Path) -> None:
    """Rows per algorithm and ranks, columns per size, z = log2(ratio), centred on 0."""
    scope = queries.Scope(RUN_A, 2, "float32", "sum", calibration_id=CAL)
    resid = queries.residuals(demo_store, scope)
    (heat,) = _traces(charts.residuals_figure(resid), "residual")
    row = list(heat.y).index("ring · p=2")
    ring = resid[resid["algorithm"] == "ring"].sort_values("bytes")
    np.testing.assert_allclose(heat.z[row], np.log2(ring["measured_over_predicted"]))
    assert heat.zmid == 0
    assert "No points" in charts.residuals_figure(resid.iloc[0:0]).layout.annotations[0].text


def test_compare_figure_plots_ratios_per_algorithm(demo_store: Path) -> None:
    """One marker trace per algorithm, y = b / a with its interval as error bars; decided
    changes filled, within noise open."""
    ratios = queries.compare_runs(demo_store, RUN_A, RUN_B).points
    fig = charts.compare_figure(ratios, RUN_A, RUN_B)
    ring = _traces(fig, "ratio", algorithm="ring")[0]
    mine = ratios[ratios["algorithm"] == "ring"]
    assert list(ring.y) == list(mine["b_over_a"])
    assert list(ring.error_y.array) == pytest.approx(list(mine["ratio_high"] - mine["b_over_a"]))
    filled = [s == "circle" for s in ring.marker.symbol]
    assert filled == list(mine["change"] != "within noise") and any(filled)


# --- badges ------------------------------------------------------------------------------------


def _summary(*rows: tuple[str, str, int]) -> pd.DataFrame:
    """A summary frame from (name, state, points) rows."""
    return pd.DataFrame(
        [
            {"name": n, "state": s, "checks": max(p, 1), "points": p, "detail": ""}
            for n, s, p in rows
        ]
    )


def test_badges_take_the_worst_state_per_assumption() -> None:
    """violated beats unknown beats holds; violated ones come first and lead the headline."""
    items = badges.badges(
        _summary(
            ("no_oversubscription", "holds", 10),
            ("no_oversubscription", "violated", 4),
            ("quiet_machine", "unknown", 0),
            ("power_of_two_ranks", "holds", 14),
        )
    )
    assert [(b.name, b.state) for b in items] == [
        ("no_oversubscription", "violated"),
        ("quiet_machine", "unknown"),
        ("power_of_two_ranks", "holds"),
    ]
    assert badges.headline(items) == (
        "Not a clean test of the model: no_oversubscription violated (4 of 14 points)"
        " · unknown: quiet_machine · 1 holds"
    )
    assert badges.violations(items) == [items[0]]
    table = badges.meaning_table(items)
    assert table["points"].tolist() == ["4 of 14 points", "whole run", "14 of 14 points"]


def test_headline_without_breaks_counts_what_holds() -> None:
    """Nothing violated: no 'not a clean test', the holding assumptions counted in words."""
    items = badges.badges(_summary(("power_of_two", "holds", 3), ("single_node", "holds", 0)))
    assert badges.headline(items) == "Assumptions: 2 assumptions hold"
    assert badges.meaning_table(items)["what a break means"].str.len().min() > 20


def test_a_view_line_names_only_what_its_own_points_break() -> None:
    """Below the run's line, a narrower view says what its points break; run-level breaks
    (said by the run's line) and states short of violated are left out."""
    items = badges.badges(
        _summary(
            ("not_oversubscribed", "violated", 49),
            ("power_of_two", "holds", 49),
            ("stable_machine", "violated", 0),
        )
    )
    assert badges.view_line(items, "p=3 float32 sum") == (
        "In this view (p=3 float32 sum): not_oversubscribed violated (49 of 49 points)"
    )
    clean = badges.badges(_summary(("power_of_two", "holds", 7), ("quiet_machine", "violated", 0)))
    assert badges.view_line(clean, "p=2 float32 sum") == ""
    assert badges.view_line(clean, "p=2 float32 sum", items) == (
        "In this view (p=2 float32 sum): no point breaks an assumption"
    )  # said where the run's points break something elsewhere


def test_no_checks_no_badges() -> None:
    """An empty summary gives no badges."""
    assert badges.badges(pd.DataFrame()) == []


def test_every_algorithm_brings_its_own_colour_from_the_catalog() -> None:
    """Colours and short labels are read from each algorithm's catalog entry, one per entry."""
    from runners.domain.libraries.catalog import ALGORITHMS, BASE_ALGORITHMS

    for collective in {spec.collective for spec in ALGORITHMS.values()}:
        mine = [name for name, spec in ALGORITHMS.items() if spec.collective == collective]
        colours = [charts.color(name) for name in mine]
        assert len(set(colours)) == len(mine) and "#7f7f7f" not in colours
    assert all(charts.short_name(name) == spec.short for name, spec in BASE_ALGORITHMS.items())
    assert all(charts.short_name(name) == (spec.short or name) for name, spec in ALGORITHMS.items())


def test_the_machine_probe_is_drawn_per_job_over_time(demo_store: Path) -> None:
    """Two panels (ping-pong, copy rate), a line per job through every launch's probes."""
    run_id = store.query(demo_store, "SELECT min(run_id) AS r FROM runs").r.item()
    probes = queries.machine_probes(demo_store, run_id)
    assert (
        len(probes) == 2 * 3 * probes.job.nunique() and probes.measured_at.is_monotonic_increasing
    )
    fig = charts.probes_figure(probes)
    traces = _traces(fig, "probe")
    assert len(traces) == 2 * probes.job.nunique()
    ping = [t for t in traces if t.meta["measure"] == "pingpong_us"]
    mine = probes[probes.job == ping[0].meta["job"]]
    np.testing.assert_allclose(ping[0].y, mine.pingpong_us)


@pytest.mark.parametrize(
    ("lo", "hi"), [(0.9, 1.41), (0.05, 405.0), (0.8, 1.2), (1.0, 20.0), (0.97, 1.03), (0.3, 1.0)]
)
def test_ratio_ticks_follow_the_data(lo: float, hi: float) -> None:
    """Round ticks, 1x among them, at most 9, and no data beyond the outermost tick by more
    than one tick step (once, ticks were fixed at 0.05x-20x and 0.9x-1.25x)."""
    ticks = charts.ratio_ticks(lo, hi)
    assert 1.0 in ticks and 3 <= len(ticks) <= 9 and ticks == sorted(ticks)
    assert hi <= ticks[-1] * (ticks[-1] / ticks[-2]) * 1.001
    assert lo >= ticks[0] / (ticks[1] / ticks[0]) * 0.999


def test_crossover_labels_near_each_other_take_turns_sideways() -> None:
    """Crossovers closer than about a third of a decade get labels to the right and left in
    turn; a lone one stays centred."""
    from dashboard.figures.curves import label_positions

    got = label_positions([1000.0, 1200.0, 1e5, 1100.0, 5e6], "top")
    assert got == ["top center", "top left", "top center", "top right", "top center"]
    assert label_positions([64.0], "bottom") == ["bottom center"]


def test_tables_are_shown_in_human_units() -> None:
    """Seconds columns in microseconds and per-byte costs in ns/B (renamed), byte counts whole,
    no None in text columns."""
    from dashboard.ui import human_units

    frame = pd.DataFrame(
        {
            "algorithm": ["ring", None],
            "median_s": [2.5e-6, 1e-3],
            "bytes": [78.14, 4096.0],
            "ranks": [2, 4],
            "beta_s_per_byte": [4.9e-10, 1e-9],
        }
    )
    shown = human_units(frame)
    assert list(shown.columns) == ["algorithm", "median (us)", "bytes", "ranks", "beta (ns/B)"]
    assert shown["beta (ns/B)"].tolist() == pytest.approx([0.49, 1.0])
    assert shown["median (us)"].tolist() == pytest.approx([2.5, 1000.0])
    assert shown["bytes"].tolist() == [78, 4096] and shown["algorithm"].tolist() == ["ring", ""]
    assert frame["median_s"].iloc[0] == 2.5e-6  # the caller's frame is left alone


def test_one_wide_interval_cannot_flatten_the_medians(demo_store: Path) -> None:
    """A single interval 1000x its median leaves the axis where the medians put it: the bar is
    cut at the top and a triangle marks it (the 1200x axis of #45)."""
    data = _view(demo_store, algorithms=("ring", "rabenseifner"))
    calm = charts.curves_figure(data.points, data.crossovers, "relative")
    wide = data.points.copy()
    row = wide.index[0]
    wide.loc[row, "interval_high_s"] = wide.loc[row, "median_s"] * 1000
    fig = charts.curves_figure(wide, data.crossovers, "relative")
    assert fig.layout.yaxis.range == calm.layout.yaxis.range
    assert fig.layout.yaxis.type == "log"
    (cut,) = _traces(fig, "cut")
    before = {x for t in _traces(calm, "cut") for x in t.x}
    assert set(cut.x) == before | {float(wide.loc[row, "bytes"])}
    assert list(cut.y) == pytest.approx([10 ** fig.layout.yaxis.range[1]] * len(cut.y))


def test_a_prediction_orders_of_magnitude_off_leaves_the_axis_to_the_measurements(
    demo_store: Path,
) -> None:
    """An imported run priced on a foreign calibration can predict 1e-12 s: the time axis
    stays within a factor of the medians (the 1e-6 us axis of an IMB import in #45)."""
    data = _view(demo_store, algorithms=("ring", "rabenseifner"))
    calm = charts.curves_figure(data.points, data.crossovers, "time")
    off = data.points.copy()
    off["predicted_s"] = off["predicted_s"] * 1e-6
    fig = charts.curves_figure(off, data.crossovers, "time")
    medians_us = data.points["median_s"] * 1e6
    low, high = (10**end for end in fig.layout.yaxis.range)
    assert low >= medians_us.min() / 10 and high <= medians_us.max() * 10
    assert fig.layout.yaxis.range[0] >= calm.layout.yaxis.range[0] - 1e-9
