"""MPICH's tree allreduce forced to a shape collsweep writes itself, each proven rank by rank
(the counting user op's calls match the schedule's reductions: tests/libraries/
test_library_forcing.py), so that schedule models it:

- `mpi:knomial(radix=k)`: a k-nomial tree (MPIR_CVAR_ALLREDUCE_TREE_TYPE = knomial_2,
  MPIR_CVAR_ALLREDUCE_TREE_KVAL = k), exactly `knomial(radix=k)`. MPICH's default tree type,
  knomial_1, numbers the same tree in another order (the largest subtrees first).
- `mpi:chain(segment=b)`: a 1-ary tree (a chain) pipelined in chunks of b bytes (TREE_TYPE =
  kary, TREE_KVAL = 1, MPIR_CVAR_ALLREDUCE_TREE_PIPELINE_CHUNK_SIZE = b), exactly
  `chain(segment=b)`'s reductions (the remainder in the first chunk, as MPICH cuts it).

And its recursive multiplying of radix k, `mpi:recursive_multiplying(radix=k)`
(MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL = k), exactly `recursive_multiplying(radix=k)`.
"""

from __future__ import annotations

from collections.abc import Mapping

from runners.domain.algorithms.allreduce import chain, knomial, recursive_multiplying
from runners.domain.algorithms.bcast.knomial import RADIX, shade
from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.segments import SEGMENT
from runners.domain.collectives.descriptor import AlgorithmSpec

TREE_TYPE_CVAR, TREE_KVAL_CVAR = "MPIR_CVAR_ALLREDUCE_TREE_TYPE", "MPIR_CVAR_ALLREDUCE_TREE_KVAL"
CHUNK_CVAR = "MPIR_CVAR_ALLREDUCE_TREE_PIPELINE_CHUNK_SIZE"
TREE_TYPE = "knomial_2"
INTRA = "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=tree"


def _settings_text(settings: tuple[tuple[str, int | str], ...]) -> str:
    return ", ".join(f"{name}={value}" for name, value in settings)


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one k-nomial member (parameters.Family.build)."""
    radix = int(values["radix"])
    settings = ((TREE_TYPE_CVAR, TREE_TYPE), (TREE_KVAL_CVAR, radix))
    return AlgorithmSpec(
        name,
        f"MPI_Allreduce forced to MPICH's tree, k-nomial ({TREE_TYPE}) of radix {radix}, via "
        f"{INTRA}, {_settings_text(settings)}",
        library=True,
        forced="tree",
        color=shade(radix),
        short=f"mpi:k{radix}",
        modelled_by=knomial.FAMILY.member_name(values),
        settings=settings,
    )


def build_chain(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one pipelined chain member (parameters.Family.build)."""
    segment = values["segment"]
    settings = ((TREE_TYPE_CVAR, "kary"), (TREE_KVAL_CVAR, 1),
                (CHUNK_CVAR, SEGMENT.number(segment)))  # fmt: skip
    return AlgorithmSpec(
        name,
        f"MPI_Allreduce forced to MPICH's tree as a chain pipelined in {segment} chunks, via "
        f"{INTRA}, {_settings_text(settings)}",
        library=True,
        forced="tree",
        color="#2ca02c",
        short=f"mpi:chain{segment}",
        modelled_by=chain.FAMILY.member_name(values),
        settings=settings,
        commutative_only=True,  # tried: a noncommutative op aborts it (an internal error)
    )


FAMILY = Family(
    "mpi:knomial",
    (RADIX,),
    build,
    help="MPICH's tree allreduce forced to a k-nomial tree of radix k (knomial(radix=k))",
    example_values=(("radix", "4"),),
)

MULTIPLYING_KVAL_CVAR = "MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL"


def build_multiplying(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one recursive multiplying member (parameters.Family.build)."""
    radix = int(values["radix"])
    settings = ((MULTIPLYING_KVAL_CVAR, radix),)
    return AlgorithmSpec(
        name,
        f"MPI_Allreduce forced to MPICH's recursive multiplying of radix {radix}, via "
        f"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_multiplying, {_settings_text(settings)}",
        library=True,
        forced="recursive_multiplying",
        color="#393b79",
        short=f"mpi:rm{radix}",
        modelled_by=recursive_multiplying.FAMILY.member_name(values),
        settings=settings,
        power_of=radix,
    )


MULTIPLYING_FAMILY = Family(
    "mpi:recursive_multiplying",
    (RADIX,),
    build_multiplying,
    help="MPICH's recursive multiplying allreduce of radix k (recursive_multiplying(radix=k))",
    example_values=(("radix", "4"),),
)

CHAIN_FAMILY = Family(
    "mpi:chain",
    (SEGMENT,),
    build_chain,
    help="MPICH's tree allreduce forced to a chain pipelined in chunks of b bytes "
    "(chain(segment=b))",
    example_values=(("segment", "64KiB"),),
)
