"""Every time and size a person reads, checked against the store it came from (issue 24).

The store's values sit on decade boundaries (1000 B, 100 KiB; 10 us, 100 us, 10 ms, 1 s), where a
formatter that strips a whole number's zeros printed 1 us for 100 us. Each CLI command's human
output and each dashboard page is rendered on it; every "<number> <unit>" shown must read back
to a value the store holds (or the command computed and reports in its JSON), within the
precision printed.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT
from helpers import synthetic
from streamlit.testing.v1 import AppTest

from runners import store
from runners.cli.main import main
from runners.domain.units import BYTE_UNITS, SECOND_UNITS
from runners.jobs.progress import PlannedLaunch, Progress

APP = ROOT / "dashboard" / "app.py"
RUN = synthetic.decade_spec().run_id
# The same run measured again ten times slower: what the Compare page sets against RUN.
SLOWER = replace(
    synthetic.decade_spec(),
    run_id="r20261203-110000-eeee",
    exact_times={key: 10 * t for key, t in synthetic.decade_spec().exact_times.items()},
)
UNITS = dict(SECOND_UNITS) | dict(BYTE_UNITS) | {"ns/B": 1e-9}
SHOWN = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?) (ns/B|ns|us|ms|s|B|KiB|MiB|GiB|TiB)(?![\w(/])")


@pytest.fixture(scope="module")
def decades(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("decades") / "decades.duckdb"
    synthetic.build_store(path, [synthetic.decade_spec(), SLOWER])
    return path


@pytest.fixture(scope="module")
def values(decades: Path) -> list[float]:
    return stored_values(decades)


def stored_values(path: Path) -> list[float]:
    """Every number in every table of the store, and the run's duration."""
    values: list[float] = []
    with duckdb.connect(str(path), read_only=True) as con:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        for table in tables:
            frame = con.execute(f'SELECT * FROM "{table}"').df()
            for column in frame.columns:
                values += [v for cell in frame[column].dropna() for v in numbers_in(cell)]
        durations = con.execute("SELECT epoch(finished_at - started_at) FROM runs").fetchall()
        values += [float(v) for (v,) in durations]
    return [v for v in values if math.isfinite(v)]


def numbers_in(cell: object) -> list[float]:
    """The numbers of a cell: itself, or those inside its JSON (calibration segments)."""
    if isinstance(cell, bool):
        return []
    if isinstance(cell, int | float):
        return [float(cell)]
    if isinstance(cell, str) and cell[:1] in "[{":
        with contextlib.suppress(ValueError):
            return numbers_in(json.loads(cell))
    if isinstance(cell, dict):
        cell = list(cell.values())
    if isinstance(cell, list | tuple):
        return [v for item in cell for v in numbers_in(item)]
    return []


def shown_numbers(text: str) -> list[tuple[str, float, float]]:
    """(as shown, its value in seconds or bytes, half a unit of its last digit) for each."""
    found = []
    for match in SHOWN.finditer(text):
        number, unit = match.groups()
        decimals = len(number.partition(".")[2])
        scale = UNITS[unit]
        found.append((match.group(0), float(number) * scale, 0.5 * 10.0**-decimals * scale))
    return found


def assert_all_from(text: str, values: list[float]) -> int:
    """Every number shown in `text` is one of `values` within its printed precision; returns
    how many were checked."""
    shown = shown_numbers(text)
    strays = [
        s for s, value, half in shown if not any(abs(value - v) <= half * 1.000001 for v in values)
    ]
    assert not strays, (strays, text)
    return len(shown)


def cli_output(*argv: str) -> str:
    """What `collsweep ARGV` prints on stdout (and its exit status 0)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


def test_the_decade_store_holds_the_values_the_bug_misprinted(decades: Path) -> None:
    medians = set(store.query(decades, "SELECT median_s FROM points").median_s)
    assert {100e-6, 1e-3, 10e-3, 1.0} <= medians


def test_sweep_progress_lines_show_the_stored_medians(decades: Path, values: list) -> None:
    lines: list[str] = []
    progress = Progress([PlannedLaunch("p=2", 12)], verbose=True, out=lines.append)
    sql = "SELECT * FROM points WHERE run_id = ? ORDER BY algorithm, bytes"
    points = store.query(decades, sql, [RUN])
    for row in points.to_dict("records"):
        progress.point(row)
    text = "\n".join(lines)
    assert "100 us" in text and "10 ms" in text and "1000 B" in text and "100 KiB" in text
    assert assert_all_from(text, values) >= 24


@pytest.mark.parametrize(
    "argv",
    [
        ["runs"],
        ["crossovers", RUN],
        ["crossovers", RUN, "--summary"],
    ],
)
def test_cli_tables_show_the_stored_numbers(decades: Path, values: list, argv: list[str]) -> None:
    text = cli_output(*argv, "--store", str(decades))
    assert assert_all_from(text, values) >= (0 if argv == ["runs"] else 3)


def test_runs_are_numbers_in_csv_and_carry_their_unit_in_text(decades: Path) -> None:
    text = cli_output("runs", "--store", str(decades))
    assert "duration (s)" in text.splitlines()[0] and " 180 " in text.splitlines()[1]
    rows = json.loads(cli_output("runs", "--store", str(decades), "--format", "json"))
    assert rows[0]["duration_s"] == 180
    csv_lines = cli_output("runs", "--store", str(decades), "--format", "csv").splitlines()
    column = csv_lines[0].split(",").index("duration_s")
    assert float(csv_lines[1].split(",")[column]) == 180


@pytest.mark.parametrize(("alpha", "nbytes"), [("100e-6", "1000"), ("1e-5", "100K"), ("1", "1M")])
def test_predict_prints_what_its_json_says(alpha: str, nbytes: str) -> None:
    params = ["--alpha", alpha, "--beta", "1e-9", "--gamma", "1e-10", "--bytes", nbytes]
    argv = ["predict", "--algorithm", "ring", "--ranks", "2", *params]
    report = json.loads(cli_output(*argv, "--json"))
    report = report[0] if isinstance(report, list) else report
    values = [float(v) for v in report.values() if isinstance(v, int | float)]
    assert assert_all_from(cli_output(*argv), values) >= 7


def test_tune_summary_shows_the_files_boundaries(decades: Path, tmp_path: Path) -> None:
    out = tmp_path / "tuned.json"
    text = cli_output("tune", RUN, "--store", str(decades), "--out", str(out))
    provenance = json.loads(out.with_name(out.name + ".provenance.json").read_text())
    bounds = [
        b["upto_bytes"]
        for c in provenance["collectives"].values()
        for g in c["groups"].values()
        for b in g["bands"]
    ]
    sizes = [  # the sizes measured, which `unmeasured:` lines name as a band's reach
        float(size["bytes"])
        for c in provenance["collectives"].values()
        for g in c["groups"].values()
        for size in g["sizes"]
    ]
    assert assert_all_from(text, [float(b) for b in bounds if b is not None] + sizes) >= 1


PAGES = [
    "views/runs.py",
    "views/curves.py",
    "views/crossovers.py",
    "views/assumptions.py",
    "views/override.py",
    "views/model_fit.py",
    "views/tuning.py",
    "views/compare.py",
]


def page_text(at: AppTest) -> str:
    """The words a person reads on the page: text elements and the charts' hover texts."""
    kinds = ("markdown", "caption", "info", "warning", "success", "error", "metric", "text")
    parts = [str(getattr(e, "value", "")) for kind in kinds for e in at.get(kind)]
    for chart in at.get("plotly_chart"):
        for trace in json.loads(chart.proto.spec)["data"]:
            for key in ("hovertext", "text", "name"):
                value = trace.get(key)
                parts += value if isinstance(value, list) else [value or ""]
    return "\n".join(str(p) for p in parts)


@pytest.mark.parametrize("page", PAGES)
def test_dashboard_pages_show_the_stored_numbers(
    decades: Path, values: list, page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(store.STORE_ENV, str(decades))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"run": RUN, "ranks": "2", "a": RUN, "b": SLOWER.run_id})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    text = page_text(at)
    assert_all_from(text, values)
    if page == "views/curves.py":
        assert "median 100 us" in text and "median 1 s" in text
    if page == "views/compare.py":  # the sizes of the matching points, and their ratio
        assert "p=2 1000 B float32/sum: 10x" in text and "100 KiB float32/sum: 10x" in text
