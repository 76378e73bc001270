"""Rabenseifner: recursive-halving reduce-scatter, then recursive-doubling allgather."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from mpi4py import MPI

from runners.ranks.algorithms.base import block_bounds, combine, sendrecv
from runners.ranks.algorithms.fold import Fold, FoldedAllreduce


class Rabenseifner(FoldedAllreduce):
    """Reduce-scatter by recursive halving + allgather by recursive doubling.

    The count is cut into pof2 datatype-aligned blocks (the first count % pof2 one element
    larger; empty blocks when count < pof2). Reduce-scatter: in round k (mask 2^k, k rising)
    a rank keeps half of its current block range (the lower half when its core-rank bit k is
    0), sends the other half to core rank XOR 2^k and reduces the half it keeps, the lower
    rank's data as the left operand. The allgather retraces the rounds with falling masks.
    Power-of-two p with equal blocks: 2 log2 p messages, 2 (p-1)/p * n bytes sent and
    (p-1)/p * n bytes reduced on the critical path. Uneven blocks: the largest block sets it.

    Other p: MPICH's fold (see runners.ranks.algorithms.fold) into pof2 core ranks, adding 2
    messages, 2n bytes sent and n bytes reduced: 2 log2(pof2) + 2 messages,
    (2 (pof2-1)/pof2 + 2) * n bytes sent, ((pof2-1)/pof2 + 1) * n bytes reduced.
    Noncommutative ops are supported: each round merges two adjacent runs of ranks in order.
    """

    name = "rabenseifner"

    def _core(
        self,
        comm: MPI.Comm,
        fold: Fold,
        buf: np.ndarray,
        tmp: np.ndarray,
        op: MPI.Op,
        dt: MPI.Datatype,
    ) -> None:
        scatter, gather = schedule(fold, buf.size)
        for partner, give, keep, into, lower in scatter:
            incoming = tmp[into]
            sendrecv(comm, buf[give], partner, incoming, partner, dt)
            combine(op, buf[keep], incoming, mine_is_left=lower)
        for partner, mine, other in gather:
            sendrecv(comm, buf[mine], partner, buf[other], partner, dt)


@lru_cache(maxsize=256)
def schedule(fold: Fold, count: int) -> tuple[tuple, tuple]:
    """This rank's rounds as element ranges, worked out once per (rank, size, count).

    Reduce-scatter rounds are (partner, slice given, slice kept, slice of the scratch buffer
    received into, whether this rank's data is the left operand); allgather rounds are
    (partner, slice sent, slice received). A timed call only slices and sends.
    """
    bounds = block_bounds(count, fold.pof2)
    scatter, (lo, hi) = _reduce_scatter_rounds(fold, bounds)
    return scatter, _allgather_rounds(fold, bounds, lo, hi)


def _reduce_scatter_rounds(fold: Fold, bounds: tuple[int, ...]) -> tuple[tuple, tuple[int, int]]:
    """Halve the owned block range each round; also returns the one block this rank owns."""
    rounds = []
    lo, hi = 0, fold.pof2
    mask = 1
    while mask < fold.pof2:
        partner = fold.real_rank(fold.core_rank ^ mask)
        lower = not fold.core_rank & mask
        mid = (lo + hi) // 2
        keep, give = ((lo, mid), (mid, hi)) if lower else ((mid, hi), (lo, mid))
        kept = slice(bounds[keep[0]], bounds[keep[1]])
        given = slice(bounds[give[0]], bounds[give[1]])
        rounds.append((partner, given, kept, slice(0, kept.stop - kept.start), lower))
        lo, hi = keep
        mask <<= 1
    return tuple(rounds), (lo, hi)


def _allgather_rounds(fold: Fold, bounds: tuple[int, ...], lo: int, hi: int) -> tuple:
    """Double the owned block range each round until every block is here."""
    rounds = []
    mask = fold.pof2 >> 1
    while mask > 0:
        partner = fold.real_rank(fold.core_rank ^ mask)
        width = hi - lo
        other = (hi, hi + width) if not fold.core_rank & mask else (lo - width, lo)
        mine = slice(bounds[lo], bounds[hi])
        rounds.append((partner, mine, slice(bounds[other[0]], bounds[other[1]])))
        lo, hi = min(lo, other[0]), max(hi, other[1])
        mask >>= 1
    return tuple(rounds)
