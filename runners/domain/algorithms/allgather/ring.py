"""Ring allgather: p-1 steps, each rank passing on the block it received last."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.algorithms.allreduce.ring import ring_pass
from runners.domain.collectives.descriptor import AlgorithmSpec, per_rank
from runners.domain.collectives.schedule import Step


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Ring allgather, for any p: in step s a rank sends block rank - s to its right
    neighbour and receives block rank - s - 1 from its left."""
    return ring_pass(rank, size, count, first=rank, phase="allgather")


DESCRIPTOR = AlgorithmSpec(
    "allgather.ring",
    "ring allgather, p-1 steps of one block",
    collective="allgather",
    color="#d62728",
    short="ring",
    schedule=schedule,
    parts=per_rank,
    other_p="the ring takes p-1 steps for any p",
    any_p=True,
)
