"""Recursive doubling: log2 p rounds of full-array exchange with partner rank XOR 2^k."""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from runners.ranks.algorithms.base import combine, sendrecv
from runners.ranks.algorithms.fold import Fold, FoldedAllreduce


class RecursiveDoubling(FoldedAllreduce):
    """Recursive-doubling allreduce.

    Power-of-two p: in round k every rank swaps its whole partial result with core rank
    XOR 2^k and reduces, the lower rank's data as the left operand; after log2 p rounds each
    covers all ranks. Critical path: log2 p messages, log2 p * n bytes sent, log2 p * n
    bytes reduced.

    Other p: MPICH's fold (see runners.ranks.algorithms.fold) into pof2 = 2^floor(log2 p) core ranks
    first. Critical path: log2(pof2) + 2 messages, (log2(pof2) + 2) * n bytes sent and
    (log2(pof2) + 1) * n bytes reduced.
    Noncommutative ops are supported: each round merges two adjacent runs of ranks in order.
    """

    name = "recursive_doubling"

    def _core(
        self,
        comm: MPI.Comm,
        fold: Fold,
        buf: np.ndarray,
        tmp: np.ndarray,
        op: MPI.Op,
        dt: MPI.Datatype,
    ) -> None:
        mask = 1
        while mask < fold.pof2:
            partner_core = fold.core_rank ^ mask
            partner = fold.real_rank(partner_core)
            sendrecv(comm, buf, partner, tmp, partner, dt)
            combine(op, buf, tmp, mine_is_left=fold.core_rank < partner_core)
            mask <<= 1
