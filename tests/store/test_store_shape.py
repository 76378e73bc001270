"""A store whose schema_version says current but whose tables are not (a version that is text, a
table dropped or replaced by a view, a column gone): every command and dashboard page refuses it
in one line at open, before reading or writing it (runners.store.shape)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT, run_cli
from helpers import synthetic
from streamlit.testing.v1 import AppTest

RUN_A = synthetic.demo_specs()[0].run_id

DAMAGE = {
    "text version": (
        "ALTER TABLE schema_version ALTER version TYPE VARCHAR; "
        "UPDATE schema_version SET version = 'eleven'",
        "not a version number",
    ),
    "no points": ("DROP TABLE points CASCADE", "its table points is missing"),
    "runs a view": (
        "CREATE TABLE kept AS SELECT * FROM runs; DROP TABLE runs CASCADE; "
        "CREATE VIEW runs AS SELECT * FROM kept",
        "its table runs is missing (or is a view)",
    ),
    "no tags column": ("ALTER TABLE runs DROP COLUMN tags", "its table runs lacks tags"),
}


@pytest.fixture(params=sorted(DAMAGE))
def damaged(request: pytest.FixtureRequest, demo_store: Path, tmp_path: Path):
    """A copy of the demo store damaged one way; (its path, the words that must say so)."""
    path = tmp_path / "damaged.duckdb"
    shutil.copyfile(demo_store, path)
    sql, words = DAMAGE[request.param]
    with duckdb.connect(str(path)) as con:
        con.execute(sql)
    return path, words, request.param


def test_reading_and_writing_commands_refuse_it_in_one_line(damaged, reliability) -> None:
    path, words, case = damaged
    before = path.read_bytes()
    for argv in (["runs"], ["tag", RUN_A, "--add", "x"], ["crossovers", RUN_A, "--summary"]):
        done = run_cli(*argv, "--store", str(path))
        said = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(said) == 1 and words in said[0], (argv, said)
        reliability.bad_input(f"{argv[0]} on a store with {case}", True)
    assert path.read_bytes() == before  # nothing written, not even by `tag`


def test_the_dashboard_says_it_without_an_exception(damaged, monkeypatch) -> None:
    path, words, _ = damaged
    monkeypatch.setenv("COLLSWEEP_STORE", str(path))
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=60).run()
    assert not at.exception and any(words in e.value for e in at.error)
