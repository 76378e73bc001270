"""An allreduce algorithm's schedule: the steps each rank runs, as data (pure: no MPI).

A schedule is a function `(rank, size, count) -> tuple[Step, ...]`: for one rank of a
`size`-rank group reducing `count` elements, what it sends and receives in each round, with
whom, and which block it reduces. Everything else reads it: the ranks execute it
(runners.ranks.algorithms), the model counts its critical path (`critical_path`), the
assumption checks and the Modular lab simulate it (`simulate`).

Element ranges are half-open `(start, stop)` offsets into the result buffer. A received block
lands in that range of the result buffer, or, for a step that reduces, in scratch space first
and is then reduced into that range.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

Range = tuple[int, int]
RoundKey = tuple[int, int]  # (phase order, round within the phase): the same on every rank
FOLD_IN, CORE, FOLD_OUT = 0, 1, 2


@dataclass(frozen=True)
class Step:
    """One rank's part of one round: a send, a receive, or both at once (MPI_Sendrecv).

    `recv` is where the received block belongs in the result buffer; with `reduce` it is
    reduced into that range (this rank's data the left operand when `mine_is_left`).
    """

    round: RoundKey
    phase: str
    send_to: int | None = None
    send: Range | None = None
    recv_from: int | None = None
    recv: Range | None = None
    reduce: bool = False
    mine_is_left: bool = False

    @property
    def sent(self) -> int:
        """Elements this step sends."""
        return 0 if self.send is None else self.send[1] - self.send[0]

    @property
    def received(self) -> int:
        """Elements this step receives."""
        return 0 if self.recv is None else self.recv[1] - self.recv[0]


Schedule = Callable[[int, int, int], tuple[Step, ...]]


@cache
def block_bounds(count: int, parts: int) -> tuple[int, ...]:
    """Boundaries of `parts` near-equal, datatype-aligned blocks of `count` elements.

    Block i is [bounds[i], bounds[i + 1]). The first count % parts blocks hold one extra
    element; blocks are empty when count < parts. Cached: a timed call asks the same again.
    """
    base, extra = divmod(count, parts)
    bounds = [0]
    for i in range(parts):
        bounds.append(bounds[-1] + base + (1 if i < extra else 0))
    return tuple(bounds)


@dataclass(frozen=True)
class CriticalPath:
    """Messages, elements sent and elements reduced on the critical path of one allreduce.

    Every round costs its largest message and its largest reduction (ranks run a round at the
    same time, and a full-duplex link sends and receives at once).
    """

    messages: int
    sent: int
    reduced: int


PathCount = Callable[[int, int], CriticalPath]
_COUNTED: dict[Schedule, PathCount] = {}


def counted_by(schedule: Schedule) -> Callable[[PathCount], PathCount]:
    """Register ``count(size, count)`` as the critical path of ``schedule`` without walking
    it: for a schedule whose every rank takes O(p) steps (the ring), the walk costs O(p^2)
    steps, seconds at p = 1024 for each size. It must give exactly the walk's counts
    (tests/domain/collectives/test_schedules.py holds them equal)."""

    def register(count: PathCount) -> PathCount:
        _COUNTED[schedule] = count
        return count

    return register


@lru_cache(maxsize=4096)
def critical_path(schedule: Schedule, size: int, count: int) -> CriticalPath:
    """The critical-path counts of `schedule` on `size` ranks for `count` elements."""
    counted = _COUNTED.get(schedule)
    return counted(size, count) if counted else walked_path(schedule, size, count)


def walked_path(schedule: Schedule, size: int, count: int) -> CriticalPath:
    """critical_path by walking every rank's steps: per round, the most messages, elements
    moved and elements reduced of any one rank (a rank's steps in one round one after
    another: a k-nomial parent's sends to its children)."""
    largest: dict[RoundKey, tuple[int, int, int]] = {}
    for rank in range(size):
        mine: dict[RoundKey, tuple[int, int, int]] = {}
        for step in schedule(rank, size, count):
            messages, sent, reduced = mine.get(step.round, (0, 0, 0))
            moved = max(step.sent, step.received)
            this_reduced = step.received if step.reduce else 0
            mine[step.round] = (messages + 1, sent + moved, reduced + this_reduced)
        for key, (messages, sent, reduced) in mine.items():
            most = largest.get(key, (0, 0, 0))
            largest[key] = (max(most[0], messages), max(most[1], sent), max(most[2], reduced))
    return CriticalPath(
        messages=sum(m for m, _, _ in largest.values()),
        sent=sum(s for _, s, _ in largest.values()),
        reduced=sum(r for _, _, r in largest.values()),
    )


def rounds_of(steps: tuple[Step, ...]) -> list[tuple[Step, ...]]:
    """A rank's steps grouped by round, in order (a round's steps are consecutive)."""
    return [tuple(group) for _, group in itertools.groupby(steps, key=lambda s: s.round)]


def exchange_first(steps: tuple[Step, ...]) -> bool:
    """Whether a rank's round of `steps` moves everything before it reduces anything: a round
    of several steps that reduces (a k-nomial parent's children, recursive multiplying's
    partners). Each of its sends then sends what the rank held when the round began, as
    `simulate` reads every round, and each reduced block lands in scratch space of its own."""
    return len(steps) > 1 and any(s.reduce for s in steps)


def scratch_elements(steps: tuple[Step, ...]) -> int:
    """Scratch space (elements) a rank needs: its largest block received to be reduced, or a
    round's blocks together where the round moves everything first (exchange_first)."""
    return max(
        (
            sum(s.received for s in group if s.reduce) if exchange_first(group) else s.received
            for group in rounds_of(steps)
            for s in group
            if s.reduce
        ),
        default=0,
    )


Contribution = tuple[int, ...]  # the ranks whose inputs an element holds, in reduction order


def simulate(
    schedule: Schedule,
    size: int,
    count: int,
    start: Callable[[int, int, int], list[Contribution]] | None = None,
) -> tuple[list[list[Contribution]], list[dict[RoundKey, list[Contribution]]]]:
    """Run `schedule` symbolically: what each rank's every element holds, round by round.

    An element's value is the tuple of ranks whose inputs it combines, in operand order
    (a reduction appends the right operand's ranks to the left's), so a correct allreduce ends
    with every element of every rank holding (0, 1, ..., size-1). `start(rank, size, count)`
    is what a rank's buffer holds first (default: its own input everywhere, as in allreduce;
    () marks an element holding nothing yet). Returns the final values and, per rank, the
    values after each round it took part in. Raises ValueError when a receive has no matching
    send (the schedule would deadlock or mismatch).
    """
    steps = [schedule(rank, size, count) for rank in range(size)]
    values: list[list[Contribution]]
    if start is None:
        values = [[(rank,)] * count for rank in range(size)]
    else:
        values = [list(start(rank, size, count)) for rank in range(size)]
    history: list[dict[RoundKey, list[Contribution]]] = [{} for _ in range(size)]
    for key in sorted({s.round for rank_steps in steps for s in rank_steps}):
        in_round = {r: [s for s in steps[r] if s.round == key] for r in range(size)}
        outbox = {
            (r, s.send_to): values[r][s.send[0] : s.send[1]]
            for r in range(size)
            for s in in_round[r]
            if s.send_to is not None and s.send is not None
        }
        for rank in range(size):
            for step in in_round[rank]:
                _deliver(values[rank], step, outbox, rank)
            if in_round[rank]:
                history[rank][key] = list(values[rank])
    return values, history


def _deliver(mine: list[Contribution], step: Step, outbox: dict, rank: int) -> None:
    """Apply one step's receive (and reduction) to a rank's elements."""
    if step.recv_from is None or step.recv is None:
        return
    incoming = outbox.get((step.recv_from, rank))
    start, stop = step.recv
    if incoming is None or len(incoming) != stop - start:
        raise ValueError(f"rank {rank} receives from {step.recv_from} in {step.round}: no match")
    for i, theirs in enumerate(incoming):
        own = mine[start + i]
        if step.reduce:
            mine[start + i] = own + theirs if step.mine_is_left else theirs + own
        else:
            mine[start + i] = theirs
