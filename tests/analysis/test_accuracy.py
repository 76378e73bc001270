"""The model accuracy report (runners.analysis.accuracy) on points whose errors are known."""

from __future__ import annotations

import pytest

from runners.analysis.accuracy import accuracy_lines, accuracy_rows
from runners.analysis.params import Params
from runners.analysis.points import Point
from runners.domain.model.closed_form import predict

A, B, G = 2e-6, 1e-9, 5e-10
PARAMS = Params("c1", "pingpong", A, B, gammas={"float32/sum": G})


def point(algorithm: str, nbytes: int, error: float, ranks: int = 2) -> Point:
    """A point measured `error` away from the closed form: predicted / measured - 1 = error."""
    predicted = predict(algorithm.removeprefix("mpi:"), ranks, nbytes, A, B, G, 4).total_s
    point_id = f"r/{algorithm}/{ranks}/{nbytes}/float32/sum"
    return Point(
        point_id, algorithm, ranks, nbytes, "float32", "sum", predicted / (1 + error), ranks > 2
    )


def cell(nbytes: int, winner: str, decided: bool = True, ranks: int = 2) -> dict:
    return {
        "ranks": ranks,
        "dtype": "float32",
        "op": "sum",
        "bytes": nbytes,
        "winner": winner,
        "decided": decided,
    }


def test_errors_winners_and_crossovers_by_family_and_placement() -> None:
    points = [
        point("ring", 64, 0.1),
        point("ring", 2**20, -0.3),
        point("recursive_doubling", 64, 0.2),
        point("recursive_doubling", 2**20, 0.0),
        point("mpi:ring", 64, 0.5),
        point("ring", 64, 2.0, ranks=4),
        point("recursive_doubling", 64, 2.0, ranks=4),
    ]
    winners = [
        cell(64, "recursive_doubling"),  # the model's pick at 64 B: fewer messages
        cell(2**20, "recursive_doubling"),  # the model says ring: a miss
        cell(64, "ring", decided=False),  # a tie judges nothing
        cell(64, "ring", ranks=4),
    ]
    flips = [
        {
            "ranks": 2,
            "dtype": "float32",
            "op": "sum",
            "algorithm_a": "recursive_doubling",
            "algorithm_b": "ring",
            "low_bytes": 64,
            "high_bytes": 2**20,
        },
        {
            "ranks": 2,
            "dtype": "float32",
            "op": "sum",
            "algorithm_a": "ring",
            "algorithm_b": "mpi:ring",
            "low_bytes": 64,
            "high_bytes": 2**20,
        },  # one model: skipped
    ]
    rows = {
        (r["placement"], r["family"]): r for r in accuracy_rows(points, [PARAMS], winners, flips)
    }
    assert {r["variant"] for r in rows.values()} == {"textbook"}
    hand = rows["dedicated", "hand-written"]
    assert hand["points"] == 4
    assert hand["median_abs_error"] == pytest.approx(0.15)  # of 0.1, 0.3, 0.2, 0.0
    forced = rows["dedicated", "forced library"]
    assert forced["median_abs_error"] == pytest.approx(0.5)
    everything = rows["dedicated", "all"]
    assert (everything["decided_cells"], everything["winner_share"]) == (2, 0.5)
    assert (everything["measured_crossovers"], everything["crossover_inside_share"]) == (1, 1.0)
    apart = rows["oversubscribed", "all"]
    assert apart["points"] == 2 and apart["median_abs_error"] == pytest.approx(2.0)
    assert apart["decided_cells"] == 1
    lines = accuracy_lines(list(rows.values()))
    assert any("dedicated" in line and "50% of 2" in line for line in lines)


def test_a_run_on_several_nodes_is_not_priced_with_one_nodes_contention() -> None:
    """The most complete variant is contention unless the run's allocation spans nodes."""
    from runners.analysis.run_analysis import variant_for

    def run(nodes: str | None) -> dict:
        inherited = {} if nodes is None else {"SLURM_JOB_NUM_NODES": nodes}
        return {"environment": {"inherited": inherited}}

    assert variant_for(run(None)) == variant_for(run("1")) == "contention"
    assert variant_for(run("3")) == "overheads"


def test_a_group_on_several_hosts_is_not_priced_with_one_nodes_contention() -> None:
    """Where the launches recorded their ranks' hosts, the variant is per group: only the
    group that spanned two hosts stops at overheads, even inside a one-node allocation."""
    from runners.analysis.run_analysis import variant_for

    run = {"environment": {"inherited": {"SLURM_JOB_NUM_NODES": "3"}}}
    probes = [
        {"ranks": 2, "nodes": 1, "ranks_per_node": 2, "hosts": "a"},
        {"ranks": 8, "nodes": 2, "ranks_per_node": 4, "hosts": "a,b"},
    ]
    assert variant_for(run, probes, 2) == "contention"
    assert variant_for(run, probes, 8) == "overheads"


@pytest.mark.parametrize("algorithm", ["mpi", "mpi:tuned"])
def test_the_library_without_a_schedule_leaves_out_what_cannot_run_the_op(algorithm) -> None:
    """The autotuned mpi and mpi:tuned are library_min: for a noncommutative op the fastest of
    recursive doubling and the tree only (ring and Rabenseifner need a commutative op)."""
    from runners.analysis.points import predict_with

    params = Params("c1", "pingpong", A, B, gammas={"float32/first_nonzero": G, "float32/sum": G})
    n = 1 << 20
    for op, commutative in (("first_nonzero", False), ("sum", True)):
        got = predict_with(params, algorithm, 4, n, "float32", op)
        want = predict("library_min", 4, n, A, B, G, 4, commutative=commutative)
        assert got.total_s == pytest.approx(want.total_s)
    noncommutative = predict_with(params, algorithm, 4, n, "float32", "first_nonzero").total_s
    assert noncommutative > predict_with(params, algorithm, 4, n, "float32", "sum").total_s
