"""The same grid on several placements side by side: each size's winner per placement, and
where each placement's decided winner changes."""

from __future__ import annotations

from runners.domain.verdict.placements import changes, placement_label, placements_text


def _row(nbytes: int, winner: str, runner_up: str = "ring", decided: bool = True) -> dict:
    cell = {"collective": "allreduce", "ranks": 2, "dtype": "float32", "op": "sum"}
    return cell | {"bytes": nbytes, "winner": winner, "runner_up": runner_up, "decided": decided}


def test_each_placement_gets_a_column_and_its_crossover_line() -> None:
    host = [_row(8, "mpi"), _row(65536, "mpi"), _row(2**21, "ring", "rabenseifner")]
    nodes = [_row(8, "recursive_doubling"), _row(65536, "recursive_doubling", decided=False),
             _row(2**21, "recursive_doubling", decided=False)]  # fmt: skip
    lines = placements_text([(0, "rA", host), (1, "rB", nodes)])
    assert lines[1] == "p=2 float32 sum: one host (rA) | 2 nodes x 1 (rB)"
    assert lines[2].split() == ["8", "B", "mpi", "|", "recursive_doubling"]
    assert "recursive_doubling ~ ring" in lines[3]
    assert lines[-2] == "  one host: mpi -> ring at 2 MiB"
    assert lines[-1] == "  2 nodes x 1: no decided change of winner"


def test_labels_and_changes_skip_ties() -> None:
    assert placement_label(0, 4) == "one host" and placement_label(2, 8) == "4 nodes x 2"
    assert changes({8: "a", 64: "a ~ b", 512: "b", 4096: "b"}) == ["a -> b at 512 B"]


def test_each_placements_run_is_named_by_it() -> None:
    from runners.domain.verdict.placements import placement_name

    assert placement_name(None, 0) == "ranks_per_node=0"
    assert placement_name("bus study", 1) == "bus study · ranks_per_node=1"
    assert len(placement_name("x" * 200, 12)) == 200  # within a name's bound
