"""The Scale page on a store holding a simulated run beside measured ones: the simulated
winners over (ranks x size) as stored, the cells a measured run decided marked, the crossovers
against p as stored, and every page of the simulated run saying it was not measured."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT
from helpers import synthetic
from streamlit.testing.v1 import AppTest

from dashboard.figures.scale import AGREES, DIFFERS
from dashboard.figures.style import short_name
from runners import store
from runners.domain.units import format_bytes

APP = ROOT / "dashboard" / "app.py"


@pytest.fixture(scope="module")
def scale_store(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo store (measured runs at p = 2..8) with a simulated run at p = 8, 64, 256."""
    path = tmp_path_factory.mktemp("scale") / "scale.duckdb"
    shutil.copy(demo_store, path)
    return path, synthetic.add_simulated_run(path)


def scale_page(path: Path, monkeypatch: pytest.MonkeyPatch, page: str = "views/scale.py"):
    monkeypatch.setenv(store.STORE_ENV, str(path))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def test_the_heatmap_is_the_stored_winners_with_measured_cells_marked(
    scale_store: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, run_id = scale_store
    at = scale_page(path, monkeypatch)
    heatmap, _ = figures(at)
    (trace,) = [t for t in heatmap["data"] if t["type"] == "heatmap"]
    with duckdb.connect(str(path), read_only=True) as con:
        stored = con.execute(
            "SELECT ranks, bytes, winner, decided FROM winners WHERE run_id = ? "
            "AND library = 'all'",
            [run_id],
        ).fetchall()
        measured = con.execute(
            "SELECT DISTINCT w.ranks, w.bytes FROM winners w WHERE w.run_id <> ? "
            "AND w.library = 'all' AND w.dtype = 'float32' AND w.op = 'sum'",
            [run_id],
        ).fetchall()
    rows, columns = trace["y"], trace["x"]
    for ranks, nbytes, winner, decided in stored:
        cell = trace["text"][rows.index(f"p={ranks}")][columns.index(format_bytes(nbytes))]
        assert cell.split()[0] == (short_name(winner) if decided else "tie")
    marked = {
        (rows[i], columns[j])
        for i, row in enumerate(trace["text"])
        for j, text in enumerate(row)
        if text.endswith((AGREES, DIFFERS)) or text.startswith("(")
    }
    assert marked == {(f"p={r}", format_bytes(b)) for r, b in measured}
    simulated_cells = {(f"p={r}", format_bytes(b)) for r, b, _, _ in stored}
    for i, row in enumerate(trace["text"]):
        for j, text in enumerate(row):
            if text.startswith("("):  # measured only: no simulated cell there
                assert (rows[i], columns[j]) not in simulated_cells
    assert "p=256" in rows and "p=2" in rows  # simulated and measured group sizes on one map


def test_the_crossover_chart_is_the_stored_crossovers_against_p(
    scale_store: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, run_id = scale_store
    at = scale_page(path, monkeypatch)
    _, chart = figures(at)
    a, b = at.selectbox(key="pair").value.split(" / ")
    with duckdb.connect(str(path), read_only=True) as con:
        stored = con.execute(
            "SELECT kind, ranks, bytes FROM crossovers WHERE run_id = ? AND "
            "least(algorithm_a, algorithm_b) = ? AND greatest(algorithm_a, algorithm_b) = ? "
            "AND (kind = 'measured' OR calibration_id LIKE 'platform:%') ORDER BY ranks",
            [run_id, min(a, b), max(a, b)],
        ).fetchall()
    by_kind = {t["meta"]["kind"]: t for t in chart["data"]}
    for kind, trace in (("measured", by_kind["simulated"]), ("predicted", by_kind["predicted"])):
        mine = [(r, pytest.approx(n)) for k, r, n in stored if k == kind]
        assert list(zip(trace["x"], trace["y"], strict=True)) == mine
    assert by_kind["simulated"]["x"], "the simulated run has crossovers of its winning pair"


@pytest.mark.parametrize("page", ["views/scale.py", "views/crossovers.py", "views/verdict.py"])
def test_every_page_of_a_simulated_run_says_it_was_not_measured(
    scale_store: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    path, run_id = scale_store
    monkeypatch.setenv(store.STORE_ENV, str(path))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"run": run_id})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    said = " ".join(w.value for w in at.warning)
    assert "Simulated in SimGrid" in said and "not measured" in said


def test_the_verdict_of_a_simulated_run_claims_no_precision(
    scale_store: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One value a point has no interval to meet a target with: the Verdict page says none."""
    path, run_id = scale_store
    monkeypatch.setenv(store.STORE_ENV, str(path))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"run": run_id})
    at.run()
    assert not at.exception, at.exception
    assert not any("Precision:" in c.value for c in at.caption)


def test_the_shareable_report_of_a_simulated_run_says_so_first(
    scale_store: tuple[Path, str],
) -> None:
    from dashboard.report import report_html

    path, run_id = scale_store
    page = report_html(path, run_id)
    body = page.split("<body>", 1)[1]
    assert body.index("Simulated in SimGrid") < body.index("<h2>Verdict</h2>")
    assert "not measured" in body and "Precision:" not in body
