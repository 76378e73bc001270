"""The timing harness, run inside every rank: warm-up, timing, verification, statistics.

Timing policy (what HPC benchmarks learned):
- MPI_Barrier before every iteration, then each rank times its own call; an iteration's
  time is the maximum over ranks (the collective is done when its slowest rank is);
- every iteration's time is kept (raw samples), not just a mean;
- the per-rank times of a batch of iterations are reduced with one MPI_Allreduce(MAX) after
  the batch, outside the timed region, together with each rank's elapsed time, so every rank
  takes the same stopping decision;
- stop when the median's confidence interval is within the target, or at the iteration
  or time limit;
- results are checked exactly after timing, never inside the timed loop.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from time import perf_counter

import numpy as np
from mpi4py import MPI

from runners.domain.sweep.stats import StopRule

SYNC_CADENCE = "MPI_Barrier before every iteration; iteration time = max over ranks"


def measure(
    comm: MPI.Comm,
    calls: list[Callable[[], None]],
    rule: StopRule,
    warmup: int,
) -> np.ndarray:
    """Warm up, then time iterations in growing batches until `rule` says stop.

    `calls` rotate per iteration (more than one for a cold-cache sweep). Returns the samples
    in seconds, each the maximum over ranks of one iteration.
    """
    for i in range(warmup):
        calls[i % len(calls)]()
    samples: list[float] = []
    started = perf_counter()
    batch = max(min(rule.min_iterations, rule.max_iterations), 1)
    times = np.empty(rule.max_iterations + 1)
    while True:
        local = times[: batch + 1]
        _timed_batch(comm, calls, local[:batch], len(samples))
        local[batch] = perf_counter() - started
        comm.Allreduce(MPI.IN_PLACE, local, op=MPI.MAX)
        samples.extend(local[:batch].tolist())
        ordered = np.sort(np.asarray(samples))
        if rule.should_stop(ordered, float(local[batch])):
            return np.asarray(samples)
        batch = _next_batch(rule, len(samples), float(local[batch]))


def _next_batch(rule: StopRule, done: int, elapsed: float) -> int:
    """Double the sample count, but not past the iteration limit or the time left."""
    per_iteration = elapsed / done
    fits_in_budget = int((rule.budget_s - elapsed) / per_iteration) + 1 if per_iteration else done
    return max(1, min(done, rule.max_iterations - done, fits_in_budget))


def _timed_batch(
    comm: MPI.Comm, calls: list[Callable[[], None]], out: np.ndarray, offset: int
) -> None:
    barrier = comm.Barrier
    clock = perf_counter
    rotation = len(calls)
    for i in range(out.size):
        call = calls[(offset + i) % rotation]
        barrier()
        start = clock()
        call()
        out[i] = clock() - start


@contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Capture what C code in this process writes to fd 2 (MPICH's fallback notices).

    Yields a list that holds the captured text once the block ends.
    """
    captured: list[str] = []
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode(errors="replace"))
