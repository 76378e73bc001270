"""Ring reduce-scatter: p-1 steps around the ring, each rank ending with its own block."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.algorithms.allreduce.ring import ring_pass
from runners.domain.collectives.descriptor import AlgorithmSpec, per_rank
from runners.domain.collectives.schedule import Step


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Ring reduce-scatter over p blocks, for any p.

    In step s a rank sends block rank - s - 1 (its own input first, then the partial result it
    reduced in the step before) to its right neighbour and reduces block rank - s - 2 from its
    left, so after p-1 steps block r is complete on rank r. Each partial result travels
    around the ring starting after its block's owner: commutative ops only.
    """
    return ring_pass(rank, size, count, first=rank - 1, phase="reduce-scatter", reduce=True)


DESCRIPTOR = AlgorithmSpec(
    "reduce_scatter.ring",
    "ring reduce-scatter, p-1 steps of one block",
    collective="reduce_scatter",
    commutative_only=True,
    color="#d62728",
    short="ring",
    schedule=schedule,
    parts=per_rank,
    other_p="the ring takes p-1 steps for any p",
    any_p=True,
)
