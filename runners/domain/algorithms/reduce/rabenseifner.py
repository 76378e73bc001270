"""Rabenseifner's reduce: recursive-halving reduce-scatter, then a binomial gather to rank 0."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.algorithms.allreduce.rabenseifner import reduce_scatter_steps
from runners.domain.algorithms.fold import FOLD_NOTE, Fold, core_parts
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, FOLD_OUT, Step, block_bounds


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """The reduce-scatter of Rabenseifner's allreduce (rank order kept), then the allgather's
    rounds retraced towards core rank 0 only: at mask m (falling) a core rank in [m, 2m)
    sends what it holds to core rank - m and is done. Non-power-of-two p folds first, and
    core rank 0 (real rank 1 then) sends the result to rank 0 at the end."""
    fold, whole = Fold.of(rank, size), (0, count)
    steps = fold.fold_in(count)
    if fold.core_rank >= 0 and size > 1:
        scattered, (lo, hi) = reduce_scatter_steps(fold, count)
        steps += scattered + _gather(fold, count, lo, hi, len(scattered))
    if fold.rem and rank == 1:
        steps.append(Step((FOLD_OUT, 0), "to root", send_to=0, send=whole))
    elif fold.rem and rank == 0:
        steps.append(Step((FOLD_OUT, 0), "to root", recv_from=1, recv=whole))
    return tuple(steps)


def _gather(fold: Fold, count: int, lo: int, hi: int, first_round: int) -> list[Step]:
    bounds = block_bounds(count, fold.pof2)
    steps: list[Step] = []
    mask, c = fold.pof2 >> 1, fold.core_rank
    while mask > 0 and c < 2 * mask:
        key = (CORE, first_round + len(steps))
        if c & mask:
            sent = (bounds[lo], bounds[hi])
            steps.append(Step(key, "gather", send_to=fold.real_rank(c - mask), send=sent))
            break
        width = hi - lo
        got = (bounds[hi], bounds[hi + width])
        steps.append(Step(key, "gather", recv_from=fold.real_rank(c + mask), recv=got))
        hi += width
        mask >>= 1
    return steps


DESCRIPTOR = AlgorithmSpec(
    "reduce.rabenseifner",
    "recursive-halving reduce-scatter + binomial gather to rank 0; "
    "non-power-of-two p folds the extra ranks into a power-of-two core",
    collective="reduce",
    color="#2ca02c",
    short="rab",
    schedule=schedule,
    parts=core_parts,
    other_p=FOLD_NOTE,
)
