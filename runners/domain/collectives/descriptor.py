"""What collsweep knows about one algorithm of a collective, in one place (pure: no MPI).

Every algorithm is one `AlgorithmSpec`: its schedule (runners.domain.collectives.schedule) for the
ones
collsweep runs itself, what it supports, how the model and the assumption checks treat it, and
how charts show it. The ranks execute the schedule, the model counts it, the checks and the
dashboard read the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runners.domain.collectives.schedule import Schedule

MPICH, OPENMPI, IMPI = "mpich", "openmpi", "impi"  # library names (runners.domain.libraries)
NCCL = "nccl"  # imported only: collsweep reads nccl-tests output, never runs it


def is_power(ranks: int, base: int) -> bool:
    """Whether ranks = base^L for some L >= 0."""
    while ranks > 1 and ranks % base == 0:
        ranks //= base
    return ranks == 1


def whole_buffer(ranks: int) -> int:
    """Blocks of an algorithm that sends whole buffers: one."""
    return 1


def per_rank(ranks: int) -> int:
    """Blocks of an algorithm that cuts the vector into one block per rank: p."""
    return ranks


def by_count(ranks: int) -> int:
    """Blocks of an algorithm whose rounds depend on the count (a pipeline's segments of a
    fixed size): 0, so it is priced at its own count, never scaled up from fewer elements."""
    return 0


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm of one collective: its schedule, what it needs, how it is modelled and
    drawn.

    `collective` names the collective it implements (runners.domain.collectives.collective); its
    name is
    qualified by the collective except for allreduce's (`allgather.ring`). `rotated`: its
    schedule works on a buffer rotated so the rank's own block comes first (Bruck's), which the
    ranks rotate back after the last round.

    `parts(p)` is how many blocks the schedule cuts the buffer into on p ranks (1 = whole
    buffers; None = unknown, the autotuned library). `other_p` says, with {alg} for the name,
    what the schedule does when p is not a power of two; `any_p` marks schedules that are as
    good for any p. `modelled_by` names the algorithm whose schedule predicts this one
    (a library algorithm forced by name); `model_note` qualifies how well. `own_launch`: the
    library reads what configures it at start-up only, so it runs in launches of its own.
    """

    name: str
    description: str
    collective: str = "allreduce"
    rotated: bool = False
    commutative_only: bool = False
    power_of_two_only: bool = False
    power_of: int = 0  # p must be a power of this (a radix), 0 for any p
    library: bool = False
    forced: str = ""  # the library algorithm an entry forces; "" = autotuned
    color: str = "#7f7f7f"  # its colour in every chart (a hue apart from every other's)
    short: str = ""  # its short label in tight places (heat-map cells); "" = the name
    schedule: Schedule | None = None
    parts: Callable[[int], int] | None = whole_buffer
    other_p: str = ""
    any_p: bool = False
    modelled_by: str = ""
    model_note: str = ""
    own_launch: bool = False
    runs_on: str = MPICH
    mirrors: str = ""
    falls_back: Callable[[int, int, int, bool], str] | None = None
    # the values that force it (Open MPI, Intel MPI; MPICH's compositions, a tree's type and radix)
    settings: tuple[tuple[str, int | str], ...] = ()
    # itemsize -> schedule, for a schedule cut in bytes (a segment size); `schedule` is then
    # the one for 1-byte elements, good for every symbolic check
    schedule_by_itemsize: Callable[[int], Schedule] | None = None
    auto: bool = False  # a family's name with `auto` values, standing in until a sweep chooses

    @property
    def required_schedule(self) -> Schedule:
        """Its schedule, for an algorithm collsweep runs or models by one (ValueError for a
        library's own call, which has none)."""
        if self.schedule is None:
            raise ValueError(f"{self.name} has no schedule")
        return self.schedule

    def schedule_at(self, itemsize: int) -> Schedule:
        """Its schedule for elements of `itemsize` bytes: what the ranks run and the model
        prices (the same for every itemsize but where a parameter is in bytes)."""
        if self.schedule_by_itemsize is not None:
            return self.schedule_by_itemsize(itemsize)
        return self.required_schedule

    def blocks(self, ranks: int) -> int:
        """How many blocks its schedule cuts the buffer into on `ranks` ranks (ValueError for
        a library's own call, whose cut is unknown)."""
        if self.parts is None:
            raise ValueError(f"{self.name} cuts the buffer in an unknown number of blocks")
        return self.parts(ranks)

    def unsupported_reason(self, ranks: int, op: str, commutative: bool) -> str | None:
        """Why this algorithm cannot run `op` (`commutative` or not) on `ranks` ranks, or None."""
        if ranks < 1:
            return f"ranks must be >= 1, got {ranks}"
        if self.power_of_two_only and ranks & (ranks - 1):
            return f"{self.name} needs a power-of-two number of ranks, got {ranks}"
        if self.power_of and not is_power(ranks, self.power_of):
            return f"{self.name} needs a number of ranks that is a power of {self.power_of}"
        if self.commutative_only and not commutative:
            return f"{self.name} needs a commutative op; {op} is not commutative"
        return None

    def fallback_reason(
        self, count: int, itemsize: int, ranks: int, commutative: bool
    ) -> str | None:
        """Why the library would run another algorithm than this one for the call, or None."""
        if self.falls_back is None:
            return None
        return self.falls_back(count, itemsize, ranks, commutative) or None
