"""Winners decided on a busy or unsteady machine are provisional: stored so by the analysis,
said first by the verdict, and refused by `collsweep tune` unless accepted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from helpers import synthetic

from runners import store
from runners.cli.main import main
from runners.domain.verdict.assumptions import HOLDS, VIOLATED, check
from runners.domain.verdict.provisional import provisional_reason, short_reason

RUN_A = synthetic.demo_specs()[0].run_id


@pytest.fixture(scope="module")
def busy_store(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store with run A recorded as started on a busy machine, analysed again."""
    path = tmp_path_factory.mktemp("busy") / "busy.duckdb"
    shutil.copyfile(demo_store, path)
    run = store.get_run(path, RUN_A)
    environment = run["environment"] | {"load_average_before": [3.5, 2.0, 1.0]}
    with duckdb.connect(str(path)) as con:
        con.execute(
            "UPDATE runs SET environment = ? WHERE run_id = ?", [json.dumps(environment), RUN_A]
        )
    assert main(["analyze", RUN_A, "--store", str(path)]) == 0
    return path


def test_the_analysis_stores_every_winner_of_a_busy_run_as_provisional(
    busy_store: Path, demo_store: Path
) -> None:
    sql = "SELECT provisional, provisional_reason FROM winners WHERE run_id = ?"
    busy = store.query(busy_store, sql, [RUN_A])
    assert len(busy) and busy["provisional"].all()
    assert (
        busy["provisional_reason"].str.contains("quiet_machine: 1-minute load average 3.50").all()
    )
    steady = store.query(demo_store, sql, [RUN_A])
    assert not steady["provisional"].any() and (steady["provisional_reason"] == "").all()


def test_the_verdict_says_provisional_first_and_flags_every_group(busy_store: Path, capsys) -> None:
    assert main(["crossovers", RUN_A, "--summary", "--store", str(busy_store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("provisional: the machine was busy before the sweep")
    assert len(lines[0]) <= 120  # one line: the evidence is on the Assumptions page
    groups = [line for line in lines if line.startswith("p=")]
    assert groups and all("(provisional)" in line for line in groups)


def test_tune_refuses_provisional_winners_unless_accepted(
    busy_store: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "tuned.json"
    argv = ["tune", RUN_A, "--store", str(busy_store), "--out", str(out)]
    assert main(argv) == 2
    assert "provisional" in capsys.readouterr().err and list(tmp_path.iterdir()) == []
    assert main([*argv, "--accept-provisional"]) == 0 and out.exists()


def test_only_a_violated_machine_check_of_the_run_makes_winners_provisional() -> None:
    busy = check("quiet_machine", VIOLATED, "1-minute load average 2.00 on 2 cores")
    moved = check("stable_machine", VIOLATED, "8 B ping-pong 2 us .. 5 us (2.5x)")
    other = check("single_node", VIOLATED, "two hosts")
    assert provisional_reason([check("quiet_machine", HOLDS, "idle"), other]) == ""
    assert provisional_reason([busy, other]).startswith("quiet_machine: 1-minute load")
    assert "; stable_machine: 8 B ping-pong" in provisional_reason([busy, moved])


def test_the_short_reason_names_what_happened_and_keeps_anything_else() -> None:
    both = "quiet_machine: load 2.9 on 2 cores; stable_machine: 10 probes; widest: 1.6x"
    assert short_reason(both) == "the machine was busy before the sweep and changed state during it"
    assert short_reason("stable_machine: x") == "the machine changed state during it"
    assert short_reason("something else") == "something else"
