"""`collsweep report RUN --out FILE`: one self-contained HTML file of a run, and the Verdict
page's download of the same file."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT
from helpers import synthetic

from runners.cli.main import main

RUN_A = synthetic.demo_specs()[0].run_id


@pytest.fixture(scope="module")
def report(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The demo run A's report, written by the real command."""
    out = tmp_path_factory.mktemp("report") / "a.html"
    assert main(["report", RUN_A, "--store", str(demo_store), "--out", str(out)]) == 0
    return out.read_text()


def test_the_report_is_one_self_contained_file(report: str) -> None:
    assert report.startswith("<!DOCTYPE html>") and report.rstrip().endswith("</html>")
    assert "plotly.js" in report and "Plotly.newPlot" in report  # the library, inline
    assert not re.search(r"<script[^>]+src=", report)  # nothing fetched from elsewhere
    assert len(re.findall(r"Plotly\.newPlot", report)) == 1 + 2 * 4  # strip + 2 per group


def test_the_report_says_what_the_verdict_page_says(report: str, demo_store: Path) -> None:
    from dashboard import queries
    from runners.domain.verdict.winner_table import by_group, group_sentence

    data = queries.verdict_data(demo_store, RUN_A)
    for cells in by_group(data.cells).values():
        assert group_sentence(cells) in report.replace("&gt;", ">")
    for title in ("Verdict", "Curves", "Assumptions", "Provenance"):
        assert f"<h2>{title}</h2>" in report
    assert f"collsweep report: {RUN_A}" in report and "not_oversubscribed" in report


HOSTILE = "<svg/onload=alert(1)>"  # what an imported file's redop or host could hold


def test_values_from_the_store_reach_the_report_only_escaped(
    demo_store: Path, tmp_path: Path
) -> None:
    """Issue 50 item 1: an op, a datatype or a host from a shared file is text, never markup."""
    path = tmp_path / "hostile.duckdb"
    shutil.copyfile(demo_store, path)
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE points SET op = ? WHERE run_id = ? AND op = 'sum'", [HOSTILE, RUN_A])
        con.execute("UPDATE runs SET host = ? WHERE run_id = ?", [HOSTILE, RUN_A])
    out = tmp_path / "r.html"
    assert main(["report", RUN_A, "--store", str(path), "--out", str(out)]) == 0
    report = out.read_text()
    assert HOSTILE not in report  # (plotly.js itself holds "<svg" strings)
    assert html.escape(HOSTILE) in report  # said, as text


def test_bad_input_writes_nothing_and_exits_2(demo_store: Path, tmp_path: Path, capsys) -> None:
    cases = [
        ([RUN_A, "--out", str(demo_store)], "DuckDB database"),
        (["r20990101-000000-zzzz", "--out", str(tmp_path / "x.html")], "no run"),
        (["../x", "--out", str(tmp_path / "x.html")], "run id"),
        ([RUN_A, "--out", str(tmp_path / "missing" / "x.html")], ""),
    ]
    for args, said in cases:
        assert main(["report", *args, "--store", str(demo_store)]) == 2
        assert said in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_verdict_page_offers_the_same_file(demo_store: Path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    from runners import store

    monkeypatch.setenv(store.STORE_ENV, str(demo_store))
    app = ROOT / "dashboard" / "app.py"
    at = AppTest.from_file(str(app), default_timeout=60)
    at.query_params.update({"run": RUN_A})
    at.run()
    at.button(key="prepare_report").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("download_button")) == 1
