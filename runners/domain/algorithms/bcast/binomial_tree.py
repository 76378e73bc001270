"""Binomial-tree broadcast from rank 0: ceil(log2 p) rounds of the whole vector."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Step


def tree_steps(
    rank: int, size: int, ranges: Callable[[int, int], tuple[int, int]], phase: str
) -> list[Step]:
    """A binomial tree from rank 0, MPICH's order: a rank whose lowest set bit is 2^k
    receives from rank - 2^k in round depth-1-k, then sends to rank + 2^j for each j < k,
    largest first. `ranges(first, stop)` is what a subtree of ranks [first, stop) gets."""
    depth = (size - 1).bit_length()
    steps: list[Step] = []
    mask = 1
    while mask < size:
        if rank & mask:
            got = ranges(rank, min(rank + mask, size))
            k = mask.bit_length() - 1
            steps.append(Step((CORE, depth - 1 - k), phase, recv_from=rank - mask, recv=got))
            break
        mask <<= 1
    mask >>= 1
    while mask > 0:
        if rank + mask < size:
            sent = ranges(rank + mask, min(rank + 2 * mask, size))
            k = mask.bit_length() - 1
            steps.append(Step((CORE, depth - 1 - k), phase, send_to=rank + mask, send=sent))
        mask >>= 1
    return steps


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Binomial-tree broadcast of the whole vector from rank 0, for any p."""
    return tuple(tree_steps(rank, size, lambda first, stop: (0, count), "broadcast"))


DESCRIPTOR = AlgorithmSpec(
    "bcast.binomial_tree",
    "binomial tree from rank 0: ceil(log2 p) rounds of the whole vector",
    collective="bcast",
    color="#ff7f0e",
    short="tree",
    schedule=schedule,
    other_p="{alg} runs an unbalanced tree: ceil(log2 p) rounds while some ranks idle",
)
