"""Calibration: a real ping-pong on 2 ranks, request checks, and the fit on planted data."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest

from runners import store
from runners.domain.sweep.events import Calibrated, event_line
from runners.jobs.calibrate import (
    CalibrationError,
    calibration_row,
    describe,
    parse_worker_output,
    run_calibration,
    size_range,
)

SIZES = [8, 64, 512, 4096, 32768]
REDUCE_SIZES = [64 * 2**10, 256 * 2**10]
BREAKPOINT = 64 * 2**10


@pytest.fixture(scope="module")
def real_calibration() -> tuple[dict, float]:
    """One small calibration on 2 real ranks, shared by the tests below."""
    started = time.monotonic()
    cal = run_calibration(
        ranks=2,
        sizes=SIZES,
        reduce_sizes=REDUCE_SIZES,
        dtypes=("float32", "int64"),
        ops=("sum", "first_nonzero"),
        budget_s=1.0,
        timeout_s=60,
        progress=lambda _line: None,
    )
    return cal, time.monotonic() - started


@pytest.mark.mpi
def test_real_calibration_fills_every_column(
    real_calibration: tuple[dict, float], calibration_columns: set[str]
) -> None:
    cal, elapsed = real_calibration
    assert set(cal) == calibration_columns
    assert elapsed < 20
    assert cal["source"] == "pingpong"
    assert cal["ranks"] == 2
    assert cal["calibration_id"].startswith("c")
    assert isinstance(cal["created_at"], datetime) and cal["created_at"].tzinfo is None
    assert cal["host"] and "MPICH" in cal["mpi_library"]
    assert (cal["min_bytes"], cal["max_bytes"]) == (min(SIZES), max(SIZES))


@pytest.mark.mpi
def test_real_calibration_parameters_are_physical(real_calibration: tuple[dict, float]) -> None:
    cal, _ = real_calibration
    assert cal["alpha_s"] > 0
    assert cal["beta_s_per_byte"] > 0
    assert 0 <= cal["r_squared"] <= 1
    assert set(cal["gammas"]) == {
        "float32/sum",
        "float32/first_nonzero",
        "int64/sum",
        "int64/first_nonzero",
    }
    assert all(gamma > 0 for gamma in cal["gammas"].values())
    assert all(0 <= seg["r_squared"] <= 1 for seg in cal["segments"])
    assert cal["details"]["pingpong"]["bytes"] == SIZES
    assert all(t > 0 for t in cal["details"]["pingpong"]["one_way_median_s"])


@pytest.mark.mpi
def test_real_calibration_is_json_storable(real_calibration: tuple[dict, float]) -> None:
    cal, _ = real_calibration
    for column in ("breakpoints", "segments", "gammas", "details"):
        assert json.loads(json.dumps(cal[column])) == cal[column]
    assert "gamma" in describe(cal) and "float32/sum" in describe(cal)


def test_one_rank_cannot_ping_pong() -> None:
    with pytest.raises(CalibrationError, match="at least 2 ranks"):
        run_calibration(ranks=1, progress=lambda _line: None)


def test_a_bad_dtype_is_refused_before_launching() -> None:
    started = time.monotonic()
    with pytest.raises(CalibrationError, match="unknown dtype 'float31'"):
        run_calibration(ranks=2, dtypes=("float31",), progress=lambda _line: None)
    assert time.monotonic() - started < 1


def test_a_bad_op_is_refused() -> None:
    with pytest.raises(CalibrationError, match="unknown op"):
        run_calibration(ranks=2, ops=("xor",), progress=lambda _line: None)


@pytest.mark.mpi
def test_a_job_that_outlives_its_timeout_is_reported() -> None:
    started = time.monotonic()
    with pytest.raises(CalibrationError, match="did not finish within 1 s"):
        run_calibration(
            ranks=2,
            sizes=SIZES,
            reduce_sizes=[16 * 2**20],
            dtypes=("float16",),
            ops=("sum", "prod", "max", "min"),
            budget_s=60,
            timeout_s=1,
            progress=lambda _line: None,
        )
    assert time.monotonic() - started < 10


def _planted_line() -> str:
    """A worker line whose one-way times switch protocol at 64 KiB."""
    sizes = size_range(8, 4 * 2**20)
    pingpong = [
        {
            "bytes": n,
            "one_way_median_s": 1e-6 + n * 1e-10 if n < BREAKPOINT else 2e-5 + n * 5e-11,
            "iterations": 100,
            "ci_rel_halfwidth": 0.01,
        }
        for n in sizes
    ]
    reductions = [
        {"dtype": "float32", "op": "sum", "bytes": n, "median_s": 2e-6 + n * 7e-11}
        for n in REDUCE_SIZES
    ]
    event = Calibrated(
        mpi_library="MPICH Version: test",
        mpi_version="MPI 4.1",
        mpi4py_version="4.1.2",
        numpy_version="2.0",
        ranks=2,
        processor_names=["node", "node"],
        settings={"warmup": 10},
        pingpong=pingpong,
        exchange=[],
        copies=[],
        reductions=reductions,
        overheads=[],
        measure_s=1.0,
    )
    return "some startup noise\n" + event_line(event) + "\n"


def test_the_fit_finds_a_planted_protocol_switch(calibration_columns: set[str]) -> None:
    cal = calibration_row(parse_worker_output(_planted_line()), host="node1")
    assert set(cal) == calibration_columns
    assert cal["breakpoints"] == [BREAKPOINT]
    small, large = cal["segments"]
    assert small["alpha_s"] == pytest.approx(1e-6, rel=1e-6)
    assert small["beta_s_per_byte"] == pytest.approx(1e-10, rel=1e-6)
    assert large["alpha_s"] == pytest.approx(2e-5, rel=1e-6)
    assert large["beta_s_per_byte"] == pytest.approx(5e-11, rel=1e-6)
    assert (small["max_bytes"], large["min_bytes"]) == (BREAKPOINT // 2, BREAKPOINT)
    assert cal["gammas"]["float32/sum"] == pytest.approx(7e-11, rel=1e-6)
    assert 0 <= cal["r_squared"] < 1
    assert cal["details"]["piecewise_r_squared"] == pytest.approx(1.0)
    assert "64 KiB" in describe(cal)


def test_output_without_results_is_an_error() -> None:
    with pytest.raises(CalibrationError, match="no results"):
        parse_worker_output('startup\n{"type": "other"}\n')


def test_a_result_with_missing_fields_is_refused_by_name() -> None:
    event = json.loads(_planted_line().splitlines()[-1])
    del event["measure_s"]
    with pytest.raises(CalibrationError, match=r"malformed.*missing \['measure_s'\]"):
        parse_worker_output(json.dumps(event))


def test_size_range() -> None:
    assert size_range(8, 64) == [8, 16, 32, 64]
    assert size_range(8, 100, 4) == [8, 32]


def test_the_row_round_trips_through_the_store(tmp_path) -> None:
    cal = calibration_row(parse_worker_output(_planted_line()), host="node1")
    path = tmp_path / "cal.duckdb"
    store.add_calibration(path, cal)
    stored = store.latest_calibration(path, host=cal["host"])
    assert stored["calibration_id"] == cal["calibration_id"]
    assert stored["breakpoints"] == [BREAKPOINT]
    assert stored["gammas"] == pytest.approx(cal["gammas"])
    assert stored["details"]["pingpong"]["bytes"] == cal["details"]["pingpong"]["bytes"]


def test_launch_calibrations_combine_size_by_size() -> None:
    """The combined calibration takes, per size, the median of the launches' medians."""
    from runners.domain.model.calibration import combined_calibration

    rows = []
    for scale, call in ((1.0, 1e-6), (2.0, 3e-6), (4.0, 2e-6)):
        worker = json.loads(_planted_line().splitlines()[-1])
        for point in worker["pingpong"]:
            point["one_way_median_s"] *= scale
        row = calibration_row(worker, host="node1")
        row["overheads"] = {"hand-written": {"call_s": call, "round_s": scale * 1e-6}}
        rows.append(row)
    combined = combined_calibration(rows, "launches:r1", "launches:r1")
    assert combined["calibration_id"] == combined["source"] == "launches:r1"
    assert combined["details"]["launches"] == 3
    middle = rows[1]["details"]["pingpong"]["one_way_median_s"]
    assert combined["details"]["pingpong"]["one_way_median_s"] == pytest.approx(middle)
    assert combined["overheads"] == {"hand-written": {"call_s": 2e-6, "round_s": 2e-6}}
    assert combined["gammas"]["float32/sum"] == pytest.approx(7e-11, rel=1e-6)
