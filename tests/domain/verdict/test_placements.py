"""The same grid on several placements side by side: each size's winner per placement, and
where each placement's decided winner changes."""

from __future__ import annotations

from runners.domain.verdict.placements import placement_label, placements_text


def _row(nbytes: int, winner: str, runner_up: str = "ring", decided: bool = True) -> dict:
    cell = {"collective": "allreduce", "ranks": 2, "dtype": "float32", "op": "sum"}
    return cell | {"bytes": nbytes, "winner": winner, "runner_up": runner_up, "decided": decided}


def _flip(a: str, b: str, nbytes: float, low: float, high: float) -> dict:
    cell = {"collective": "allreduce", "ranks": 2, "dtype": "float32", "op": "sum"}
    return cell | {"algorithm_a": a, "algorithm_b": b, "kind": "measured", "bytes": nbytes,
                   "low_bytes": low, "high_bytes": high}  # fmt: skip


def test_each_placement_gets_a_column_and_each_pairs_flips_a_line() -> None:
    host = [_row(8, "mpi"), _row(65536, "mpi"), _row(2**21, "ring", "rabenseifner")]
    nodes = [_row(8, "recursive_doubling"), _row(65536, "recursive_doubling", decided=False),
             _row(2**21, "recursive_doubling", decided=False)]  # fmt: skip
    flips = [_flip("ring", "recursive_doubling", 4096, 2048, 8192),
             _flip("recursive_doubling", "ring", 40000, 8192, 65536),
             _flip("mpi", "ring", 2e5, 65536, 2**21)]  # fmt: skip
    lines = placements_text([(0, "rA", host, flips), (1, "rB", nodes, [])])
    assert lines[1] == "p=2 float32 sum: one host (rA) | 2 nodes x 1 (rB)"
    assert lines[2].split() == ["8", "B", "mpi", "|", "recursive_doubling"]
    assert "recursive_doubling ~ ring" in lines[3]
    assert lines[-2] == (
        "  recursive_doubling / ring flip: ~4 KiB [2 KiB..8 KiB], ~39.1 KiB [8 KiB..64 KiB] | none"
    )  # one pair, both its flips, in size order; the other placement has none
    assert lines[-1].startswith("  mpi / ring flip: ~195 KiB")
    alone = placements_text([(0, "rA", host, []), (1, "rB", nodes, [])])
    assert alone[-1] == "  no measured crossover on any placement"


def test_labels() -> None:
    assert placement_label(0, 4) == "one host" and placement_label(2, 8) == "4 nodes x 2"


def test_each_placements_run_is_named_by_it() -> None:
    from runners.domain.verdict.placements import placement_name

    assert placement_name(None, 0) == "ranks_per_node=0"
    assert placement_name("bus study", 1) == "bus study · ranks_per_node=1"
    assert len(placement_name("x" * 200, 12)) == 200  # within a name's bound
