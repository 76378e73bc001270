"""`collsweep simulate` stores a run of kind simulated: the platform and simulator with it, one
value per point, winners decided by the stated margin, analysed like every run, and refused
where only measurements make sense (resume, tune, replay)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT, run_cli
from helpers.simgrid_here import needs_simgrid

from runners import store
from runners.domain.sweep.simulated_run import simulated_table

GRID = ["--sizes", "8,64K,16M", "--ranks", "8,64"]
ALGORITHMS = ["--algorithms", "recursive_doubling,rabenseifner,ring"]


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[dict]]:
    """One simulated run in a fresh store: its path, id and the points the command printed."""
    path = tmp_path_factory.mktemp("simulated") / "s.duckdb"
    words = [*GRID, *ALGORITHMS, "--json", "--margin", "0.03", "--store", str(path)]
    done = run_cli("simulate", *words)
    assert done.returncode == 0, done.stderr
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    with duckdb.connect(str(path), read_only=True) as con:
        (run_id,) = con.execute("SELECT run_id FROM runs").fetchone() or ("",)
    assert f"stored as run {run_id}" in " ".join(done.stderr.split())
    return path, run_id, printed


@needs_simgrid
@pytest.mark.slow
def test_the_run_holds_the_platform_simulator_and_one_value_per_point(simulated) -> None:
    path, run_id, printed = simulated
    run = store.get_run(path, run_id)
    assert run is not None and run["status"] == "complete"
    table = simulated_table(run["spec_toml"])
    assert table is not None and table["platform"] == "crossbar" and table["margin"] == 0.03
    assert table["simulator"].startswith("SimGrid ") and len(table["schedule_version"]) == 12
    environment = run["environment"]
    assert environment["simulated"]["platform"]["link"]["latency_s"] == 2e-6
    with duckdb.connect(str(path), read_only=True) as con:
        points = con.execute(
            "SELECT algorithm, ranks, bytes, median_s, launches, (SELECT count(*) FROM samples s "
            "WHERE s.point_id = p.point_id) FROM points p WHERE run_id = ?",
            [run_id],
        ).fetchall()
        cal = con.execute(
            "SELECT alpha_s, beta_s_per_byte, source FROM calibrations WHERE calibration_id = ?",
            [run["calibration_id"]],
        ).fetchone()
    assert len(points) == len(printed) == 18
    simulated_s = {(r["algorithm"], r["ranks"], r["bytes"]): r["simulated_s"] for r in printed}
    for algorithm, ranks, nbytes, median, launches, samples in points:
        assert median == simulated_s[(algorithm, ranks, nbytes)]
        assert (launches, samples) == (1, 1)
    assert cal == (2e-6, pytest.approx(8e-11), "platform:crossbar")


@needs_simgrid
@pytest.mark.slow
def test_winners_are_decided_by_the_stated_margin(simulated) -> None:
    path, run_id, printed = simulated
    seconds = {(r["algorithm"], r["ranks"], r["bytes"]): r["simulated_s"] for r in printed}
    with duckdb.connect(str(path), read_only=True) as con:
        cells = con.execute(
            "SELECT ranks, bytes, winner, decided, pairing FROM winners WHERE run_id = ? "
            "AND library = 'all'",
            [run_id],
        ).fetchall()
    assert len(cells) == 6
    for ranks, nbytes, winner, decided, pairing in cells:
        fastest = sorted((s, a) for (a, r, n), s in seconds.items() if (r, n) == (ranks, nbytes))
        apart = fastest[1][0] / fastest[0][0] > 1.03
        assert decided == apart, (ranks, nbytes, fastest)
        assert pairing == "simulated: ties within 3%"
        assert winner == fastest[0][1]
    assert {c[3] for c in cells} == {True, False}  # the grid holds both kinds of cell


@needs_simgrid
@pytest.mark.slow
def test_the_verdict_says_simulated_and_measurements_only_commands_refuse(
    simulated, tmp_path: Path
) -> None:
    path, run_id, _ = simulated
    summary = run_cli("crossovers", run_id, "--summary", "--store", str(path))
    assert summary.returncode == 0, summary.stderr
    words = " ".join(summary.stdout.split())
    assert "simulated between" in words and "measured between" not in words
    assert "(simulated: ties within 3%)" in words
    refusals = [
        ["sweep", "--resume", run_id],
        ["tune", run_id, "--out", str(tmp_path / "tuning")],
        ["workload", "report", "data/workload.json", "--run", run_id, "--replay"],
    ]
    for words_ in refusals:
        done = run_cli(*words_, "--store", str(path))
        assert done.returncode == 2, (words_, done.stderr)
        assert "simulated in SimGrid" in done.stderr and "not measured" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "tuning").exists()


@needs_simgrid
@pytest.mark.slow
def test_no_store_leaves_the_store_alone(tmp_path: Path) -> None:
    path = tmp_path / "untouched.duckdb"
    words = ["--sizes", "8", "--ranks", "8", "--algorithms", "ring"]
    done = run_cli("simulate", *words, "--no-store", "--store", str(path))
    assert done.returncode == 0, done.stderr
    assert not path.exists() and "stored as run" not in done.stdout


@needs_simgrid
@pytest.mark.slow
def test_a_workload_priced_at_scale_from_a_simulated_run(tmp_path: Path) -> None:
    """`workload report --simulate --ranks 16`: the preset job's calls simulated on 16 ranks,
    each policy's total the calls times their simulated points, the default MPICH's choice."""
    path = tmp_path / "w.duckdb"
    done = run_cli(
        "workload", "report", "data/workload.json", "--simulate", "--ranks", "16",
        "--platform", "fat-tree-edr", "--json", "--store", str(path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    workload = json.loads((ROOT / "data" / "workload.json").read_text())
    with duckdb.connect(str(path), read_only=True) as con:
        medians = {
            (c, n, a): m
            for c, n, a, m in con.execute(
                "SELECT collective, bytes, algorithm, median_s FROM points "
                "WHERE run_id = ? AND ranks = 16",
                [report["run_id"]],
            ).fetchall()
        }
    default = next(p for p in report["policies"] if p["policy"] == "default")
    expected = sum(
        call["calls"] * medians[(call["collective"], call["bytes"], _mpi(call["collective"]))]
        for call in workload["calls"]
    )
    assert default["total_s"] == pytest.approx(expected)
    assert any("was simulated in SimGrid" in note for note in report["notes"])


def _mpi(collective: str) -> str:
    return "mpi" if collective == "allreduce" else f"{collective}.mpi"


@needs_simgrid
@pytest.mark.slow
def test_a_large_stored_grid_ends_with_its_verdict_not_every_point(tmp_path: Path) -> None:
    sizes = "8,64,512,4K,32K,256K,2M,16M"
    words = ["--ranks", "8,16", "--sizes", sizes, "--algorithms", "recursive_doubling,ring"]
    words += ["--collectives", "allreduce", "--dtypes", "float32,float64"]  # 64 points
    done = run_cli("simulate", *words, "--store", str(tmp_path / "s.duckdb"))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "simulated 64 points" in said and "contention-free" not in said
    assert "p=8 float32 sum: 8 B" in said and "every point's table: --verbose" in said
    assert len(done.stdout.splitlines()) < 40
