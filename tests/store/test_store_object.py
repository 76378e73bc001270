"""The Store: one open per reading command, a lifetime, typed records (runners/store/store.py)."""

from __future__ import annotations

import collections
import typing
from pathlib import Path

import duckdb
import pytest
from helpers.synthetic import demo_specs

from runners import store
from runners.cli.main import main
from runners.store import storefile
from runners.store.current_schema import CURRENT_SCHEMA

RUN_A, RUN_B = (spec.run_id for spec in demo_specs())


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> collections.Counter:
    """Every DuckDB open of a store file in this process, counted by mode."""
    counted: collections.Counter = collections.Counter()
    real = storefile.duckdb.connect

    def counting(*args, **kwargs):
        counted["read" if kwargs.get("read_only") else "write"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(storefile.duckdb, "connect", counting)
    return counted


@pytest.mark.parametrize(
    "command",
    [
        ["crossovers", RUN_A, "--summary"],
        ["crossovers", RUN_A, "--summary", "--format", "json"],
        ["crossovers", RUN_A],
        ["runs"],
        ["compare", RUN_A, RUN_B],
        ["export", RUN_A, "--output", "{tmp}/exported"],
        ["tune", RUN_A, "--out", "{tmp}/tuned.json", "--accept-provisional"],
        ["report", RUN_A, "--out", "{tmp}/report.html"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_a_reading_command_opens_its_store_once(
    command: list[str], demo_store: Path, tmp_path: Path, connects, capsys
) -> None:
    """Run names resolved, the run checked, every table read: one read-only open, no write
    (before the Store: crossovers 8 opens, tune 7, export 3, report and compare 2)."""
    words = [w.replace("{tmp}", str(tmp_path)) for w in command]
    status = main([*words, "--store", str(demo_store)])
    assert status in (0, 1), capsys.readouterr().err  # compare: 1 when B is slower
    assert connects == {"read": 1}


def test_a_reading_store_refuses_writes_at_once(demo_store: Path) -> None:
    """A write through a read-only Store is a ValueError, not a wait for its own lock."""
    with store.Store.open(demo_store) as db, pytest.raises(ValueError, match="read-only"):
        store.update_run(db, RUN_A, {"name": "x"})


def test_a_closed_store_lets_a_writer_in(demo_store: Path, tmp_path: Path) -> None:
    """While a reading Store is open, a writer elsewhere would wait; once closed it does not,
    and a read after close is refused."""
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(demo_store.read_bytes())
    db = store.Store.open(copy)
    assert store.get_run(db, RUN_A)["run_id"] == RUN_A
    db.close()
    assert db.closed
    store.update_run(copy, RUN_A, {"name": "renamed"})
    with pytest.raises(ValueError, match="closed"):
        store.get_run(db, RUN_A)
    with store.Store.open(copy) as again:
        assert store.get_run(again, RUN_A)["name"] == "renamed"


def test_a_writing_store_creates_and_migrates_once(tmp_path: Path, connects) -> None:
    """Opened for writing, a missing store is created at open; its writes then each take a
    short connection of their own (no reader is kept waiting between them)."""
    path = tmp_path / "new.duckdb"
    with store.Store.open(path, write=True) as db:
        assert path.exists() and str(db) == str(path)
        opened = connects["write"]
        store.create_run(db, {"run_id": "r20261206-000000-aaaa"})
        store.update_run(db, "r20261206-000000-aaaa", {"name": "first"})
        assert connects["write"] == opened + 2
        assert store.get_run(db, "r20261206-000000-aaaa")["name"] == "first"


def test_a_missing_store_is_one_error_for_a_reader(tmp_path: Path) -> None:
    with pytest.raises(store.StoreError, match="no results store"):
        store.Store.open(tmp_path / "none.duckdb")
    assert not (tmp_path / "none.duckdb").exists()


@pytest.mark.parametrize(
    ("record", "table"), [(store.RunRecord, "runs"), (store.CalibrationRecord, "calibrations")]
)
def test_each_record_has_its_tables_columns(record: type, table: str) -> None:
    """A typed record names exactly its table's columns in the current schema."""
    con = duckdb.connect()
    con.execute(CURRENT_SCHEMA)
    columns = [row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()]
    assert list(typing.get_type_hints(record)) == columns
