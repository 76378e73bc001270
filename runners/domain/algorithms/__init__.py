"""One module per algorithm collsweep runs itself: its schedule and its descriptor.

Adding an algorithm: a module in its collective's package (allreduce/, allgather/, ...) with
`DESCRIPTOR = AlgorithmSpec(..., schedule=...)`, listed in HAND_WRITTEN or
OTHER_COLLECTIVES; one with parameters, a `FAMILY` (runners.domain.algorithms.parameters)
listed in FAMILIES. tests/domain/collectives/test_schedules.py and
tests/domain/collectives/test_collective_schedules.py check every entry end to end, and each
family has tests of its own (tests/domain/algorithms).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from runners.domain.algorithms.allgather import bruck
from runners.domain.algorithms.allgather import recursive_doubling as allgather_rd
from runners.domain.algorithms.allgather import ring as allgather_ring
from runners.domain.algorithms.allreduce import (
    binomial_tree,
    chain,
    hierarchical,
    knomial,
    rabenseifner,
    recursive_doubling,
    recursive_multiplying,
    ring,
    segmented_ring,
    two_tree,
)
from runners.domain.algorithms.bcast import binary as bcast_binary
from runners.domain.algorithms.bcast import binomial_tree as bcast_tree
from runners.domain.algorithms.bcast import chain as bcast_chain
from runners.domain.algorithms.bcast import knomial as bcast_knomial
from runners.domain.algorithms.bcast import scatter_allgather
from runners.domain.algorithms.bcast import two_tree as bcast_two_tree
from runners.domain.algorithms.library_trees import CHAIN_FAMILY as MPICH_CHAIN
from runners.domain.algorithms.library_trees import FAMILY as MPICH_KNOMIAL
from runners.domain.algorithms.library_trees import MULTIPLYING_FAMILY as MPICH_MULTIPLYING
from runners.domain.algorithms.openmpi_pipelines import BCAST as OPENMPI_BCAST_CHAIN
from runners.domain.algorithms.openmpi_pipelines import BCAST_BINARY as OPENMPI_BCAST_BINARY
from runners.domain.algorithms.openmpi_pipelines import BCAST_KNOMIAL as OPENMPI_BCAST_KNOMIAL
from runners.domain.algorithms.openmpi_pipelines import REDUCE as OPENMPI_REDUCE_CHAIN
from runners.domain.algorithms.openmpi_pipelines import SEGMENTED_RING as OPENMPI_SEGMENTED
from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.reduce import binomial_tree as reduce_tree
from runners.domain.algorithms.reduce import chain as reduce_chain
from runners.domain.algorithms.reduce import knomial as reduce_knomial
from runners.domain.algorithms.reduce import rabenseifner as reduce_rabenseifner
from runners.domain.algorithms.reduce_scatter import pairwise, recursive_halving
from runners.domain.algorithms.reduce_scatter import ring as reduce_scatter_ring
from runners.domain.collectives.descriptor import AlgorithmSpec

HAND_WRITTEN: tuple[AlgorithmSpec, ...] = (
    recursive_doubling.DESCRIPTOR,
    binomial_tree.DESCRIPTOR,
    rabenseifner.DESCRIPTOR,
    ring.DESCRIPTOR,
)

# The hand-written algorithms of the collectives other than allreduce.
OTHER_COLLECTIVES: tuple[AlgorithmSpec, ...] = (
    reduce_scatter_ring.DESCRIPTOR,
    recursive_halving.DESCRIPTOR,
    pairwise.DESCRIPTOR,
    allgather_ring.DESCRIPTOR,
    allgather_rd.DESCRIPTOR,
    bruck.DESCRIPTOR,
    bcast_tree.DESCRIPTOR,
    scatter_allgather.DESCRIPTOR,
    reduce_tree.DESCRIPTOR,
    reduce_rabenseifner.DESCRIPTOR,
)

# The hand-written algorithms with parameters, by family: each member is named
# `family(key=value,...)` (runners.domain.algorithms.parameters).
FAMILIES: Mapping[str, Family] = {
    family.name: family
    for family in (
        hierarchical.FAMILY,
        knomial.FAMILY,
        bcast_knomial.FAMILY,
        reduce_knomial.FAMILY,
        MPICH_KNOMIAL,
        recursive_multiplying.FAMILY,
        MPICH_MULTIPLYING,
        chain.FAMILY,
        bcast_chain.FAMILY,
        reduce_chain.FAMILY,
        bcast_binary.FAMILY,
        two_tree.FAMILY,
        bcast_two_tree.FAMILY,
        segmented_ring.FAMILY,
        MPICH_CHAIN,
        OPENMPI_REDUCE_CHAIN,
        OPENMPI_BCAST_CHAIN,
        OPENMPI_BCAST_BINARY,
        OPENMPI_BCAST_KNOMIAL,
        OPENMPI_SEGMENTED,
        bruck.FAMILY,
    )
}


def hand_written_on(
    library: str, title: str, tag: str, shades: Mapping[str, str]
) -> tuple[AlgorithmSpec, ...]:
    """collsweep's schedules on another library's point-to-point layer (the same code, another
    transport): `<name>@<library>`, short label `<short>@<tag>`, a colour of its own each,
    modelled by and standing for the MPICH-run original."""
    return tuple(
        replace(
            spec,
            name=f"{spec.name}@{library}",
            description=f"{spec.description}, on {title}'s point-to-point layer",
            short=f"{spec.short or spec.name}@{tag}",
            color=shades[spec.name],
            runs_on=library,
            mirrors=spec.name,
            modelled_by=spec.name,
        )
        for spec in HAND_WRITTEN
    )
