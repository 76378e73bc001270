"""The model commands on real ranks: calibrate, predict, crossovers and analyze."""

from __future__ import annotations

import bisect
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT, run_cli

from runners import store
from runners.cli.main import main as cli_main
from runners.domain.collectives.datatypes import DTYPES
from runners.domain.model.closed_form import predict
from runners.domain.units import TERMINAL_WIDTH

SPEC = """
sizes = { min = 8, max = 262144, factor = 8 }
ranks = [2]
algorithms = ["recursive_doubling", "rabenseifner", "ring"]
warmup = 1
min_iterations = 5
max_iterations = 40
budget_s = 0.02
passes = 1
"""


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A store holding one calibration made by `collsweep calibrate`, and its JSON."""
    db = tmp_path_factory.mktemp("cli_model") / "s.duckdb"
    result = run_cli(
        "calibrate", "--budget", "1", "--max-bytes", "262144", "--store", str(db), "--json"
    )
    assert result.returncode == 0, result.stderr
    return db, json.loads(result.stdout)


@pytest.fixture(scope="module")
def swept(calibrated: tuple[Path, dict]) -> str:
    """The id of a real sweep into that store."""
    db, _ = calibrated
    spec = db.with_name("spec.toml")
    spec.write_text(SPEC)
    result = run_cli("sweep", str(spec), "--store", str(db), timeout=300)
    assert result.returncode == 0, result.stderr
    return store.query(db, "SELECT run_id FROM runs")["run_id"].item()


def cli_json(capsys: pytest.CaptureFixture, *args: str) -> dict:
    """Run the real CLI entry point in this process and parse its JSON output."""
    assert cli_main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def cli_error(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    """Exit status and standard error of the real CLI entry point run in this process."""
    try:
        code = cli_main(list(args))
    except SystemExit as exc:  # argparse rejects malformed flags this way
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.mpi
def test_calibrate_stores_what_it_prints(
    calibrated: tuple[Path, dict], calibration_columns: set[str]
) -> None:
    db, cal = calibrated
    assert set(cal) == calibration_columns
    assert cal["source"] == "pingpong" and cal["max_bytes"] == 262144
    stored = store.get_calibration(db, cal["calibration_id"])
    assert stored["alpha_s"] == cal["alpha_s"] and stored["gammas"] == cal["gammas"]
    assert stored["breakpoints"] == cal["breakpoints"]


@pytest.mark.parametrize(
    "flags",
    [["--ranks", "1"], ["--dtypes", "int8"], ["--min-bytes", "0"], ["--budget", "0"]],
)
def test_calibrate_refuses_bad_input(
    capsys: pytest.CaptureFixture, tmp_path: Path, flags: list[str]
) -> None:
    db = tmp_path / "s.duckdb"
    code, err = cli_error(capsys, "calibrate", "--store", str(db), *flags)
    assert code == 2 and "error:" in err and not db.exists()


@pytest.mark.mpi
def test_a_sweep_reuses_the_stored_calibration(calibrated: tuple[Path, dict], swept: str) -> None:
    db, cal = calibrated
    assert store.get_run(db, swept)["calibration_id"] == cal["calibration_id"]
    query = "SELECT source FROM calibrations WHERE source NOT LIKE 'launch%' ORDER BY source"
    assert store.query(db, query).source.tolist() == [f"fitted:{swept}", "pingpong"]


@pytest.mark.parametrize(
    ("algorithm", "ranks", "nbytes", "dtype"),
    [
        ("ring", 4, 2**20, "float32"),
        ("ring", 3, 8, "float32"),
        ("rabenseifner", 6, 4096, "float64"),
        ("recursive_doubling", 5, 64, "int32"),
        ("binomial_tree", 7, 12, "float16"),
        ("mpi:reduce_scatter_allgather", 8, 65536, "int64"),
    ],
)
def test_predict_with_given_parameters_is_the_model(
    capsys: pytest.CaptureFixture, algorithm: str, ranks: int, nbytes: int, dtype: str
) -> None:
    params = ("--alpha", "2e-6", "--beta", "1.5e-10", "--gamma", "3e-11")
    got = cli_json(
        capsys,
        "predict",
        *("--algorithm", algorithm, "--ranks", str(ranks), "--bytes", str(nbytes)),
        *("--dtype", dtype, *params, "--json"),
    )
    itemsize = DTYPES[dtype].itemsize
    model = "rabenseifner" if algorithm.startswith("mpi:") else algorithm
    want = predict(model, ranks, nbytes, 2e-6, 1.5e-10, 3e-11, itemsize)
    assert got["model"] == model and got["calibration_id"] is None
    assert got["predicted_s"] == pytest.approx(want.total_s)
    terms = (got["latency_s"], got["bandwidth_s"], got["reduction_s"])
    assert terms == pytest.approx((want.latency_s, want.bandwidth_s, want.reduction_s))
    assert sum(terms) == pytest.approx(got["predicted_s"])


@pytest.mark.mpi
def test_predict_without_parameters_uses_the_newest_calibration(
    capsys: pytest.CaptureFixture, calibrated: tuple[Path, dict], swept: str
) -> None:
    db, cal = calibrated
    nbytes = 131072
    got = cli_json(
        capsys, "predict", "--algorithm", "ring", "--ranks", "4", "--bytes", str(nbytes),
        "--store", str(db), "--json",
    )  # fmt: skip
    segment = cal["segments"][bisect.bisect_right(cal["breakpoints"], nbytes)]
    alpha, beta = segment["alpha_s"], segment["beta_s_per_byte"]
    gamma = cal["gammas"]["float32/sum"]
    assert got["calibration_id"] == cal["calibration_id"], "the ping-pong, not the fitted one"
    assert (got["alpha_s"], got["beta_s_per_byte"], got["gamma_s_per_byte"]) == (alpha, beta, gamma)
    want = predict("ring", 4, nbytes, alpha, beta, gamma, 4)
    assert got["predicted_s"] == pytest.approx(want.total_s)
    mixed = cli_json(
        capsys, "predict", "--algorithm", "mpi", "--ranks", "4", "--bytes", str(nbytes),
        "--alpha", "1e-3", "--store", str(db), "--json",
    )  # fmt: skip
    assert mixed["model"] == "library_min" and mixed["alpha_s"] == 1e-3
    assert mixed["beta_s_per_byte"] == beta


@pytest.mark.mpi
def test_predict_for_a_run_uses_its_own_calibration_and_names_an_intercept(
    capsys: pytest.CaptureFixture, calibrated: tuple[Path, dict], swept: str
) -> None:
    """--run takes the run's calibration as every page does (its launches' first); above a
    piecewise fit's first breakpoint alpha is said to be that segment's intercept."""
    db, _ = calibrated
    first = next(c for c in store.calibration_order(db, swept) if store.get_calibration(db, c))
    stored = store.get_calibration(db, first)
    small, large = 8, 2 * max(stored["breakpoints"] or [4096])
    flags = ["predict", "--algorithm", "ring", "--ranks", "2", "--store", str(db), "--run", swept]
    low = cli_json(capsys, *flags, "--bytes", str(small), "--json")
    high = cli_json(capsys, *flags, "--bytes", str(large), "--json")
    assert low["calibration_id"] == high["calibration_id"] == first
    assert low["alpha_is"] == "latency"
    if stored["breakpoints"]:
        assert high["alpha_is"].startswith("intercept of the fit from ")
        assert cli_main([*flags, "--bytes", str(large)]) == 0
        assert "not a latency" in capsys.readouterr().out
    code, err = cli_error(capsys, *flags[:-1], "r20990101-000000-zzzz", "--bytes", "8")
    assert code == 2 and "no run" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--algorithm", "ring", "--ranks", "4", "--bytes", "64"], "no calibration"),
        (["--algorithm", "warp", "--ranks", "4", "--bytes", "64"], "unknown algorithm"),
        (["--algorithm", "ring", "--ranks", "0", "--bytes", "64"], "--ranks"),
        (["--algorithm", "ring", "--ranks", "4", "--bytes", "6"], "multiple of"),
        (["--algorithm", "ring", "--ranks", "4", "--bytes", "64", "--alpha", "-1"], "--alpha"),
        (["--algorithm", "ring", "--ranks", "four", "--bytes", "64"], "invalid int"),
    ],
)
def test_predict_refuses_bad_input_and_a_missing_calibration(
    capsys: pytest.CaptureFixture, tmp_path: Path, flags: list[str], message: str
) -> None:
    code, err = cli_error(capsys, "predict", *flags, "--store", str(tmp_path / "none.duckdb"))
    assert code == 2 and message in err


def test_predict_errors_end_the_process_without_a_traceback(tmp_path: Path) -> None:
    flags = ["--algorithm", "ring", "--ranks", "4", "--bytes", "64"]
    result = run_cli("predict", *flags, "--store", str(tmp_path / "none.duckdb"))
    assert result.returncode == 2 and "no calibration" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "none.duckdb").exists()


@pytest.mark.mpi
def test_predict_needs_a_gamma_for_the_dtype(
    capsys: pytest.CaptureFixture, calibrated: tuple[Path, dict]
) -> None:
    db, _ = calibrated
    flags = ["--algorithm", "ring", "--ranks", "4", "--bytes", "64", "--dtype", "int64"]
    code, err = cli_error(capsys, "predict", *flags, "--store", str(db))
    assert code == 2 and "no gamma for int64/sum" in err


@pytest.mark.mpi
def test_crossovers_in_three_formats(calibrated: tuple[Path, dict], swept: str) -> None:
    db, _ = calibrated
    stored = store.query(db, "SELECT * FROM crossovers WHERE run_id = ?", [swept])
    assert len(stored) > 0
    outputs = {
        fmt: run_cli("crossovers", swept, "--store", str(db), "--format", fmt)
        for fmt in ("table", "csv", "json")
    }
    assert all(r.returncode == 0 for r in outputs.values()), outputs
    table = outputs["table"].stdout
    assert "measured [interval]" in table and "agreement" in table and "exact pick" in table
    assert max(len(line) for line in table.splitlines()) <= TERMINAL_WIDTH  # fits a terminal
    pairs = {
        " / ".join(sorted(p)) for p in zip(stored.algorithm_a, stored.algorithm_b, strict=True)
    }
    assert all(pair in table for pair in pairs)  # one row per pair, both kinds side by side
    winners = store.query(db, "SELECT count(*) n FROM winners WHERE run_id = ?", [swept]).n.item()
    assert "winners:" in table and "runner-up is" in table and winners > 0
    block = table.split("winners:")[1].split("agreement:")[0].splitlines()
    rows = [line for line in block if " slower [" in line or " tie (" in line or "unknown" in line]
    assert len(rows) == winners  # a row per stored cell, its margin in words
    frame = pd.read_csv(io.StringIO(outputs["csv"].stdout))
    records = json.loads(outputs["json"].stdout)
    assert len(frame) == len(records) == len(stored)
    assert sorted(frame.bytes) == pytest.approx(sorted(stored.bytes))
    assert sorted(r["kind"] for r in records) == sorted(stored.kind)
    measured = frame[frame.kind == "measured"]
    assert (measured.low_bytes <= measured.bytes).all()
    assert (measured.bytes <= measured.high_bytes).all()
    predicted = frame[frame.kind == "predicted"]
    assert set(predicted.calibration_id) <= set(stored.calibration_id.dropna())


@pytest.mark.mpi
def test_the_verdict_summarises_every_group(calibrated: tuple[Path, dict], swept: str) -> None:
    """`crossovers --summary` gives one line per (ranks, dtype, op), its bands in size order."""
    db, _ = calibrated
    result = run_cli("crossovers", swept, "--summary", "--store", str(db))
    assert result.returncode == 0, result.stderr
    groups = store.query(
        db, "SELECT DISTINCT ranks, dtype, op FROM winners WHERE run_id = ?", [swept]
    )
    heads = [line for line in result.stdout.splitlines() if line.startswith("p=")]
    assert len(heads) == len(groups) > 0
    decided = store.query(
        db, "SELECT winner FROM winners WHERE run_id = ? AND decided", [swept]
    ).winner
    assert all(f": {w}" in result.stdout for w in set(decided))


@pytest.mark.mpi
def test_crossovers_and_analyze_refuse_an_unknown_run(
    capsys: pytest.CaptureFixture, calibrated: tuple[Path, dict]
) -> None:
    db, _ = calibrated
    for command in ("crossovers", "analyze"):
        code, err = cli_error(capsys, command, "no-such-run", "--store", str(db))
        assert code == 2 and "no run 'no-such-run'" in err


@pytest.mark.mpi
def test_analyze_recomputes_without_duplicating(calibrated: tuple[Path, dict], swept: str) -> None:
    db, _ = calibrated
    count = "SELECT count(*) AS n FROM predictions WHERE run_id = ?"
    before = store.query(db, count, [swept]).n.item()
    result = run_cli("analyze", swept, "--store", str(db))
    assert result.returncode == 0, result.stderr
    assert f"{before} predictions" in result.stdout
    assert store.query(db, count, [swept]).n.item() == before


@pytest.mark.mpi
def test_the_command_line_stays_quiet_and_complete(
    calibrated: tuple[Path, dict], swept: str
) -> None:
    """`runs` lists ops, algorithms and a duration with no None; resuming a complete run says
    there is nothing to measure and leaves it as it was; a reader that leaves early (`| head`)
    gets no traceback."""
    db, _ = calibrated
    listing = run_cli("runs", "--store", str(db))
    assert listing.returncode == 0 and "None" not in listing.stdout
    assert {"ops", "algorithms", "duration"} <= set(listing.stdout.split())
    before = store.get_run(db, swept)
    again = run_cli("sweep", "--resume", swept, "--store", str(db))
    assert again.returncode == 0 and "nothing to measure" in again.stdout
    after = store.get_run(db, swept)
    assert (after["status"], after["finished_at"]) == (before["status"], before["finished_at"])
    shell = subprocess.run(
        f"{sys.executable} -m runners.cli query 'SELECT * FROM range(200000)' --max-rows 200000 "
        f"--store {db} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert shell.stdout.strip() == "range"
    assert "Traceback" not in shell.stderr and shell.stderr == ""


@pytest.mark.mpi
def test_export_writes_every_table_of_the_run_with_its_calibrations(
    calibrated: tuple[Path, dict], swept: str, tmp_path: Path
) -> None:
    """One file per table; the calibrations the run's predictions refer to come along."""
    from runners.store.reports import EXPORTED_TABLES

    db, cal = calibrated
    result = run_cli("export", swept, "--output", str(tmp_path), "--store", str(db))
    assert result.returncode == 0, result.stderr
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {f"{swept}_{t}.csv" for t in (*EXPORTED_TABLES, "calibrations")}
    exported = set(pd.read_csv(tmp_path / f"{swept}_calibrations.csv").calibration_id)
    referred = set(
        store.query(
            db, "SELECT DISTINCT calibration_id FROM predictions WHERE run_id = ?", [swept]
        ).calibration_id
    )
    assert referred <= exported and cal["calibration_id"] in exported
    points = pd.read_csv(tmp_path / f"{swept}_points.csv")
    assert set(points.run_id) == {swept} and len(points) > 0


def test_predict_all_ranks_every_algorithm_that_can_run(capsys: pytest.CaptureFixture) -> None:
    """--algorithm all: every modelled MPICH algorithm that can run the point, fastest first
    (Open MPI's run the same schedules; MPICH's node-aware compositions have no model); a
    noncommutative op leaves out the algorithms that need a commutative one."""
    from runners.domain.libraries.catalog import ALGORITHMS as EVERY

    ALGORITHMS = {
        name: spec
        for name, spec in EVERY.items()
        if spec.runs_on == "mpich" and spec.collective == "allreduce"
        and not name.startswith("mpi:composition_")
    }  # fmt: skip
    params = ("--alpha", "2e-6", "--beta", "1e-10", "--gamma", "8e-11", "--json")
    point = ("predict", "--algorithm", "all", "--ranks", "3", "--bytes", "64K", *params)
    ranked = cli_json(capsys, *point)
    assert {r["algorithm"] for r in ranked} == set(ALGORITHMS)
    times = [r["predicted_s"] for r in ranked]
    assert times == sorted(times) and ranked[0]["bytes"] == 65536
    odd = cli_json(capsys, *point, "--op", "first_nonzero")
    assert (
        {r["algorithm"] for r in odd}
        == {name for name, spec in ALGORITHMS.items() if not spec.commutative_only}
        != set(ALGORITHMS)
    )


@pytest.mark.parametrize(
    ("collective", "algorithm", "messages", "sent", "reduced"),
    [  # Thakur, Rabenseifner & Gropp's closed forms at p = 8, n = 1 MiB (README's table)
        ("reduce_scatter", "recursive_halving", 3, 7 / 8, 7 / 8),
        ("reduce_scatter", "pairwise", 7, 7 / 8, 7 / 8),
        ("allgather", "bruck", 3, 7 / 8, 0),
        ("bcast", "scatter_allgather", 3 + 7, 2 * 7 / 8, 0),
        ("reduce", "rabenseifner", 6, 2 * 7 / 8, 7 / 8),
        ("bcast", "mpi:binomial", 3, 3, 0),
    ],
)
def test_predict_names_algorithms_within_a_collective(
    capsys: pytest.CaptureFixture,
    collective: str,
    algorithm: str,
    messages: int,
    sent: float,
    reduced: float,
) -> None:
    """`predict --collective C --algorithm A`: A of C, priced by its schedule; a collective
    that reduces nothing has no reduction term."""
    point = ("--ranks", "8", "--bytes", "1M", "--alpha", "2e-6", "--beta", "1e-10", "--gamma")
    got = cli_json(
        capsys,
        "predict",
        "--collective",
        collective,
        "--algorithm",
        algorithm,
        *point,
        "1e-10",
        "--json",
    )
    assert got["collective"] == collective and got["algorithm"].startswith(f"{collective}.")
    n = 2**20
    assert (got["messages"], got["bytes_sent"], got["bytes_reduced"]) == pytest.approx(
        (messages, sent * n, reduced * n)
    )
    assert got["reduction_s"] == pytest.approx(reduced * n * 1e-10)


def test_predict_ranks_a_collectives_own_algorithms(capsys: pytest.CaptureFixture) -> None:
    point = ("--ranks", "4", "--bytes", "64K", "--alpha", "2e-6", "--beta", "1e-10")
    ranked = cli_json(
        capsys,
        "predict",
        "--collective",
        "allgather",
        "--algorithm",
        "all",
        *point,
        "--gamma",
        "0",
        "--json",
    )
    assert {r["collective"] for r in ranked} == {"allgather"}
    assert {"allgather.ring", "allgather.bruck", "allgather.mpi"} <= {
        r["algorithm"] for r in ranked
    }
    bad = ["predict", "--collective", "bcast", "--algorithm", "bruck", *point, "--gamma", "0"]
    assert cli_main(bad) == 2
