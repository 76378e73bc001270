"""What a file or a store holds reaches the terminal with its control characters made visible
(runners.domain.units.visible, the CLI's streams wrapped by runners.process.terminal): a run's host
rewritten by a merged shard, a workload's notes, an argument quoted in an error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
from conftest import ROOT, run_cli

from runners.domain.units import visible

ESCAPES = "\x1b]0;owned\x07\x1b[2J\u202eevil\x9b"


def shown_safely(text: str) -> bool:
    """No control character but newline and tab, and the payload's escapes shown."""
    return visible(text) == text and "\\x1b]0;owned\\x07" in text


def test_visible_writes_each_hidden_character_as_its_escape() -> None:
    assert visible(ESCAPES) == "\\x1b]0;owned\\x07\\x1b[2J\\u202eevil\\x9b"
    assert visible("a\tb\nc é µs") == "a\tb\nc é µs"


def test_a_stored_host_is_shown_escaped_by_runs(demo_store: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    shutil.copy(demo_store, db)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE runs SET host = ?", [ESCAPES])
    done = run_cli("runs", "--store", str(db))
    assert done.returncode == 0 and shown_safely(done.stdout), done.stdout


def test_a_workloads_notes_are_shown_escaped(tmp_path: Path) -> None:
    workload = json.loads((ROOT / "data" / "workload.json").read_text())
    workload["notes"] = [ESCAPES]
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    done = run_cli("workload", "show", str(path))
    said = done.stdout + done.stderr
    assert shown_safely(said), said


def test_an_argument_quoted_in_an_error_is_shown_escaped(tmp_path: Path) -> None:
    done = run_cli("runs", "--store", str(tmp_path / ("x" + ESCAPES)))
    assert done.returncode == 2 and shown_safely(done.stderr), done.stderr
