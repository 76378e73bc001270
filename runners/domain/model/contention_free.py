"""A schedule's time on a platform if no two messages ever shared a link: the critical path of
its dependencies, each message on its own route (pure). A lower bound of what SimGrid
simulates on any topology; on a crossbar with one rank per node, the alpha-beta-gamma model's
schedule-exact price (tests/simulator/ hold the two equal)."""

from __future__ import annotations

import collections

from runners.domain.collectives.schedule import Step
from runners.domain.model.platform import Platform


def contention_free_s(
    steps: tuple[tuple[Step, ...], ...], itemsize: int, platform: Platform, gamma: float
) -> float:
    """The schedule's time if no two messages ever shared a link: every rank runs its steps in
    order; a message starts once its sender and its receiver have both reached their steps
    (a rendezvous, as SimGrid's and MPI's large messages do) and takes its route's latency plus
    its bytes at the route's bandwidth; a step ends when its send and receive have, plus its
    reduction. The critical path of the schedule's dependencies, with no round waiting for
    ranks it does not involve: a lower bound of the simulation on any topology."""
    clocks = _Clocks(steps)
    waiting = collections.deque(range(len(steps)))
    queued = [True] * len(steps)
    while waiting:
        rank = waiting.popleft()
        queued[rank] = False
        for partner in clocks.advance(rank, itemsize, platform, gamma):
            if not queued[partner]:  # it may be waiting for what this rank just reached
                queued[partner] = True
                waiting.append(partner)
    if not clocks.done():
        raise ValueError("the schedule deadlocks: a receive no rank sends to")
    return max(clocks.clock)


class _Clocks:
    """Each rank's position in its steps and the time its current step started; when each
    rank reached each of its sends and receives, per pair of ranks, in order."""

    def __init__(self, steps: tuple[tuple[Step, ...], ...]) -> None:
        self.steps = steps
        self.at = [0] * len(steps)
        self.clock = [0.0] * len(steps)
        self.reached = [False] * len(steps)
        self.sends: dict[tuple[int, int], list[float]] = {}
        self.receives: dict[tuple[int, int], list[float]] = {}
        self.used_sends: dict[tuple[int, int], int] = {}
        self.used_receives: dict[tuple[int, int], int] = {}

    def done(self) -> bool:
        return all(a == len(s) for a, s in zip(self.at, self.steps, strict=True))

    def advance(self, rank: int, itemsize: int, platform: Platform, gamma: float) -> list[int]:
        """Run the rank's steps as far as its partners allow; the partners of the steps it
        reached (which may have been waiting for it)."""
        reached: list[int] = []
        while self.at[rank] < len(self.steps[rank]):
            step = self.steps[rank][self.at[rank]]
            if self._reach(rank, step):
                reached += [p for p in (step.send_to, step.recv_from) if p is not None]
            ends = [self.clock[rank]]
            if step.send_to is not None:
                end = self._transfer(rank, step.send_to, step.sent * itemsize, platform, True)
                if end is None:
                    return reached
                ends.append(end)
            if step.recv_from is not None:
                nbytes = step.received * itemsize
                end = self._transfer(step.recv_from, rank, nbytes, platform, False)
                if end is None:
                    return reached
                ends.append(end)
            self._use(rank, step)
            reduced = step.received * itemsize * gamma if step.reduce else 0.0
            self.clock[rank] = max(ends) + reduced
            self.at[rank] += 1
            self.reached[rank] = False
        return reached

    def _reach(self, rank: int, step: Step) -> bool:
        """Note once when the rank reached this step's send and receive (True the first time)."""
        if self.reached[rank]:
            return False
        self.reached[rank] = True
        if step.send_to is not None:
            self.sends.setdefault((rank, step.send_to), []).append(self.clock[rank])
        if step.recv_from is not None:
            self.receives.setdefault((step.recv_from, rank), []).append(self.clock[rank])
        return True

    def _transfer(
        self, src: int, dst: int, nbytes: int, platform: Platform, sender: bool
    ) -> float | None:
        """When the pair's next message of this side (the k-th send meets the k-th receive)
        ends, or None while the other side has not reached it."""
        pair = (src, dst)
        index = (self.used_sends if sender else self.used_receives).get(pair, 0)
        sends, receives = self.sends.get(pair, []), self.receives.get(pair, [])
        if index >= len(sends) or index >= len(receives):
            return None
        latency, beta = platform.route(src, dst)
        return max(sends[index], receives[index]) + latency + nbytes * beta

    def _use(self, rank: int, step: Step) -> None:
        """The step's send and receive are done: the pairs' next messages are the later ones."""
        if step.send_to is not None:
            pair = (rank, step.send_to)
            self.used_sends[pair] = self.used_sends.get(pair, 0) + 1
        if step.recv_from is not None:
            pair = (step.recv_from, rank)
            self.used_receives[pair] = self.used_receives.get(pair, 0) + 1
