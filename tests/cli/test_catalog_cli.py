"""`collsweep algorithms`: the catalog as other tools read it, from the descriptors."""

from __future__ import annotations

import json

import pytest

from runners.cli.main import main
from runners.domain.libraries.catalog import ALGORITHMS


def test_the_catalog_lists_every_algorithm_once_with_stable_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--json: one object per catalog entry, the stable keys, each kind and library as its
    descriptor says; --library keeps that library's."""
    assert main(["algorithms", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    rows = {row["name"]: row for row in listed if row["kind"] != "family"}
    assert list(rows) == list(ALGORITHMS)
    families = [row for row in listed if row["kind"] == "family"]
    assert [row["schedule"] for row in families] == [
        "hierarchical", "knomial", "bcast.knomial", "reduce.knomial", "mpi:knomial",
        "recursive_multiplying", "mpi:recursive_multiplying", "chain",
        "bcast.chain", "reduce.chain", "bcast.binary", "two_tree", "bcast.two_tree",
        "segmented_ring", "mpi:chain", "reduce.openmpi:chain",
        "bcast.openmpi:chain", "bcast.openmpi:binary", "bcast.openmpi:knomial",
        "openmpi:segmented_ring", "allgather.bruck",
    ]  # fmt: skip
    assert families[0]["name"].startswith("hierarchical(node=N,leaders=")
    assert families[2]["name"] == "bcast.knomial(radix=N)"
    assert families[2]["collective"] == "bcast"
    assert all(
        {"name", "library", "collective", "kind", "schedule", "runnable"} <= set(r)
        for r in rows.values()
    )
    assert rows["ring"] | {"description": ""} == {
        "name": "ring",
        "library": None,
        "collective": "allreduce",
        "kind": "hand-written",
        "schedule": "ring",
        "description": "",
        "runnable": True,
    }
    assert (rows["ring@impi"]["library"], rows["ring@impi"]["schedule"]) == ("impi", "ring")
    assert [rows[n]["kind"] for n in ("mpi", "impi:ring", "openmpi:tuned", "impi:tuned")] == [
        "autotuned",
        "forced",
        "tuned",
        "tuned",
    ]
    assert rows["impi:ring"]["schedule"] == "ring" and rows["impi:knomial"]["schedule"] is None
    assert main(["algorithms", "--library", "impi", "--json"]) == 0
    mine = json.loads(capsys.readouterr().out)
    assert {r["library"] for r in mine} == {"impi"} and len(
        mine
    ) == 17 + 4 + 9  # + its own call and presets
    assert sum(r["collective"] != "allreduce" for r in mine) == 4 + 9  # other collectives


@pytest.mark.parametrize("argv", [["--library", "ompi"], ["--collective", "alltoall"]])
def test_an_unknown_library_or_collective_is_one_line_and_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["algorithms", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown" in err[0]


def test_each_collective_lists_its_own_algorithms(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["algorithms", "--collective", "bcast", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rows} == {
        "bcast.binomial_tree",
        "bcast.knomial(radix=N)",
        "bcast.chain(segment=SIZE)",
        "bcast.binary(segment=SIZE)",
        "bcast.two_tree(segment=SIZE)",
        "bcast.scatter_allgather",
        "bcast.mpi",
        "bcast.mpi:binomial",
        "bcast.mpi:scatter_ring_allgather",
        "bcast.mpi:tuned",
        "bcast.openmpi",
        "bcast.openmpi:binomial",
        "bcast.openmpi:scatter_allgather_ring",
        "bcast.openmpi:chain(segment=SIZE)",
        "bcast.openmpi:binary(segment=SIZE)",
        "bcast.openmpi:knomial(radix=N)",
        "bcast.openmpi:tuned",
        "bcast.impi",
        "bcast.impi:binomial",
        "bcast.nccl",
        "bcast.nccl:ring",
    }
    forced = {r["name"]: r["schedule"] for r in rows if r["kind"] == "forced"}
    assert forced == {
        "bcast.mpi:binomial": "bcast.binomial_tree",
        "bcast.mpi:scatter_ring_allgather": "bcast.scatter_allgather",
        "bcast.openmpi:binomial": "bcast.binomial_tree",
        "bcast.openmpi:scatter_allgather_ring": "bcast.scatter_allgather",
        "bcast.impi:binomial": "bcast.binomial_tree",
        "bcast.nccl:ring": None,  # NCCL's pipelined chain: no schedule models it
    }
    assert {r["collective"] for r in rows} == {"bcast"}


def test_nccls_entries_are_listed_as_imported_only(capsys: pytest.CaptureFixture[str]) -> None:
    """NCCL's entries (the names of imported nccl-tests points): its own call and its forced
    ring and tree, each kind as its descriptor says, not runnable, the description saying
    imported only and whether a schedule models it (its ring: the catalog's ring)."""
    assert main(["algorithms", "--library", "nccl", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert {r["runnable"] for r in rows.values()} == {False}
    assert all("imported only" in r["description"] for r in rows.values())
    kinds = {
        n: (r["kind"], r["schedule"]) for n, r in rows.items() if r["collective"] == "allreduce"
    }
    assert kinds == {
        "nccl": ("autotuned", None),
        "nccl:ring": ("forced", "ring"),
        "nccl:tree": ("forced", None),
    }
    assert rows["allgather.nccl:ring"]["schedule"] == "allgather.ring"
    assert "not modelled" in rows["nccl:tree"]["description"]
    assert main(["algorithms", "--json"]) == 0
    runnable = {r["name"]: r["runnable"] for r in json.loads(capsys.readouterr().out)}
    assert [n for n, ok in runnable.items() if not ok] == list(rows)
