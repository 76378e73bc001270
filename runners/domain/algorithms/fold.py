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

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

from runners.domain.collectives.schedule import FOLD_IN, FOLD_OUT, Schedule, Step

FOLD_NOTE = (
    "{alg} folds the extra ranks into a power-of-two core first (2 more messages, n more bytes "
    "sent and reduced, counted by the model) while the folded ranks idle"
)


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
        """Where `rank` of a `size`-rank group sits after the fold."""
        pof2 = 1 << (size.bit_length() - 1)
        rem = size - pof2
        if rank < 2 * rem:
            core = rank // 2 if rank % 2 else -1
        else:
            core = rank - rem
        return Fold(rank, size, pof2, rem, core)

    def fold_in(self, count: int) -> list[Step]:
        """This rank's fold-in step, if it has one: of the first 2*rem ranks, the even one sends
        its whole buffer to its odd neighbour, which reduces it (the even rank's data left)."""
        whole = (0, count)
        if self.rank >= 2 * self.rem:
            return []
        if self.rank % 2 == 0:
            return [Step((FOLD_IN, 0), "fold in", send_to=self.rank + 1, send=whole)]
        return [Step((FOLD_IN, 0), "fold in", recv_from=self.rank - 1, recv=whole, reduce=True)]

    def real_rank(self, core_rank: int) -> int:
        """The communicator rank that plays core rank `core_rank`."""
        return core_rank * 2 + 1 if core_rank < self.rem else core_rank + self.rem


def core_parts(ranks: int) -> int:
    """The power-of-two core's size: the blocks a folded block algorithm cuts the buffer into."""
    return 1 << (ranks.bit_length() - 1)


def folded(core: Callable[[Fold, int], list[Step]]) -> Schedule:
    """A schedule running `core(fold, count)` on the power-of-two core inside the fold."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        fold = Fold.of(rank, size)
        whole = (0, count)
        steps = fold.fold_in(count)
        if fold.core_rank >= 0 and size > 1:
            steps += core(fold, count)
        if rank < 2 * fold.rem and rank % 2:
            steps.append(Step((FOLD_OUT, 0), "send back", send_to=rank - 1, send=whole))
        elif rank < 2 * fold.rem:
            steps.append(Step((FOLD_OUT, 0), "send back", recv_from=rank + 1, recv=whole))
        return tuple(steps)

    schedule.__doc__ = core.__doc__
    return schedule
