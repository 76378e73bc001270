"""The verdict per group (runners.analysis.verdict) on winners and crossovers rows."""

from __future__ import annotations

from runners.domain.verdict.summary import TIE, Band, bands, change_lines, verdict_lines


def cell(nbytes: int, winner: str, decided: bool = True, runner_up: str = "ring", ranks=2):
    return {
        "ranks": ranks,
        "dtype": "float32",
        "op": "sum",
        "bytes": nbytes,
        "winner": winner,
        "runner_up": runner_up,
        "decided": decided,
    }


def crossing(kind: str, at: float, low=None, high=None, calibration_id=None, ranks=2):
    return {
        "ranks": ranks,
        "dtype": "float32",
        "op": "sum",
        "algorithm_a": "mpi",
        "algorithm_b": "ring",
        "kind": kind,
        "bytes": at,
        "low_bytes": low,
        "high_bytes": high,
        "calibration_id": calibration_id,
    }


CELLS = [
    cell(8, "mpi"),
    cell(64, "mpi"),
    cell(512, "ring", decided=False, runner_up="mpi"),
    cell(4096, "ring"),
    cell(32768, "ring"),
]


def test_sizes_fold_into_bands_of_one_answer() -> None:
    assert bands(CELLS) == [
        Band("mpi", 8, 64),
        Band(TIE, 512, 512, "mpi ~ ring"),
        Band("ring", 4096, 32768),
    ]
    assert [b.describe() for b in bands(CELLS)] == [
        "8 B .. 64 B: mpi",
        "512 B: tie mpi ~ ring",
        "4 KiB .. 32 KiB: ring",
    ]


def test_a_tie_no_launches_can_pair_says_it_cannot_be_decided() -> None:
    """Imported points of one launch each share no two launches to pair: their tie says one
    launch cannot decide it; a tie the launches measured stays a plain tie."""
    cells = [
        cell(8, "ring", decided=False, runner_up="mpi") | {"launches": 0},
        cell(64, "ring", decided=False, runner_up="mpi") | {"launches": 0},
        cell(512, "ring", decided=False, runner_up="mpi") | {"launches": 3},
    ]
    assert [b.describe() for b in bands(cells)] == [
        "8 B .. 64 B: tie mpi ~ ring (one launch: cannot decide)",
        "512 B: tie mpi ~ ring",
    ]


def test_a_change_of_winner_shows_the_measured_interval_beside_the_preferred_prediction() -> None:
    rows = [
        crossing("measured", 1000, 64, 4096),
        crossing("predicted", 9000, calibration_id="fitted:r1"),
        crossing("predicted", 2000, calibration_id="launches:r1"),
    ]
    [line] = change_lines(bands(CELLS), rows, ["launches:r1", "c1", "fitted:r1"])
    assert line.startswith("mpi -> ring: measured between 64 B and 4 KiB")
    assert "predicted at 1.95 KiB (inside) [launches:r1]" in line
    [other] = change_lines(bands(CELLS), rows, ["fitted:r1"])
    assert "predicted at 8.79 KiB [fitted:r1 (fitted on the same points it predicts)]" in other
    assert "inside" not in other
    [none] = change_lines(bands(CELLS), rows[:1])
    assert none.endswith("the model predicts no crossover of this pair")


def test_every_group_has_its_line_and_oversubscribed_ones_say_so() -> None:
    cells = [*CELLS, cell(8, "ring", ranks=4), cell(64, "ring", ranks=4)]
    lines = verdict_lines(cells, [], oversubscribed={4})
    assert (
        lines[0]
        == "p=2 float32 sum: 8 B .. 64 B: mpi; 512 B: tie mpi ~ ring; 4 KiB .. 32 KiB: ring"
    )
    assert lines[1].startswith("    mpi -> ring: between 64 B and 4 KiB (no decided flip)")
    assert lines[2] == "p=4 float32 sum (oversubscribed, more ranks than cores): 8 B .. 64 B: ring"
