"""MPICH's tree allreduce forced to a k-nomial tree of radix k (MPIR_CVAR_ALLREDUCE_TREE_TYPE
= knomial_2, MPIR_CVAR_ALLREDUCE_TREE_KVAL = k): exactly collsweep's `knomial(radix=k)`, rank by
rank (the counting user op's calls match its reductions: tests/libraries/test_library_forcing.py),
so that schedule models it. MPICH's default tree type, knomial_1, numbers the same tree in
another order (the largest subtrees first)."""

from __future__ import annotations

from collections.abc import Mapping

from runners.domain.algorithms.bcast.knomial import RADIX, shade
from runners.domain.algorithms.parameters import Family
from runners.domain.collectives.descriptor import AlgorithmSpec

TREE_TYPE_CVAR, TREE_KVAL_CVAR = "MPIR_CVAR_ALLREDUCE_TREE_TYPE", "MPIR_CVAR_ALLREDUCE_TREE_KVAL"
TREE_TYPE = "knomial_2"


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    radix = int(values["radix"])
    return AlgorithmSpec(
        name,
        f"MPI_Allreduce forced to MPICH's tree, k-nomial ({TREE_TYPE}) of radix {radix}, via "
        f"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=tree, {TREE_TYPE_CVAR}={TREE_TYPE}, "
        f"{TREE_KVAL_CVAR}={radix}",
        library=True,
        forced="tree",
        color=shade(radix),
        short=f"mpi:k{radix}",
        modelled_by=f"knomial(radix={radix})" if radix != int(RADIX.default) else "knomial",
        settings=((TREE_TYPE_CVAR, TREE_TYPE), (TREE_KVAL_CVAR, radix)),
    )


FAMILY = Family(
    "mpi:knomial",
    (RADIX,),
    build,
    help="MPICH's tree allreduce forced to a k-nomial tree of radix k (knomial(radix=k))",
    example_values=(("radix", "4"),),
)
