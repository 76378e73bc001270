"""Rabenseifner: recursive-halving reduce-scatter, then recursive-doubling allgather."""

from __future__ import annotations

from runners.domain.algorithms.fold import FOLD_NOTE, Fold, core_parts, folded
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Step, block_bounds


def reduce_scatter_steps(fold: Fold, count: int) -> tuple[list[Step], tuple[int, int]]:
    """Reduce-scatter by recursive halving on the core, and the range of the pof2 blocks
    this core rank holds reduced at the end.

    The count is cut into pof2 datatype-aligned blocks (the first count % pof2 one element
    larger; empty blocks when count < pof2). In round k (mask 2^k, k rising) a rank keeps half
    of its current block range (the lower half when its core-rank bit k is 0), sends the other
    half to core rank XOR 2^k and reduces the half it keeps, the lower rank's data as the left
    operand.
    """
    bounds = block_bounds(count, fold.pof2)
    steps: list[Step] = []
    lo, hi, mask = 0, fold.pof2, 1
    while mask < fold.pof2:
        partner = fold.real_rank(fold.core_rank ^ mask)
        lower = not fold.core_rank & mask
        mid = (lo + hi) // 2
        (lo, hi), give = ((lo, mid), (mid, hi)) if lower else ((mid, hi), (lo, mid))
        kept, given = (bounds[lo], bounds[hi]), (bounds[give[0]], bounds[give[1]])
        k = len(steps)
        steps.append(Step((CORE, k), "reduce-scatter", partner, given, partner, kept, True, lower))
        mask <<= 1
    return steps, (lo, hi)


def _core(fold: Fold, count: int) -> list[Step]:
    """Reduce-scatter by recursive halving (reduce_scatter_steps) + allgather by recursive
    doubling on the core: the allgather retraces the rounds with falling masks."""
    bounds = block_bounds(count, fold.pof2)
    steps, (lo, hi) = reduce_scatter_steps(fold, count)
    mask = fold.pof2 >> 1
    while mask > 0:
        partner = fold.real_rank(fold.core_rank ^ mask)
        width = hi - lo
        other = (hi, hi + width) if not fold.core_rank & mask else (lo - width, lo)
        mine, theirs = (bounds[lo], bounds[hi]), (bounds[other[0]], bounds[other[1]])
        steps.append(Step((CORE, len(steps)), "allgather", partner, mine, partner, theirs))
        lo, hi = min(lo, other[0]), max(hi, other[1])
        mask >>= 1
    return steps


DESCRIPTOR = AlgorithmSpec(
    "rabenseifner",
    "recursive-halving reduce-scatter + recursive-doubling allgather; "
    "non-power-of-two p folds the extra ranks into a power-of-two core",
    color="#2ca02c",
    short="rab",
    schedule=folded(_core),
    parts=core_parts,
    other_p=FOLD_NOTE,
)
