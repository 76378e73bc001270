"""Binomial-tree reduce to rank 0 followed by a binomial-tree broadcast from rank 0."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from runners.domain.algorithms.bcast.binomial_tree import tree_steps
from runners.domain.algorithms.reduce import binomial_tree as reduce_tree
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Step


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Binomial-tree reduce + binomial-tree broadcast, for any p.

    Reduce (reduce.binomial_tree's schedule): in round k a rank whose lowest set bit is 2^k
    sends its partial result (covering ranks [r, r + 2^k)) to r - 2^k, which appends it on
    the right, so noncommutative ops keep rank order. Broadcast (bcast.binomial_tree's): the
    same tree in reverse, ceil(log2 p) more rounds.
    """
    depth = (size - 1).bit_length()
    whole = (0, count)
    down = [
        replace(s, round=(CORE, depth + s.round[1]))
        for s in tree_steps(rank, size, lambda a, b: whole, "broadcast")
    ]
    return (*reduce_tree.schedule(rank, size, count), *down)


DESCRIPTOR = AlgorithmSpec(
    "binomial_tree",
    "binomial-tree reduce to rank 0, then binomial-tree broadcast",
    color="#ff7f0e",
    short="tree",
    schedule=schedule,
    other_p="{alg} runs an unbalanced tree: ceil(log2 p) rounds on the critical path "
    "while some ranks idle",
)
