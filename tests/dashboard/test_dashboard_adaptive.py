"""An adaptive run on the dashboard's Verdict page (AppTest): how its rounds ended, the winner
strip with its inferred cells in italics and their reasons, and every point it chose with its
round, reason and status; the report and the terminal's table mark the same cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT
from helpers import synthetic
from streamlit.testing.v1 import AppTest

from dashboard.report import report_html
from runners import store
from runners.analysis.verdict import run_tables
from runners.domain.units import format_bytes

APP = ROOT / "dashboard" / "app.py"
RUN = synthetic.adaptive_spec().run_id


@pytest.fixture
def adaptive_store(demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo store with an adaptive run added and analysed, given to the app."""
    db = synthetic.with_adaptive_run(demo_store, tmp_path)
    monkeypatch.setenv(store.STORE_ENV, str(db))
    return db


def test_the_verdict_page_shows_the_rounds_and_marks_every_inferred_cell(
    adaptive_store: Path,
) -> None:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"run": RUN})
    at.run()
    assert not at.exception and at.selectbox(key="run").value == RUN
    assert any(i.value.startswith("Adaptive run: budget spent after 2 rounds") for i in at.info)
    inferred = store.query(
        adaptive_store, "SELECT bytes, winner, settled FROM cell_inferences WHERE run_id = ?", [RUN]
    )
    assert len(inferred) == len(synthetic.SIZES) - 3  # 8 B, 4 KiB and 2 MiB were measured
    strip, rounds = (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
    cells = next(t for t in strip["data"] if t.get("meta") == {"role": "strip"})
    column = {size: j for j, size in enumerate(cells["x"])}
    for row in inferred.itertuples(index=False):
        text = cells["text"][0][column[format_bytes(row.bytes)]]
        said = cells["customdata"][0][column[format_bytes(row.bytes)]]
        assert text.startswith("<i>") and ("inferred" if row.settled else "model pick") in text
        assert "not measured: " in said
    chosen = next(t.value for t in at.dataframe if "reason" in t.value.columns)
    assert len(chosen) == len(synthetic.adaptive_spec().adaptive_points)
    assert set(chosen["status"]) == {"ok"} and set(chosen["round"]) == {0, 1}
    traces = [t["meta"] for t in rounds["data"]]
    assert traces == [{"role": "round", "round": 0}, {"role": "round", "round": 1}]


def test_the_terminals_table_and_the_report_mark_the_same_inferred_cells(
    adaptive_store: Path,
) -> None:
    run = store.get_run(adaptive_store, RUN)
    assert run is not None
    lines = run_tables(adaptive_store, run)
    unmeasured = [line for line in lines if "not measured" in line]
    assert len(unmeasured) == len(synthetic.SIZES) - 3
    assert all("(inferred" in line for line in unmeasured)
    html = report_html(adaptive_store, RUN)
    assert html.count("not measured: ") == len(synthetic.SIZES) - 3
