"""MPICH's own choice read from its shipped selection table: the branches csel.c would take."""

from __future__ import annotations

import pytest

from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.libraries.mpich_selection import Call, documented_algorithm, documented_choice


@pytest.mark.parametrize(
    ("call", "function"),
    [
        (Call("allreduce", 256, 8, 2, True), "MPIR_Allreduce_intra_recursive_doubling"),
        (Call("allreduce", 256, 4096, 1024, True), "MPIR_Allreduce_intra_reduce_scatter_allgather"),
        # count < pof2: recursive doubling, whatever the size
        (Call("allreduce", 256, 400, 100, True), "MPIR_Allreduce_intra_recursive_doubling"),
        (Call("allreduce", 256, 4096, 1024, True, built_in_op=False),
         "MPIR_Allreduce_intra_recursive_doubling"),
        (Call("bcast", 4, 2**22, 2**20, True), "MPIR_Bcast_intra_binomial"),  # comm_size < 8
        (Call("bcast", 256, 2**22, 2**20, True), "MPIR_Bcast_intra_scatter_ring_allgather"),
    ],
)  # fmt: skip
def test_the_walk_takes_the_tables_branch(call: Call, function: str) -> None:
    assert documented_algorithm(call) == function


def test_a_choice_is_a_catalog_algorithm_or_said_not_to_be() -> None:
    assert documented_choice(Call("allreduce", 64, 2**20, 2**18, True))[0] in ALGORITHMS
    found, why = documented_choice(Call("bcast", 256, 100_000, 25_000, True))
    assert found is None and "scatter_recursive_doubling_allgather" in why
