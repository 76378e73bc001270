"""The dashboard app under Streamlit's AppTest: every page, the URL state, the SQL box's
refusals and the messages for empty, missing, corrupt and newer stores; plus dashboard.serve.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT, damage_runs_block
from helpers import synthetic
from streamlit.testing.v1 import AppTest

from dashboard import queries, serve
from dashboard.figures.style import short_name
from runners import store
from runners.domain.units import format_bytes, format_seconds

APP = ROOT / "dashboard" / "app.py"
RUN_A, RUN_B = (spec.run_id for spec in synthetic.demo_specs())
CAL = synthetic.calibration_id("synth-node")


@pytest.fixture
def demo(demo_store: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo store, given to the app as $COLLSWEEP_STORE (how serve passes it too)."""
    monkeypatch.setenv(store.STORE_ENV, str(demo_store))
    return demo_store


def open_app(page: str | None = None, **params: str | list[str]) -> AppTest:
    """The app after one run with these query parameters, switched to ``page`` if given."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(params)
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def charts(at: AppTest) -> list[dict]:
    """The Plotly figures on the page, as their JSON specs."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def roles(figure: dict) -> list[str]:
    """The meta roles of a figure's traces."""
    return [(trace.get("meta") or {}).get("role") for trace in figure["data"]]


def keys(at: AppTest) -> set[str]:
    """Keys of the widgets on the page."""
    widgets = ("selectbox", "multiselect", "radio", "toggle", "number_input", "text_area")
    return {w.key for kind in widgets for w in getattr(at, kind)}


def assert_clean(at: AppTest) -> None:
    """No exception and no error on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


# --- every page --------------------------------------------------------------------------------


PAGES = {  # page script: (charts, widget keys that must exist, other elements)
    "views/verdict.py": (1, {"run"}, "markdown"),
    "views/runs.py": (
        0,
        {"host", "lib", "status", "with_ranks", "with_dtypes", "sel"},
        "dataframe",
    ),
    "views/curves.py": (1, {"run", "ranks", "dtype", "op", "metric", "alg", "passes"}, "expander"),
    "views/crossovers.py": (1, {"run", "dtype", "op", "cal", "all_pairs"}, "metric"),
    "views/assumptions.py": (0, {"run", "state", "name"}, "dataframe"),
    "views/override.py": (1, {"run", "forced", "dtype", "op"}, "dataframe"),
    "views/model_fit.py": (2, {"kal", "run", "cal", "dtype", "op", "ranks"}, "metric"),
    "views/compare.py": (1, {"a", "b", "flagged"}, "metric"),
    "views/sql.py": (0, {"ex", "sql", "ref_table"}, "info"),
    "lab/page.py": (1, set(), "info"),
    "views/workload.py": (0, set(), "info"),  # the demo store holds no workload report
    "views/scale.py": (0, set(), "info"),  # nor a simulated run (test_dashboard_scale.py)
    "views/placements.py": (0, {"runs"}, "info"),  # nor a sweep of several placements
    "views/parameters.py": (0, {"run"}, "info"),  # nor an algorithm at several radixes
}


@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_renders_its_charts_and_widgets(demo: Path, page: str) -> None:
    """Each page of the navigation runs cleanly with its charts, widgets and content."""
    at = open_app(page, run=RUN_A, ranks="3")
    n_charts, widget_keys, element = PAGES[page]
    assert_clean(at)
    assert len(at.get("plotly_chart")) == n_charts
    assert widget_keys <= keys(at)
    assert len(at.get(element)) > 0


def test_the_verdict_is_the_front_page_and_its_strip_is_the_verdicts_rows(demo: Path) -> None:
    """The app opens on the newest run's verdict: a sentence per group and a strip whose cells
    are the stored winners (decided winner, or 'tie'), with the run's precision."""
    at = open_app()
    assert_clean(at)
    assert at.title[0].value == "Verdict"
    assert at.selectbox(key="run").value == RUN_B  # the newest run
    (figure,) = charts(at)
    strip = next(t for t in figure["data"] if t.get("meta") == {"role": "strip"})
    winners = store.query(
        demo,
        "SELECT ranks, bytes, winner, runner_up, decided FROM winners WHERE run_id = ? "
        "AND library = 'all' AND dtype = 'float32' AND op = 'sum' ORDER BY ranks, bytes",
        [RUN_B],
    )
    rows = {f"p={r} float32 sum": i for i, r in enumerate(sorted(set(winners["ranks"])))}
    columns = {size: j for j, size in enumerate(strip["x"])}
    for w in winners.itertuples(index=False):
        i, j = rows[f"p={w.ranks} float32 sum"], columns[format_bytes(w.bytes)]
        said = strip["customdata"][i][j]
        if w.decided:
            assert strip["text"][i][j].startswith(short_name(w.winner)), said
            assert said.startswith(f"{w.winner} (")
        else:
            assert strip["text"][i][j] == "tie" and said.startswith(f"tie {w.winner} ~ ")
    sentences = [m.value for m in at.markdown if m.value.startswith("**p=2 float32 sum**")]
    assert sentences and "the default" in sentences[0].split(". ")[-1].lower()
    assert any(c.value.startswith("Precision: ") for c in at.caption)


def test_the_runs_page_lists_the_runs(demo: Path) -> None:
    """The Runs page lists both runs, newest first, with their provenance columns."""
    at = open_app("views/runs.py")
    assert_clean(at)
    assert at.title[0].value == "Runs"
    table = at.dataframe[0].value
    assert table["run_id"].tolist() == [RUN_B, RUN_A]
    assert {"host", "library", "started_at", "ranks", "dtypes", "status"} <= set(table.columns)
    assert "2 runs" in at.caption[0].value


def test_runs_page_filters_and_selections(demo: Path) -> None:
    """Search narrows the table; one selected run shows its provenance and links, two their
    differences and a link to Compare runs."""
    at = open_app("views/runs.py")
    at.text_input(key="search").input("bbbb").run()
    assert at.dataframe[0].value["run_id"].tolist() == [RUN_B]
    assert at.query_params["search"] == "bbbb"
    at.text_input(key="search").input("").run()
    at.multiselect(key="sel").set_value([RUN_A]).run()
    assert_clean(at)
    links = at.get("page_link")
    assert {link.proto.page for link in links} == {
        "curves",
        "crossovers",
        "assumptions",
        "model-fit",
    }
    assert all(link.proto.query_string == f"run={RUN_A}" for link in links)
    assert any("ranks = [2, 3, 4, 8]" in c.value for c in at.code)
    span = [i.value for i in at.info if "launch-to-launch variation over" in i.value]
    assert span and "no earlier run on synth-node" in span[0]
    at.multiselect(key="sel").set_value([RUN_B, RUN_A]).run()
    diff = at.dataframe[-1].value.set_index("field")
    assert diff.loc["mpi_version", RUN_B] == "MPICH 5.0.3"
    (link,) = at.get("page_link")
    assert link.proto.page == "compare" and link.proto.query_string == f"a={RUN_A}&b={RUN_B}"


# --- curves and the URL ------------------------------------------------------------------------


def test_curves_query_param_round_trip(demo: Path) -> None:
    """The URL sets the view; changing a widget rewrites the URL; the URL reopens the view."""
    at = open_app(
        "views/curves.py", run=RUN_A, ranks="8", metric="busbw", alg=["ring", "rabenseifner"]
    )
    assert_clean(at)
    assert at.selectbox(key="run").value == RUN_A
    assert at.selectbox(key="ranks").value == 8
    assert at.radio(key="metric").value == "busbw"
    assert sorted(at.multiselect(key="alg").value) == ["rabenseifner", "ring"]
    (figure,) = charts(at)
    measured = [t["meta"]["algorithm"] for t in figure["data"] if t["meta"]["role"] == "measured"]
    assert measured == ["rabenseifner", "ring"]
    assert "Bus bandwidth" in figure["layout"]["yaxis"]["title"]["text"]
    at.radio(key="metric").set_value("algbw").run()
    at.selectbox(key="ranks").set_value(4).run()
    assert at.query_params["metric"] == "algbw" and at.query_params["ranks"] == "4"
    assert at.query_params["run"] == RUN_A and at.query_params["dtype"] == "float32"
    shared = dict(at.query_params)
    again = open_app("views/curves.py", **shared)
    assert again.radio(key="metric").value == "algbw"
    assert again.selectbox(key="ranks").value == 4
    assert sorted(again.multiselect(key="alg").value) == ["rabenseifner", "ring"]
    at.multiselect(key="alg").set_value(at.multiselect(key="alg").options).run()
    assert "alg" not in at.query_params  # all algorithms: the default, left out of the URL


def test_curves_ignore_invalid_url_values(demo: Path) -> None:
    """Unknown run, ranks or metric in the URL fall back to defaults, never an exception."""
    at = open_app("views/curves.py", run="nope", ranks="99", metric="flops", alg="bogus")
    assert_clean(at)
    assert at.selectbox(key="run").value == RUN_B
    assert at.selectbox(key="ranks").value == 2
    assert at.radio(key="metric").value == "relative"
    assert len(at.multiselect(key="alg").value) == len(synthetic.ALGORITHMS)


def banner(at: AppTest, runs: int = 1) -> str:
    """The page's assumption line (an expander's label, or on the Assumptions page a warning
    or success box): one per run it shows; the first."""
    lines = [e.label for e in at.expander if e.label.startswith(("Assumptions", "Not a"))]
    lines += [b.value for b in (*at.warning, *at.success) if "(over the whole run" in b.value]
    assert len(lines) == runs, lines
    return lines[0]


def test_curves_badges_flag_violated_assumptions(demo: Path) -> None:
    """p=3 on two cores: the run's line says it is not a clean test and names what broke (not
    again inside the chart), with what each break means behind it; below it, what this view's
    own points break. At p=2 the same run line, and nothing of the view's own."""
    at = open_app("views/curves.py", run=RUN_A, ranks="3")
    line = banner(at)
    assert line.startswith("Not a clean test of the model: ")
    assert "not_oversubscribed violated (146 of 195 points)" in line  # the whole run's
    assert line.endswith(f"(over the whole run, calibration {CAL})")
    (view,) = [c.value for c in at.caption if c.value.startswith("In this view")]
    assert view.startswith("In this view (p=3 float32 sum): ")
    assert "not_oversubscribed violated (49 of 49 points)" in view and "power_of_two" in view
    meanings = next(t.value for t in at.dataframe if "what a break means" in t.value.columns)
    broken = meanings[meanings["state"] == "violated"]
    assert set(broken["assumption"]) >= {"not_oversubscribed", "power_of_two"}
    assert broken["what a break means"].str.len().min() > 20
    (figure,) = charts(at)
    assert not figure["layout"].get("annotations")
    at2 = open_app("views/curves.py", run=RUN_A, ranks="2")
    assert banner(at2) == line
    said = [c.value for c in at2.caption if c.value.startswith("In this view")]
    assert said == ["In this view (p=2 float32 sum): no point breaks an assumption"]


ASSUMPTION_PAGES = {  # page: its query parameters for run A
    "views/verdict.py": {"run": RUN_A},
    "views/curves.py": {"run": RUN_A, "ranks": "4"},
    "views/crossovers.py": {"run": RUN_A},
    "views/assumptions.py": {"run": RUN_A},
    "views/override.py": {"run": RUN_A, "forced": "mpi:ring"},
    "views/model_fit.py": {"run": RUN_A, "ranks": "2"},
    "views/compare.py": {"a": RUN_A, "b": RUN_B},  # run A's line first, then run B's
}


def test_one_run_reads_the_same_on_every_page(demo: Path) -> None:
    """The run's assumption line is one summary, stored run-level rows with the run's own
    calibration named: the same counts on Verdict, Curves, Crossovers, Assumptions, Override
    impact, Model fit and Compare (the issue saw 5, 4 and 3 holding on three of them), even
    where a page's own calibration picker chose another."""
    lines = {
        page: banner(open_app(page, **params), 1 + ("b" in params))
        for page, params in ASSUMPTION_PAGES.items()
    }
    assert len(set(lines.values())) == 1, lines
    other = open_app("views/curves.py", run=RUN_A, ranks="4", cal=f"fitted:{RUN_A}")
    assert other.selectbox(key="cal").value == f"fitted:{RUN_A}"
    assert banner(other) == lines["views/curves.py"]
    found = queries.run_assumptions(demo, RUN_A)
    assert found.calibration_id == CAL and lines["views/curves.py"].endswith(f"{found.words()})")
    stored = store.query(
        demo,
        "SELECT name, state FROM assumptions WHERE run_id = ? AND point_id IS NULL "
        "AND (calibration_id IS NULL OR calibration_id = ?)",
        [RUN_A, CAL],
    )
    holding = (stored["state"] == "holds").sum()
    assert f"· {holding} assumptions hold (over" in lines["views/curves.py"]


def test_curves_draw_predictions_and_crossovers(demo: Path) -> None:
    """A dash-dot prediction per algorithm (the lower bound for 'mpi'); all crossovers of the
    view with xo=all, fewer (only where the fastest changes) by default, none with xo=none."""
    at = open_app("views/curves.py", run=RUN_A, ranks="4", xo="all", metric="time")
    (figure,) = charts(at)
    predicted = [t for t in figure["data"] if t["meta"]["role"] == "predicted"]
    assert len(predicted) == len(synthetic.ALGORITHMS)
    assert all(t["line"]["dash"] == "longdashdot" for t in predicted)

    def marked(fig: dict) -> int:
        return sum(len(t["x"]) for t in fig["data"] if t["meta"]["role"] == "crossover")

    crossovers = [t for t in figure["data"] if t["meta"]["role"] == "crossover"]
    assert {t["meta"]["kind"] for t in crossovers} == {"measured", "predicted"}
    at.radio(key="xo").set_value("best").run()
    assert 0 < marked(charts(at)[0]) < marked(figure)
    assert at.query_params["xo"] == "best"
    at.radio(key="xo").set_value("none").run()
    assert marked(charts(at)[0]) == 0


def test_curves_open_on_each_time_over_the_fastest(demo: Path) -> None:
    """By default Curves answers "by how much": each median over the fastest at its size on a
    log axis from 1 that the medians span (an interval past it is cut and marked by a
    triangle), with its interval; no bands, predictions or crossovers there."""
    at = open_app("views/curves.py", run=RUN_A, ranks="2")
    assert at.radio(key="metric").value == "relative"
    (figure,) = charts(at)
    roles = {t["meta"]["role"] for t in figure["data"]}
    assert "measured" in roles and roles <= {"measured", "cut"}
    assert figure["layout"]["yaxis"]["type"] == "log"
    measured = [t for t in figure["data"] if t["meta"]["role"] == "measured"]
    ys = [list(t["y"]) for t in measured]
    top = 10 ** figure["layout"]["yaxis"]["range"][1]
    assert top == pytest.approx(max(max(y) for y in ys) * 1.3)  # the medians set the axis
    for trace in measured:  # every bar ends on the axis
        assert all(
            y + up <= top * (1 + 1e-9)
            for y, up in zip(trace["y"], trace["error_y"]["array"], strict=True)
        )
    assert min(min(y) for y in ys) == 1.0
    for position in range(len(ys[0])):  # one algorithm is the fastest at every size
        assert min(y[position] for y in ys if len(y) > position) == pytest.approx(1.0)


def test_per_pass_spread_comes_from_the_samples(demo: Path) -> None:
    """The drift toggle adds a table of per-pass medians; it is kept in the URL."""
    at = open_app("views/curves.py", run=RUN_A, ranks="2")
    tables = len(at.dataframe)
    at.toggle(key="passes").set_value(True).run()
    assert len(at.dataframe) == tables + 1
    spread = at.dataframe[-1].value
    assert {"pass_medians_s", "max_over_min"} <= set(spread.columns)
    assert at.query_params["passes"] == "1"


# --- the other pages ---------------------------------------------------------------------------


def test_crossovers_page_agreement_figures(demo: Path) -> None:
    """The headlines are the analysis's stored figures for the groups with a core per rank:
    exact pick, right schedule, median slowdown (oversubscribed groups apart)."""
    at = open_app("views/crossovers.py", run=RUN_A)
    assert_clean(at)
    stored = store.query(
        demo,
        "SELECT * FROM agreement WHERE run_id = ? AND calibration_id = ? AND scope = 'dedicated'",
        [RUN_A, CAL],
    ).iloc[0]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Model picks the measured best"] == f"{stored['model_pick_share']:.0%}"
    assert any(c.value == "Over groups with a core per rank." for c in at.caption)
    assert metrics["Picks the right schedule"] == f"{stored['same_model_share']:.0%}"
    assert metrics["Median slow-down of its pick"] == f"{stored['median_slowdown']:.0%}"
    assert metrics["Cells compared"] == str(int(stored["points"]))
    (figure,) = charts(at)
    assert roles(figure).count("best") == 2
    best = next(t for t in figure["data"] if t["meta"] == {"role": "best", "kind": "measured"})
    cells = [cell for row in best["text"] for cell in row if cell]
    hovers = [cell for row in best["customdata"] for cell in row if cell]
    assert any("mpi" in cell.replace("mpi:", "").split() for cell in hovers)  # mpi competes
    assert "tie" in cells and any(cell.startswith("tie ") for cell in hovers)
    shown = [line.value for line in at.markdown if "p=2 float32 sum" in line.value]
    assert shown and "tie" in shown[0]  # the verdict above says the same ties
    table = next(t.value for t in at.dataframe if "faster below" in t.value.columns)
    assert table["at"].str.match(r"^[\d.]+ (B|KiB|MiB)$").all() and len(table)
    at.toggle(key="all_pairs").set_value(True).run()
    every = next(t.value for t in at.dataframe if "faster below" in t.value.columns)
    assert len(every) >= len(table)


def test_assumptions_page_shows_an_assumption_by_ranks_matrix(demo: Path) -> None:
    """First an assumption x group-size matrix with what each break means; the point-by-point
    table behind an expander, narrowed by the state filter."""
    at = open_app("views/assumptions.py", run=RUN_A)
    checks = queries.assumptions_data(demo, RUN_A).checks
    matrix = at.dataframe[0].value.set_index("assumption")
    assert set(matrix.index) == set(checks["name"])
    assert matrix.loc["not_oversubscribed", "p=2"] == "holds"
    assert matrix.loc["not_oversubscribed", "p=3"].startswith("violated")
    assert matrix.loc["quiet_machine", "run"] in ("holds", "violated", "unknown")
    assert (matrix["what a break means"].str.len() > 20).all()
    at.multiselect(key="state").set_value(["violated"]).run()
    assert set(at.dataframe[1].value["state"]) == {"violated"}
    assert at.query_params["state"] == "violated"


def test_override_page_says_where_the_override_wins_and_loses(demo: Path) -> None:
    """The verdict sentence and per-ranks summary for the chosen forced algorithm."""
    at = open_app("views/override.py", run=RUN_A, forced="mpi:ring")
    assert_clean(at)
    assert at.selectbox(key="forced").value == "mpi:ring"
    assert at.selectbox(key="forced").options[:2] == ["mpi:recursive_doubling", "mpi:ring"]
    sentence = next(m.value for m in at.markdown if "than the autotuned" in m.value)
    impact = queries.override_impact(
        demo, queries.Scope(RUN_A, dtype="float32", op="sum"), "mpi:ring"
    )
    faster = (impact["verdict"] == "faster").sum()
    assert f"faster than the autotuned **mpi** at {faster}" in sentence
    summary = next(t.value for t in at.dataframe if "ranks" in t.value.columns)
    assert summary["ranks"].tolist() == [2, 3, 4, 8]
    (figure,) = charts(at)
    assert roles(figure).count("speedup") == 4


def test_model_fit_page_shows_parameters_fit_and_residuals(demo: Path) -> None:
    """Calibration metrics, the ping-pong fit, the fitted-vs-microbenchmark table, residuals."""
    at = open_app("views/model_fit.py", run=RUN_A)
    assert_clean(at)
    cal = queries.calibration(demo, CAL)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["alpha (latency)"] == format_seconds(cal["alpha_s"])  # the run's own
    assert at.selectbox(key="kal").value == queries.prediction_calibrations(demo, RUN_A)[0]
    # three cards of short values (four, one with the bandwidth, were cut off at 1600 px;
    # tests/dashboard/test_browser.py measures them at 1280 and 1600): the rest in the caption
    assert list(metrics) == ["alpha (latency)", "beta (per byte)", "R² (whole range)"]
    assert metrics["beta (per byte)"].endswith(" ns/B")
    assert max(len(v) for v in metrics.values()) <= 10 and max(map(len, metrics)) <= 18
    said = next(c.value for c in at.caption if "source:" in c.value)
    assert "source: `pingpong`" in said and "GB/s" in said
    pingpong, residual = charts(at)
    assert {"pingpong", "fit", "segment"} <= set(roles(pingpong))
    assert roles(residual) == ["residual"]
    tables = [t.value for t in at.dataframe]
    comparison = next(t for t in tables if "fitted_over_micro" in t.columns)
    assert comparison["parameter"].tolist()[:2] == ["alpha (us)", "beta (ns/B)"]
    assert "—" in comparison["fitted"].tolist()  # float64 gamma: only in the ping-pong
    accuracy = next(t for t in tables if "median |pred/meas - 1|" in t.columns)
    stored = queries.model_accuracy(demo, RUN_A)
    assert len(accuracy) == len(stored) > 0
    assert set(accuracy["variant"]) == set(stored["variant"]) and "textbook" in set(
        stored["variant"]
    )


def test_compare_page_shows_the_rows_collsweep_compare_prints(demo: Path) -> None:
    """Counts of decided slow-downs and speed-ups match the shared rows; the toggle keeps
    only the decided changes."""
    at = open_app("views/compare.py", a=RUN_A, b=RUN_B)
    assert_clean(at)
    found = queries.compare_runs(demo, RUN_A, RUN_B)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Matching points"] == str(len(found.points))
    assert metrics["B decidedly slower"] == str(found.summary["slower"]) != "0"
    assert metrics["Winner changes"] == str(found.summary["winner_changes"])
    assert any("decidedly slower at" in m.value for m in at.markdown)
    at.toggle(key="flagged").set_value(True).run()
    table = next(t.value for t in at.dataframe if "b_over_a" in t.value.columns)
    assert set(table["change"]) <= {"slower", "faster"} and len(table) > 0
    same = open_app("views/compare.py", a=RUN_A, b=RUN_A)
    assert "two different runs" in same.info[0].value


def test_placements_page_sets_a_sweeps_placements_side_by_side(
    demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of one sweep of placements (named ranks_per_node=N by the same command) are
    chosen by default: each size's winner on each (one host first), each drawn algorithm's
    time on each placement (a dash each), and the pairs' flips on each."""
    db, placed = synthetic.with_placed_run(demo_store, tmp_path), synthetic.placed_spec()
    for run_id, name in ((RUN_A, "ranks_per_node=0"), (placed.run_id, "ranks_per_node=1")):
        store.update_run(db, run_id, {"name": name, "command_line": "collsweep sweep s.toml"})
    monkeypatch.setenv(store.STORE_ENV, str(db))
    at = open_app("views/placements.py", group="p=2 float32 sum")
    assert_clean(at)
    assert at.multiselect(key="runs").value == [placed.run_id, RUN_A]
    table = next(t.value for t in at.dataframe if "size" in t.value.columns)
    assert list(table.columns) == ["size", "one host", "2 nodes x 1"]
    assert len(table) == len(synthetic.SIZES)
    assert (table["one host"] != table["2 nodes x 1"]).any()  # its default is 2x slower
    (figure,) = charts(at)
    drawn = {(t["meta"]["algorithm"], t["meta"]["placement"]) for t in figure["data"]}
    assert {p for _, p in drawn} == {"one host", "2 nodes x 1"}
    dashes = {t["meta"]["placement"]: t["line"]["dash"] for t in figure["data"]}
    assert dashes == {"one host": "solid", "2 nodes x 1": "dash"}
    assert any("flips" in m.value for m in at.markdown)


@pytest.mark.parametrize(
    ("members", "title", "values", "ticks"),
    [
        (("knomial", "knomial(radix=4)", "knomial(radix=8)"), "knomial by radix", [2, 4, 8],
         ["2", "4", "8"]),
        (("chain(segment=1KiB)", "chain", "chain(segment=64KiB)"), "chain by segment",
         [1024, 8192, 65536], ["1KiB", "8KiB", "64KiB"]),
    ],
)  # fmt: skip
def test_parameters_page_draws_a_parameter_as_a_curve_with_both_optima(
    demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, members: tuple[str, ...],
    title: str, values: list[int], ticks: list[str],
) -> None:  # fmt: skip
    """A run of knomial at radixes 2, 4 and 8 (or of the chain at three segment sizes): one
    size's time against the parameter, measured with its interval and predicted, the measured
    best and the model's optimum marked, a size written as members name it, and the table a
    row per value."""
    db = tmp_path / "param.duckdb"
    shutil.copy(demo_store, db)
    spec = synthetic.RunSpec(run_id="r20261205-120000-dddd", ranks=(8,), algorithms=members)
    synthetic.build_store(db, [spec])
    monkeypatch.setenv(store.STORE_ENV, str(db))
    at = open_app("views/parameters.py", run=spec.run_id)
    assert_clean(at)
    assert at.selectbox(key="curve").value == title
    (figure,) = charts(at)
    assert set(roles(figure)) == {"measured", "best", "predicted", "optimum"}
    measured = next(t for t in figure["data"] if t["meta"]["role"] == "measured")
    assert measured["x"] == values and figure["layout"]["xaxis"]["ticktext"] == ticks
    parameter = title.split(" by ")[1]
    table = next(t.value for t in at.dataframe if parameter in t.value.columns)
    predicted = next(c for c in table.columns if str(c).startswith("predicted ("))
    assert table[parameter].tolist() == values and table[predicted].notna().all()


# --- SQL ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("INSERT INTO runs (run_id, status) VALUES ('x', 'running')", "INSERT"),
        ("CREATE TABLE evil AS SELECT 1", "CREATE"),
        ("ATTACH '/tmp/collsweep-dash-app.duckdb' AS other", "ATTACH"),
        ("SELECT * FROM read_csv('/etc/hostname')", "file system operations are disabled"),
        ("SELECT nope FROM runs", "nope"),
    ],
)
def test_sql_page_refuses_writes_attach_and_file_reads(demo: Path, sql: str, words: str) -> None:
    """A refused or failing query shows its error, never a traceback; the store is unchanged."""
    at = open_app("views/sql.py")
    at.text_area(key="sql").input(sql).run()
    assert not at.exception
    assert len(at.error) == 1
    assert at.error[0].value.startswith("Query failed:") and words in at.error[0].value
    assert queries.overview(demo).runs == 2
    assert not Path("/tmp/collsweep-dash-app.duckdb").exists()


def test_sql_page_examples_results_and_csv(demo: Path) -> None:
    """Choosing an example loads its SQL, runs it and offers the result as CSV; the SQL is
    kept in the URL."""
    at = open_app("views/sql.py")
    examples = queries.example_queries()
    at.selectbox(key="ex").set_value(examples[1].title).run()
    assert_clean(at)
    assert at.text_area(key="sql").value == examples[1].sql
    assert at.query_params["q"] == examples[1].sql
    result = at.dataframe[0].value
    assert {"ranks", "bytes", "algorithm", "median_s"} <= set(result.columns) and len(result)
    (download,) = at.get("download_button")
    assert download.proto.label == "Download CSV"
    shared = open_app("views/sql.py", q="SELECT count(*) AS n FROM runs")
    assert not shared.dataframe and "Run query" in shared.info[0].value  # a link runs nothing
    shared.button(key="run_sql").click().run()
    assert shared.dataframe[0].value["n"].tolist() == [2]


# --- stores that cannot be shown ---------------------------------------------------------------


def test_empty_store_explains_the_first_sweep(tmp_path: Path, monkeypatch) -> None:
    """No runs yet: each page says how to run the first sweep; SQL still works."""
    path = tmp_path / "empty.duckdb"
    store.ensure_current(path)
    monkeypatch.setenv(store.STORE_ENV, str(path))
    for page in (None, "views/curves.py", "views/compare.py"):
        at = open_app(page)
        assert_clean(at)
        assert "collsweep sweep data/quick.toml" in at.info[0].value
        assert not at.get("plotly_chart")
    at = open_app("views/sql.py", q="SELECT count(*) AS n FROM runs")
    at.button(key="run_sql").click().run()
    assert_clean(at)
    assert at.dataframe[0].value["n"].tolist() == [0]


def _broken(path: Path, problem: str, whole: Path) -> None:
    """Make ``path`` a missing, corrupt, truncated (half of ``whole``), checksum-failing
    (a block of ``whole`` overwritten) or newer-schema store."""
    if problem == "corrupt":
        path.write_bytes(b"not a database at all" * 200)
    elif problem == "truncated":
        data = whole.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif problem == "checksum":
        shutil.copyfile(whole, path)
        damage_runs_block(path)
    elif problem == "newer":
        store.ensure_current(path)
        con = duckdb.connect(str(path))
        con.execute("UPDATE schema_version SET version = ?", [store.SCHEMA_VERSION + 1])
        con.close()


@pytest.mark.parametrize(
    ("problem", "words"),
    [
        ("missing", "no results store"),
        ("corrupt", "not a DuckDB database"),
        ("truncated", "is damaged"),
        ("checksum", "is damaged"),
        ("newer", "newer"),
    ],
)
def test_unusable_store_shows_the_store_error(
    demo_store: Path, tmp_path: Path, monkeypatch, problem, words
) -> None:
    """A clear st.error with the StoreError text on the data pages; the lab still works. A
    block failing its checksum is met only by a page that reads it (the SQL page reads no
    table until asked), and must then say the same as a store cut short."""
    path = tmp_path / "store.duckdb"
    _broken(path, problem, demo_store)
    monkeypatch.setenv(store.STORE_ENV, str(path))
    pages = (None, "views/curves.py") + (() if problem == "checksum" else ("views/sql.py",))
    for page in pages:
        at = open_app(page)
        assert not at.exception
        assert len(at.error) == 1 and words in at.error[0].value
        assert str(path) in at.error[0].value
    lab = open_app("lab/page.py")
    assert not lab.exception and not lab.error


def test_store_replaced_mid_session_shows_an_error(demo_store: Path, tmp_path, monkeypatch) -> None:
    """A store that disappears between two runs turns into an error message."""
    path = tmp_path / "moving.duckdb"
    shutil.copyfile(demo_store, path)
    monkeypatch.setenv(store.STORE_ENV, str(path))
    at = open_app("views/curves.py")
    assert_clean(at)
    path.unlink()
    at.run()
    assert not at.exception and "no results store" in at.error[0].value


# --- no MPI, and serve -------------------------------------------------------------------------


@pytest.mark.slow
def test_app_never_imports_mpi4py(demo: Path) -> None:
    """Rendering every page in a fresh interpreter leaves mpi4py (and synthetic) unimported."""
    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(APP)!r}, default_timeout=60).run()\n"
        f"for page in {list(PAGES)!r}:\n"
        "    at.switch_page(page).run()\n"
        "    assert not at.exception, (page, at.exception)\n"
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'mpi4py'}),"
        " 'synthetic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[] False"


def test_serve_command_binds_localhost_headless(tmp_path: Path) -> None:
    """serve runs `python -P -m streamlit run dashboard/asgi.py` (app.py behind the Host check) on
    127.0.0.1, headless, with the store after `--`, and passes it as COLLSWEEP_STORE too."""
    cmd = serve.streamlit_command(tmp_path / "s.duckdb", 8600)
    head = [sys.executable, "-P", "-m", "streamlit", "run", str(APP.with_name("asgi.py"))]
    assert cmd[:6] == head  # -P: nothing imported from the working directory
    pairs = dict(zip(cmd[6:-3:2], cmd[7:-3:2], strict=True))
    assert pairs["--server.address"] == "127.0.0.1"
    assert pairs["--server.port"] == "8600"
    assert pairs["--server.headless"] == "true"
    assert pairs["--browser.gatherUsageStats"] == "false"
    assert cmd[-3:] == ["--", "--store", str(tmp_path / "s.duckdb")]
    assert serve.streamlit_command(tmp_path, open_browser=True)[
        cmd.index("--server.headless") + 1
    ] == ("false")
    assert serve.serve_env(tmp_path)[store.STORE_ENV] == str(tmp_path)


def test_store_from_args_only_for_the_app() -> None:
    """`--store` after `--` reaches the app; other programs' argv (pytest's) is ignored."""
    assert serve.store_from_args([str(APP), "--store", "/x/s.duckdb"]) == Path("/x/s.duckdb")
    assert serve.store_from_args([str(APP)]) is None
    assert serve.store_from_args(["pytest", "--store", "/x"]) is None
    assert serve.store_from_args([str(APP), "--sto", "/x"]) is None


def test_pages_leave_no_connection_open(demo_store: Path, tmp_path, monkeypatch) -> None:
    """After every page has rendered, a writer can open the store at once (no leaked reader)."""
    path = tmp_path / "store.duckdb"
    shutil.copyfile(demo_store, path)
    monkeypatch.setenv(store.STORE_ENV, str(path))
    at = open_app()
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception
    con = duckdb.connect(str(path))  # raises if this process still held a read-only connection
    con.close()


def test_warm_up_gives_up_on_a_dead_port() -> None:
    """No server: warm_up returns False within its timeout instead of hanging."""
    assert serve.warm_up(9, timeout=0.5) is False


def test_sql_page_lists_tables_and_columns(demo: Path) -> None:
    """The SQL page's reference names every documented table and shows the chosen one's
    columns with their meaning."""
    at = open_app("views/sql.py")
    picker = at.selectbox(key="ref_table")
    assert set(picker.options) == set(queries.schema_reference())
    picker.set_value("model_accuracy").run()
    text = " ".join(m.value for m in at.markdown)
    assert "`median_abs_error`" in text and "`crossover_inside_share`" in text


@pytest.mark.parametrize(("page", "ranks"), [("views/curves.py", 4), ("views/crossovers.py", None)])
def test_the_verdict_comes_first(demo: Path, page: str, ranks: int | None) -> None:
    """The page opens with the stored verdict of its groups (Curves: the chosen group size)."""
    at = open_app(page, run=RUN_A, ranks="4", dtype="float32", op="sum")
    assert_clean(at)
    lines = queries.verdict(demo, RUN_A, "float32", "sum", ranks)
    heads = [line.partition(": ")[0] for line in lines if not line.startswith(" ")]
    assert heads and (ranks is None or [h.split(" (")[0] for h in heads] == ["p=4 float32 sum"])
    first = at.markdown[0].value
    assert all(f"**{head}**" in first for head in heads)
    paragraphs = [p.lstrip() for p in first.split("\n\n")]  # a group's own paragraph, never
    assert [p for p in paragraphs if p.startswith("**")] == [  # inside the list above it
        p for p in paragraphs if "**" in p
    ]
    assert len([p for p in paragraphs if p.startswith("**")]) == len(heads)
