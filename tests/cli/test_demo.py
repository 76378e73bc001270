"""`collsweep demo` (what `make demo` runs): its steps are real commands that parse, and it
prints a line a step, each command's output in a log, stopping at the first that fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runners.cli import demo
from runners.cli.main import build_parser, main


def test_every_step_is_a_command_that_parses(tmp_path: Path) -> None:
    steps = demo.demo_steps("20261206-120000", tmp_path / "s.duckdb")
    for step in steps:
        args = build_parser(step.argv[0]).parse_args(list(step.argv))
        assert args.command == step.argv[0]
    assert [s.argv[0] for s in steps][-1] == "sweep"  # the newest run: the dashboard's page
    assert steps[-1].shows == "verdict"


def test_a_line_a_step_and_the_first_failure_ends_it(
    demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    db = tmp_path / "s.duckdb"
    shutil.copyfile(demo_store, db)
    steps = [
        demo.Step("listing the runs", ("runs", "--store", str(db)), shows="output"),
        demo.Step("a command that fails", ("runs", "--store", str(tmp_path / "none.duckdb"))),
        demo.Step("never reached", ("runs",)),
    ]
    monkeypatch.setattr(demo, "demo_steps", lambda stamp, path: steps)
    logs = tmp_path / "logs"
    assert main(["demo", "--logs", str(logs), "--store", str(db)]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "[1/3] listing the runs ..." and lines[1].startswith("    done in ")
    assert "r20261201-120000-aaaa" in out  # the step's own output, shown
    assert "[2/3] a command that fails ..." in out and "never reached" not in out
    assert "no results store" in err and "step 2 failed (exit 2)" in out
    assert sorted(p.name for p in logs.iterdir()) == ["1-runs.log", "2-runs.log"]
