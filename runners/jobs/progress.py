"""What a sweep says while it measures: one line per launch (rewritten in place on a terminal
as its points finish), with an ETA from the launches already done; every point's line only
with --verbose.

The ETA prices each launch still to come at what its group's launches have cost so far (a
group of 4 oversubscribed ranks costs more per point than one of 2), a group not seen yet at
the cost per point and rank of the launches done (a collective's time grows with its ranks,
and more so once they outnumber the cores), and says nothing before the first launch ends: the
first points pay for the ranks' start and warm-up. A launch's cost runs from the end of the
one before, so what the sweep does between launches is priced too.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from runners.domain.units import format_bytes, format_seconds, visible
from runners.process.terminal import raw_stderr


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class PlannedLaunch:
    """What the progress line needs of a launch: its group's name and its points."""

    group: str
    points: int
    ranks: int = 1


@dataclass
class Progress:
    """A sweep's progress: launch k of L, its group, points done of all, and the ETA."""

    launches: Sequence[PlannedLaunch] = ()
    verbose: bool = False
    live: bool = False  # rewrite the launch's line in place (stderr is a terminal)
    out: Callable[[str], None] = _stderr
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    _current: int = -1
    _launch_started: float | None = None
    _in_launch: int = 0
    _cost: dict[str, tuple[float, int]] = field(default_factory=dict)  # group -> (s, points)
    _per_rank: tuple[float, int] = (0.0, 0)  # seconds, point-ranks of every launch done

    @property
    def total(self) -> int:
        """Points to measure in all (a point counts once per launch it is measured in)."""
        return sum(launch.points for launch in self.launches)

    def start_launch(self, index: int) -> None:
        """The sweep begins launches[index]."""
        self._current, self._in_launch = index, 0
        if self._launch_started is None:  # later launches start when the one before ended
            self._launch_started = self.clock()
        self._show(self.line())

    def point(self, row: dict) -> None:
        """Report one finished point (its own line only when verbose)."""
        self.done += 1
        self._in_launch += 1
        if self.verbose:
            self.out(self.point_line(row))
        elif self.live:
            self._show(self.line())

    def end_launch(self) -> None:
        """The current launch is over: its cost goes into the ETA, and its line is final."""
        if not 0 <= self._current < len(self.launches):
            return
        launch = self.launches[self._current]
        now = self.clock()
        spent = now - (self._launch_started if self._launch_started is not None else now)
        self._launch_started = now
        seconds, points = self._cost.get(launch.group, (0.0, 0))
        self._cost[launch.group] = (seconds + spent, points + self._in_launch)
        total_s, point_ranks = self._per_rank
        self._per_rank = (total_s + spent, point_ranks + self._in_launch * launch.ranks)
        if self.live and not self.verbose:
            raw_stderr().write("\r\x1b[K")
        if not self.verbose:
            self.out(self.line(spent))

    def eta_s(self) -> float | None:
        """Seconds still to go, or None before the first launch has ended."""
        if not self._cost:
            return None
        total_s, point_ranks = self._per_rank
        left = 0.0
        for index in range(max(self._current, 0), len(self.launches)):
            launch = self.launches[index]
            remaining = launch.points - (self._in_launch if index == self._current else 0)
            seconds, points = self._cost.get(launch.group, (0.0, 0))
            if points:
                per_point = seconds / points
            else:
                per_point = total_s / max(point_ranks, 1) * launch.ranks
            left += max(remaining, 0) * per_point
        return left

    def line(self, took: float | None = None) -> str:
        """launch k/L, its group, points done of all, and the ETA (or what the launch took)."""
        if not self.launches:
            return f"points {self.done}/{self.total}"
        k = max(self._current, 0)
        launch = self.launches[k]
        eta = self.eta_s()
        head = f"launch {k + 1}/{len(self.launches)}  {launch.group:<24} "
        done = f"points {self.done}/{self.total}"
        took_text = f"  took {format_seconds(took)}" if took is not None else ""
        eta_text = "  ETA --:--" if eta is None else f"  ETA {_clock(eta)}"
        return head + done + took_text + eta_text

    def point_line(self, row: dict) -> str:
        """One finished point, as --verbose prints it."""
        median = row.get("median_s")
        shown = f"{format_seconds(median):>10}" if median else f"{row['status']:>10}"
        return (
            f"[{self.done:>4}/{self.total}] L{row.get('launches') or 0} "
            f"p={row['ranks']:<3} {row['algorithm']:<27}"
            f"{format_bytes(row['bytes']):>9} {row['dtype']:<8}{row['op']:<14}{shown}"
        )

    def _show(self, line: str) -> None:
        if self.live and not self.verbose:
            raw_stderr().write("\r\x1b[K" + visible(line))
            raw_stderr().flush()


def _clock(seconds: float) -> str:
    """m:ss."""
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"
