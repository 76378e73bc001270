"""MPICH's fold of a non-power-of-two group into a power-of-two core.

With p = pof2 + rem ranks (pof2 the largest power of two <= p), each of the first 2*rem
ranks pairs up: the even rank 2i sends its whole buffer to the odd rank 2i+1, which reduces it
(rank 2i's data as the left operand) and takes part as core rank i; ranks >= 2*rem become core
rank rank - rem. The core's numbering keeps the ranks' order, so an aligned block of core ranks
always covers a contiguous run of real ranks and noncommutative ops keep rank order. After the
core has the result, each odd rank sends it back to its even partner.

Cost added to the critical path when rem > 0: 2 messages of n bytes (fold in, send back) and
one reduction of n bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from mpi4py import MPI

from runners.ranks.algorithms.base import Allreduce, combine, mpi_type


@dataclass(frozen=True)
class Fold:
    """One rank's place in the folded group."""

    rank: int
    size: int
    pof2: int
    rem: int
    core_rank: int  # -1 when this rank sits out the core phase

    @staticmethod
    @cache
    def of(rank: int, size: int) -> Fold:
        """Where `rank` of a `size`-rank group sits after the fold.

        Cached (the object is immutable): building it in every timed call cost ~0.9 us.
        """
        pof2 = 1 << (size.bit_length() - 1)
        rem = size - pof2
        if rank < 2 * rem:
            core = rank // 2 if rank % 2 else -1
        else:
            core = rank - rem
        return Fold(rank, size, pof2, rem, core)

    def real_rank(self, core_rank: int) -> int:
        """The communicator rank that plays core rank `core_rank`."""
        return core_rank * 2 + 1 if core_rank < self.rem else core_rank + self.rem

    def fold_in(
        self, comm: MPI.Comm, buf: np.ndarray, tmp: np.ndarray, op: MPI.Op, dt: MPI.Datatype
    ) -> None:
        """Pair the first 2*rem ranks: the odd rank ends up holding both ranks' reduction."""
        if self.rank >= 2 * self.rem:
            return
        if self.rank % 2 == 0:
            comm.Send([buf, buf.size, dt], self.rank + 1, 1)
        else:
            comm.Recv([tmp, tmp.size, dt], self.rank - 1, 1)
            combine(op, buf, tmp, mine_is_left=False)

    def fold_out(self, comm: MPI.Comm, buf: np.ndarray, dt: MPI.Datatype) -> None:
        """Hand the core's result back to the ranks that sat out."""
        if self.rank >= 2 * self.rem:
            return
        if self.rank % 2:
            comm.Send([buf, buf.size, dt], self.rank - 1, 2)
        else:
            comm.Recv([buf, buf.size, dt], self.rank + 1, 2)


class FoldedAllreduce(Allreduce):
    """An allreduce whose power-of-two core runs inside MPICH's fold.

    `_run` copies the input, folds the extra ranks in, lets the core ranks run `_core` on
    the whole buffer, and hands the result back out; subclasses implement only `_core`.
    """

    def _run(self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op) -> None:
        recvbuf[...] = sendbuf
        size = comm.Get_size()
        if size == 1:
            return
        dt = mpi_type(recvbuf)
        tmp = self.scratch("tmp", recvbuf)
        fold = Fold.of(comm.Get_rank(), size)
        fold.fold_in(comm, recvbuf, tmp, op, dt)
        if fold.core_rank >= 0:
            self._core(comm, fold, recvbuf, tmp, op, dt)
        fold.fold_out(comm, recvbuf, dt)

    def _core(
        self,
        comm: MPI.Comm,
        fold: Fold,
        buf: np.ndarray,
        tmp: np.ndarray,
        op: MPI.Op,
        dt: MPI.Datatype,
    ) -> None:
        raise NotImplementedError
