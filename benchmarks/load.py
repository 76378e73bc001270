"""How busy other processes keep the machine: CPU time from /proc/stat minus our own.

Other engineers' tests and sweeps share this machine's cores; a figure measured while they
run is slower and noisier. Every figure records the cores other processes kept busy while
it ran (busy CPU time of the whole machine, steal included, minus this process and its
reaped children, which include every MPI rank), and can wait for a quieter moment first.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass

from benchmarks.common import log

QUIET_CORES = 0.3


@dataclass(frozen=True)
class Snapshot:
    """Machine-wide busy CPU seconds, our own CPU seconds, and the monotonic clock."""

    busy_s: float
    mine_s: float
    at: float

    @classmethod
    def now(cls) -> Snapshot:
        """Read the counters."""
        with open("/proc/stat") as handle:
            fields = [float(v) for v in handle.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
        busy = (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")
        mine = sum(
            usage.ru_utime + usage.ru_stime
            for usage in (
                resource.getrusage(resource.RUSAGE_SELF),
                resource.getrusage(resource.RUSAGE_CHILDREN),
            )
        )
        return cls(busy, mine, time.monotonic())


def other_cores(start: Snapshot, end: Snapshot) -> float:
    """Average cores kept busy by other processes between two snapshots."""
    seconds = end.at - start.at
    if seconds <= 0:
        return 0.0
    return max(0.0, ((end.busy_s - start.busy_s) - (end.mine_s - start.mine_s)) / seconds)


def sample(window_s: float = 1.0) -> float:
    """Cores other processes keep busy now, over `window_s` seconds."""
    start = Snapshot.now()
    time.sleep(window_s)
    return other_cores(start, Snapshot.now())


def settle(max_wait_s: float) -> float:
    """Wait (up to `max_wait_s`) until other processes leave the cores nearly idle.

    Returns the last load seen, in cores.
    """
    deadline = time.monotonic() + max_wait_s
    busy = sample()
    while busy > QUIET_CORES and time.monotonic() < deadline:
        log(f"other processes keep {busy:.1f} cores busy; waiting for a quieter moment")
        busy = sample(2.0)
    return busy
