"""Recursive-halving reduce-scatter; other p fold into a power-of-two core, as MPICH does."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.algorithms.fold import Fold
from runners.domain.collectives.descriptor import AlgorithmSpec, per_rank
from runners.domain.collectives.schedule import CORE, FOLD_OUT, Step, block_bounds


def _first_block(fold: Fold, core_rank: int) -> int:
    """The first of the real ranks' blocks that core rank `core_rank` reduces (core ranks
    below rem stand for two real ranks, so for two blocks)."""
    return 2 * core_rank if core_rank < fold.rem else core_rank + fold.rem


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Recursive halving: in round k (mask pof2 / 2^(k+1)) a core rank swaps half of its
    current range with core rank XOR mask, keeping the half that holds its own block(s).

    Non-power-of-two p: the even rank of each of the first 2*rem ranks sends its whole input
    to its odd neighbour first, which reduces both ranks' blocks in the core and hands the
    even rank its block at the end. Halving pairs distant ranks first, so partial results
    combine out of rank order: commutative ops only.
    """
    fold, bounds = Fold.of(rank, size), block_bounds(count, size)
    steps = fold.fold_in(count)
    if fold.core_rank >= 0 and size > 1:
        steps += _halving(fold, bounds)
    if rank < 2 * fold.rem and rank % 2:
        given = (bounds[rank - 1], bounds[rank])
        steps.append(Step((FOLD_OUT, 0), "send back", send_to=rank - 1, send=given))
    elif rank < 2 * fold.rem:
        mine = (bounds[rank], bounds[rank + 1])
        steps.append(Step((FOLD_OUT, 0), "send back", recv_from=rank + 1, recv=mine))
    return tuple(steps)


def _halving(fold: Fold, bounds: tuple[int, ...]) -> list[Step]:
    def span(lo: int, hi: int) -> tuple[int, int]:
        return bounds[_first_block(fold, lo)], bounds[_first_block(fold, hi)]

    steps: list[Step] = []
    lo, hi, mask = 0, fold.pof2, fold.pof2 >> 1
    while mask:
        partner = fold.core_rank ^ mask
        mid = (lo + hi) // 2
        upper = bool(fold.core_rank & mask)
        (lo, hi), give = ((mid, hi), (lo, mid)) if upper else ((lo, mid), (mid, hi))
        real = fold.real_rank(partner)
        k = len(steps)
        steps.append(Step((CORE, k), "reduce-scatter", real, span(*give), real, span(lo, hi), True))
        mask >>= 1
    return steps


DESCRIPTOR = AlgorithmSpec(
    "reduce_scatter.recursive_halving",
    "recursive halving, log2 p rounds of half the remaining range; "
    "non-power-of-two p folds the extra ranks into a power-of-two core",
    collective="reduce_scatter",
    commutative_only=True,
    color="#2ca02c",
    short="rh",
    schedule=schedule,
    parts=per_rank,
    other_p="{alg} folds the extra ranks into a power-of-two core first (2 more messages, "
    "n more bytes sent and reduced, counted by the model) while the folded ranks idle",
)
