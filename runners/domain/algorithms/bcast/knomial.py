"""K-nomial tree broadcast from rank 0 (radix k): ceil(log_k p) rounds, each parent sending
the whole vector to up to k-1 children a round, one after another. Radix 2 is the binomial
tree; a larger radix trades rounds for sends a round (MPICH's MPIR_CVAR_BCAST_TREE_KVAL,
Open MPI's coll_tuned_bcast_algorithm_knomial_radix)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.parameters import Family, Parameter
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Schedule, Step

RADIX = Parameter("radix", default="2", minimum=2, auto=True)
SHADES = ("#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#9467bd")  # by radix


def levels(size: int, radix: int) -> int:
    """The tree's depth: the fewest levels L with radix^L >= size."""
    depth, reach = 0, 1
    while reach < size:
        depth, reach = depth + 1, reach * radix
    return depth


def parent_level(rank: int, radix: int) -> int | None:
    """The level at which `rank` hangs from its parent (its lowest nonzero base-k digit's
    position); None for the root."""
    if rank == 0:
        return None
    level = 0
    while rank % radix == 0:
        rank, level = rank // radix, level + 1
    return level


def parent(rank: int, radix: int, level: int) -> int:
    """The rank `rank` hangs from at `level`: its digit there set to 0."""
    step = radix**level
    return rank - (rank // step % radix) * step


def children(rank: int, size: int, radix: int, level: int) -> list[int]:
    """`rank`'s children at `level`, in rank order: rank + d * radix^level for d = 1..k-1."""
    step = radix**level
    return [rank + d * step for d in range(1, radix) if rank + d * step < size]


def down_steps(rank: int, size: int, radix: int, count: int, first: int = 0) -> list[Step]:
    """The broadcast from rank 0, rounds numbered from `first`: a rank receives the whole
    vector from its parent, then sends it to its children, the farthest level first."""
    depth, whole = levels(size, radix), (0, count)
    below = parent_level(rank, radix)
    steps = []
    if below is not None:
        up = parent(rank, radix, below)
        steps.append(Step((CORE, first + depth - 1 - below), "broadcast", recv_from=up,
                          recv=whole))  # fmt: skip
    for level in reversed(range(depth if below is None else below)):
        for child in children(rank, size, radix, level):
            key = (CORE, first + depth - 1 - level)
            steps.append(Step(key, "broadcast", send_to=child, send=whole))
    return steps


@lru_cache(maxsize=64)
def schedule_for(radix: int) -> Schedule:
    """The k-nomial broadcast of one radix as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        return tuple(down_steps(rank, size, radix, count))

    schedule.__doc__ = f"k-nomial broadcast from rank 0, radix {radix}"
    return schedule


def shade(radix: int) -> str:
    """A colour per radix, so two members drawn together differ."""
    return SHADES[(radix - 2) % len(SHADES)]


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    radix = int(values["radix"])
    return AlgorithmSpec(
        name,
        f"k-nomial tree from rank 0, radix {radix}: ceil(log_{radix} p) rounds, up to "
        f"{radix - 1} sends of the whole vector a round",
        collective="bcast",
        color=shade(radix),
        short=f"k{radix}",
        schedule=schedule_for(radix),
        other_p="{alg} runs an unbalanced tree where p is no power of its radix",
    )


FAMILY = Family(
    "bcast.knomial",
    (RADIX,),
    build,
    help="k-nomial tree broadcast (radix k: fewer rounds, more sends a round)",
    example_values=(("radix", "4"),),
)
