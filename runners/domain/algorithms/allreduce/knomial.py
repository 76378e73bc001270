"""K-nomial allreduce (radix k): a k-nomial reduce to rank 0, then a k-nomial broadcast from
it, 2 ceil(log_k p) rounds (MPICH's tree allreduce with MPIR_CVAR_ALLREDUCE_TREE_KVAL = k).
Radix 2 is binomial_tree's schedule."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.bcast.knomial import RADIX, down_steps, levels, shade
from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.reduce.knomial import up_steps
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import Schedule, Step


@lru_cache(maxsize=64)
def schedule_for(radix: int) -> Schedule:
    """The k-nomial reduce + broadcast of one radix as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        depth = levels(size, radix)
        return (*up_steps(rank, size, radix, count), *down_steps(rank, size, radix, count, depth))

    schedule.__doc__ = f"k-nomial reduce + broadcast, radix {radix}"
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    radix = int(values["radix"])
    return AlgorithmSpec(
        name,
        f"k-nomial reduce to rank 0, then k-nomial broadcast, radix {radix}: "
        f"2 ceil(log_{radix} p) rounds, up to {radix - 1} messages a round",
        color=shade(radix),
        short=f"k{radix}",
        schedule=schedule_for(radix),
        other_p="{alg} runs an unbalanced tree where p is no power of its radix",
    )


FAMILY = Family(
    "knomial",
    (RADIX,),
    build,
    help="k-nomial reduce + broadcast allreduce (radix k)",
    example_values=(("radix", "4"),),
)
