"""The assumption checks of a run on emulated nodes: the placement MPICH saw against the one
asked for, bytes over the network, and the network as a shared link."""

from __future__ import annotations

from typing import Any

from runners.domain.nodes.placement import Placement
from runners.domain.verdict.nodes import node_checks


def probe(launch: int, moment: str, node_map: str, network_bytes: int | None) -> dict[str, Any]:
    ranks = node_map.count(",") + 1
    job = f"ranks={ranks} config=default"
    return {"job": job, "ranks": ranks, "launch": launch, "moment": moment,
            "node_map": node_map, "network_bytes": network_bytes}  # fmt: skip


def states(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {row["name"]: row["state"] for row in rows}


def test_ranks_on_the_nodes_asked_for_with_bytes_between_them_hold() -> None:
    probes = [probe(0, "start", "0,0,1,1", 100), probe(0, "end", "0,0,1,1", 5_000_000)]
    rows = node_checks(Placement(2), "bandwidth=10Gbit", probes)
    assert states(rows) == {"emulated_nodes": "holds", "shared_network": "violated"}
    assert "4.77 MiB crossed" in rows[0]["detail"] and "10 Gbit/s shared" in rows[1]["detail"]


def test_another_placement_or_a_silent_network_is_violated_and_named() -> None:
    moved = [probe(0, "start", "0,1,0,1", 0), probe(0, "end", "0,1,0,1", 10)]
    wrong = node_checks(Placement(2), "", moved)[0]
    assert wrong["state"] == "violated" and "saw nodes 0,1,0,1 where 0,0,1,1" in wrong["detail"]
    silent = [probe(0, "start", "0,1", 500), probe(0, "end", "0,1", 500)]
    row = node_checks(Placement(1), "", silent)[0]
    assert row["state"] == "violated" and "no byte crossed the network" in row["detail"]


def test_one_node_needs_no_bytes_and_an_unshaped_network_is_unknown() -> None:
    one_node = [probe(0, "start", "0,0", 7), probe(0, "end", "0,0", 7)]
    assert states(node_checks(Placement(2), "", one_node)) == {
        "emulated_nodes": "holds", "shared_network": "unknown",
    }  # fmt: skip


def test_a_run_without_emulated_nodes_has_none_of_these_checks() -> None:
    assert node_checks(Placement(0), "", [probe(0, "start", "0,0", None)]) == []


def test_compositions_on_oversubscribed_cores_are_said_to_measure_spinning() -> None:
    from runners.domain.verdict.nodes import spinning_note

    said = spinning_note(["ring", "mpi:composition_alpha", "mpi:ring"], [2, 4], cores=2)
    assert said is not None and said.startswith("mpi:composition_alpha at p=4:")
    assert spinning_note(["mpi:composition_alpha"], [2], cores=2) is None  # dedicated
    assert spinning_note(["mpi:ring", "impi:ring"], [4], cores=2) is None  # no composition
