"""K-nomial tree reduce to rank 0 (radix k): ceil(log_k p) rounds, each parent receiving and
reducing up to k-1 children's partial results a round, in rank order (noncommutative ops
kept). Radix 2 is the binomial tree."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.bcast.knomial import (
    RADIX,
    children,
    levels,
    parent,
    parent_level,
    shade,
)
from runners.domain.algorithms.parameters import Family
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Schedule, Step


def up_steps(rank: int, size: int, radix: int, count: int) -> list[Step]:
    """The reduce to rank 0: at level i a rank takes its children's partial results (each
    covering the ranks right after what it holds, child by child) onto the right of its own,
    then sends its result to its parent at the level it hangs from."""
    whole = (0, count)
    below = parent_level(rank, radix)
    steps = [
        Step((CORE, level), "reduce", recv_from=child, recv=whole, reduce=True, mine_is_left=True)
        for level in range(levels(size, radix) if below is None else below)
        for child in children(rank, size, radix, level)
    ]
    if below is not None:
        up = parent(rank, radix, below)
        steps.append(Step((CORE, below), "reduce", send_to=up, send=whole))
    return steps


@lru_cache(maxsize=64)
def schedule_for(radix: int) -> Schedule:
    """The k-nomial reduce of one radix as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        return tuple(up_steps(rank, size, radix, count))

    schedule.__doc__ = f"k-nomial reduce to rank 0, radix {radix}"
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    radix = int(values["radix"])
    return AlgorithmSpec(
        name,
        f"k-nomial tree to rank 0, radix {radix}: ceil(log_{radix} p) rounds, up to "
        f"{radix - 1} partial results received and reduced a round, in rank order",
        collective="reduce",
        color=shade(radix),
        short=f"k{radix}",
        schedule=schedule_for(radix),
        other_p="{alg} runs an unbalanced tree where p is no power of its radix",
    )


FAMILY = Family(
    "reduce.knomial",
    (RADIX,),
    build,
    help="k-nomial tree reduce (radix k: fewer rounds, more partial results a round)",
    example_values=(("radix", "4"),),
)
