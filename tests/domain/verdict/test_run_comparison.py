"""`collsweep compare`: the rule that calls a point decidedly slower or faster (tested by
simulation), the winner changes, and the command's output and exit status."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from helpers import synthetic

from runners.cli.main import main
from runners.domain.sweep.repetition import Repetition, point_summary
from runners.domain.verdict.run_comparison import (
    FASTER,
    SLOWER,
    WITHIN_NOISE,
    PointTimes,
    ratio_change,
    winner_changes,
)
from runners.store.run_compare import compare_runs, time_span_note

RUN_A, RUN_B = "r20261201-120000-aaaa", "r20261202-120000-bbbb"  # B's ring is 1.3x slower
LAUNCHES, PASSES, SAMPLES = 5, 2, 10


def one_run(rng: np.random.Generator, factor: float) -> PointTimes:
    """A point as a sweep stores it: launches whose machine state scales all their samples
    (lognormal, sigma 0.1), passes within them, samples with noise of their own."""
    seconds, passes, launches = [], [], []
    for launch in range(LAUNCHES):
        effect = rng.lognormal(0.0, 0.1)
        for p in range(PASSES):
            seconds += list(1e-5 * factor * effect * rng.lognormal(0.0, 0.05, SAMPLES))
            passes += [p] * SAMPLES
            launches += [launch] * SAMPLES
    summary = point_summary(Repetition.of(seconds, passes, launches), 4096, 2, 0.05)
    return PointTimes(
        summary["median_s"], summary["interval_low_s"], summary["interval_high_s"], LAUNCHES
    )


def verdicts(factor: float, trials: int, seed: int) -> list[str]:
    """The verdicts of `trials` pairs of runs, B `factor` times A's true time."""
    rng = np.random.default_rng(seed)
    return [ratio_change(one_run(rng, 1.0), one_run(rng, factor)).verdict for _ in range(trials)]


def test_two_runs_of_the_same_machine_are_rarely_called_different() -> None:
    found = verdicts(1.0, 120, seed=1)
    assert found.count(WITHIN_NOISE) / len(found) >= 0.90  # nominal 95%


def test_a_slowdown_of_half_is_found_and_called_slower_never_faster() -> None:
    # five launches 10% apart: the interval of a ratio is about +-25% wide (Student's t
    # with 4 degrees of freedom), so half again as slow is found, a third only often
    found = verdicts(1.5, 60, seed=2)
    assert found.count(SLOWER) / len(found) >= 0.85 and FASTER not in found
    assert verdicts(1.33, 60, seed=2).count(SLOWER) >= 18


def test_the_interval_of_a_ratio_holds_the_ratio_and_reverses_with_the_runs() -> None:
    a, b = PointTimes(1.0, 0.9, 1.2, 5), PointTimes(1.5, 1.3, 1.6, 5)
    there, back = ratio_change(a, b), ratio_change(b, a)
    assert there.low < there.ratio < there.high and there.verdict == SLOWER
    assert back.verdict == FASTER
    assert back.low == pytest.approx(1 / there.high) and back.high == pytest.approx(1 / there.low)


def test_a_point_without_an_interval_decides_nothing() -> None:
    """One imported launch has no interval (NULL, read as NaN or None): even a 2x change
    against it is within noise, never slower or faster."""
    import math

    measured = PointTimes(1.0, 0.99, 1.01, 5)
    for missing in (math.nan, None):
        single = PointTimes(2.0, missing, missing, 1)  # type: ignore[arg-type]
        assert ratio_change(measured, single).verdict == WITHIN_NOISE
        assert ratio_change(single, measured).verdict == WITHIN_NOISE


def test_a_winner_changes_only_where_both_runs_decided_the_cell() -> None:
    def row(nbytes: int, winner: str, decided: bool) -> dict:
        return {"ranks": 2, "dtype": "float32", "op": "sum", "bytes": nbytes, "winner": winner,
                "decided": decided}  # fmt: skip

    a = [row(8, "mpi", True), row(64, "ring", True), row(512, "ring", False), row(4096, "x", True)]
    b = [row(8, "mpi", True), row(64, "rabenseifner", True), row(512, "mpi", True)]
    found = {w.cell[3]: w for w in winner_changes(a, b)}
    assert sorted(found) == [8, 64, 512]  # 4096: only in A
    assert [found[n].changed for n in (8, 64, 512)] == [False, True, False]


def test_compare_reads_the_stored_slowdown_and_fails_on_it(demo_store: Path) -> None:
    done = run_cli("compare", RUN_A, RUN_B, "--store", str(demo_store), "--fail-on", "slower")
    assert done.returncode == 1, done.stderr
    assert "decidedly slower" in done.stdout and "failing (--fail-on)" in done.stdout
    found = compare_runs(demo_store, RUN_A, RUN_B)
    slower = found.points[found.points["change"] == SLOWER]
    assert len(slower) and set(slower["algorithm"]) == {"ring"}
    assert (slower["ratio_low"] > 1).all()
    assert main(["compare", RUN_A, RUN_B, "--store", str(demo_store)]) == 0


def test_compare_json_has_stable_keys_and_agrees_with_the_text(demo_store: Path, capsys) -> None:
    assert main(["compare", RUN_A, RUN_B, "--store", str(demo_store), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert set(found) == {"run_a", "run_b", "summary", "points", "winners", "failures"} | {
        f"run_{x}_{key}" for x in "ab" for key in ("name", "tags")
    }
    assert {"algorithm", "b_over_a", "ratio_low", "ratio_high", "change"} <= set(found["points"][0])
    s = found["summary"]
    assert (
        s["slower"] + s["faster"] + s["within_noise"]
        == s["matching_points"]
        == len(found["points"])
    )
    assert s["slower"] == sum(p["change"] == SLOWER for p in found["points"]) > 0


@pytest.mark.parametrize(
    "args, message",
    [
        ((RUN_A, RUN_A), "same run"),
        ((RUN_A, "r20990101-000000-zzzz"), "no run"),
        ((RUN_A, "../etc"), "no run is named '../etc', and a run id must be"),
        ((RUN_A, RUN_B, "--fail-on", "faster"), "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    demo_store: Path, args: tuple, message: str, capsys
) -> None:
    try:
        status = main(["compare", *args, "--store", str(demo_store)])
    except SystemExit as exc:  # argparse's own refusal
        status = exc.code
    told = capsys.readouterr()
    assert status == 2 and message in told.err and told.out == ""
    errors = [line for line in told.err.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Traceback" not in told.err  # argparse adds its usage above


def test_runs_that_share_no_point_are_exit_2_with_the_reason(tmp_path: Path, capsys) -> None:
    """Even with --fail-on: nothing compared is not a pass."""
    small = {"sizes": (8, 65536), "algorithms": ("ring",), "samples": 5, "launches": 1}
    specs = [
        synthetic.RunSpec(run_id="r1", ranks=(2,), timeout_point=False, **small),
        synthetic.RunSpec(run_id="r2", ranks=(4,), seed=1, timeout_point=False, **small),
    ]
    path = tmp_path / "s.duckdb"
    synthetic.build_store(path, specs)
    assert main(["compare", "r1", "r2", "--fail-on", "slower", "--store", str(path)]) == 2
    told = capsys.readouterr()
    assert told.out == "" and len(told.err.strip().splitlines()) == 1
    assert "r1 and r2 share no point to compare: ranks: A has 2, B has 4" in told.err


def test_the_time_span_note_reads_the_stores_history(demo_store: Path) -> None:
    """The first run has no earlier one to learn from; the second is held against it: how
    long ago it ran and how far apart they measured the points they share."""
    first, second = time_span_note(demo_store, RUN_A), time_span_note(demo_store, RUN_B)
    assert first.startswith("the intervals (+-") and "variation over 3 min" in first
    assert "no earlier run on synth-node shares its points" in first
    assert "; 1 earlier run on this host (1 day before) measured the points" in second
    assert "learn the host's run-to-run variation from 3 runs on" in second
    ratio = compare_runs(demo_store, RUN_A, RUN_B).points["b_over_a"].median()
    shown = float(second.rsplit("up to ", 1)[1].split("x")[0])
    assert shown == pytest.approx(max(ratio, 1 / ratio), rel=0.01)
