"""Runs inside every rank of a calibration job: ping-pong and local reduction timings.

Ranks 0 and 1 time a ping-pong over the message sizes (one-way time = round trip / 2) and
simultaneous exchanges and local copies of the same sizes (runners.ranks.overheads), then
`op.Reduce_local(inbuf, inoutbuf)` for each dtype x op, both at once as the algorithms
reduce (an iteration's time is the slower rank's), and last the overhead runs of
runners.ranks.overheads. Timing follows runners.ranks.harness and the
job file's timing policy (runners.domain.sweep.records.TimingPolicy, one pass and one launch, its
budget per measured size): warm-up (fewer calls when one call is slow), MPI_Barrier before every
iteration, samples kept until the median's confidence interval meets the target or the budget
is spent. Ranks >= 2
take no part and wait without spinning.

Rank 0 prints one `Calibrated` event (runners.domain.sweep.events) with the per-size medians and
the MPI
library's facts; runners.jobs.calibrate fits the models to it. No fitting happens here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from time import perf_counter

import mpi4py
import numpy as np
from mpi4py import MPI

from runners.domain.collectives.datatypes import DTYPES
from runners.domain.collectives.inputs import fill_input
from runners.domain.sweep.events import Calibrated, event_line
from runners.domain.sweep.job_file import CalibrationJob
from runners.domain.sweep.stats import StopRule, summarize
from runners.ranks.algorithms.base import skewed_empty
from runners.ranks.harness import SYNC_CADENCE, measure
from runners.ranks.mpi_ops import reduction_op
from runners.ranks.overheads import time_copy, time_exchange, time_overheads

PINGPONG_TAG = 17
# Small messages repeat the round trip inside one sample so the barrier's skew is amortised.
ROUND_TRIP_BYTES = 2**16
MAX_ROUND_TRIPS = 16


def round_trips_per_sample(nbytes: int) -> int:
    """Round trips timed together as one sample: more for small messages, 1 from 64 KiB."""
    return max(1, min(MAX_ROUND_TRIPS, ROUND_TRIP_BYTES // max(nbytes, 1)))


def pingpong_call(pair: MPI.Comm, nbytes: int, round_trips: int) -> Callable[[], None]:
    """One sample's round trips between ranks 0 and 1 of `pair`, on written buffers."""
    send = np.full(nbytes, pair.Get_rank() + 1, dtype=np.uint8)
    recv = np.full(nbytes, 255, dtype=np.uint8)
    out, into = [send, nbytes, MPI.BYTE], [recv, nbytes, MPI.BYTE]
    peer = 1 - pair.Get_rank()
    first, second = (pair.Send, pair.Recv) if pair.Get_rank() == 0 else (pair.Recv, pair.Send)
    first_buf, second_buf = (out, into) if pair.Get_rank() == 0 else (into, out)

    def call() -> None:
        for _ in range(round_trips):
            first(first_buf, peer, PINGPONG_TAG)
            second(second_buf, peer, PINGPONG_TAG)

    return call


def warmup_calls(pair: MPI.Comm, call: Callable[[], None], wanted: int, budget_s: float) -> int:
    """Make a first, untimed call; return how many more warm-up calls to make.

    Up to `wanted` calls in all, but no more than a fifth of the budget's worth, so slow
    reductions (float16, Python ops at 16 MiB) do not spend seconds warming up. Both ranks
    take the slower rank's first call, so they agree on the count (a ping-pong must).
    """
    pair.Barrier()
    start = perf_counter()
    call()
    first = pair.allreduce(perf_counter() - start, op=MPI.MAX)
    affordable = int(0.2 * budget_s / first) if first > 0 else wanted
    return max(0, min(wanted - 1, affordable))


def time_pingpong(pair: MPI.Comm, nbytes: int, rule: StopRule, warmup: int) -> dict:
    """The median one-way time of `nbytes`-byte messages and how it was measured."""
    trips = round_trips_per_sample(nbytes)
    call = pingpong_call(pair, nbytes, trips)
    samples = measure(pair, [call], rule, warmup_calls(pair, call, warmup, rule.budget_s))
    summary = summarize(samples / (2 * trips))
    return {
        "bytes": nbytes,
        "one_way_median_s": summary.median_s,
        "one_way_min_s": summary.min_s,
        "iterations": summary.iterations,
        "round_trips_per_sample": trips,
        "ci_rel_halfwidth": summary.ci_rel_halfwidth,
    }


def reduction_call(pair: MPI.Comm, dtype: str, op: str, nbytes: int) -> Callable[[], None]:
    """inoutbuf = inbuf o inoutbuf on written inputs, as the algorithms combine blocks: a
    received block in their scratch space into the result buffer."""
    count = nbytes // DTYPES[dtype].itemsize
    inbuf = skewed_empty(count, DTYPES[dtype])  # as the algorithms' scratch is placed
    inoutbuf = np.empty(count, dtype=DTYPES[dtype])
    fill_input(inbuf, 1 - pair.Get_rank(), op)
    fill_input(inoutbuf, pair.Get_rank(), op)
    reduce_local = reduction_op(op).Reduce_local

    def call() -> None:
        reduce_local(inbuf, inoutbuf)

    return call


def time_reduction(
    pair: MPI.Comm, dtype: str, op: str, nbytes: int, rule: StopRule, warmup: int
) -> dict:
    """The median time of one local reduction of `nbytes` bytes (the slower rank's)."""
    count = nbytes // DTYPES[dtype].itemsize
    call = reduction_call(pair, dtype, op, nbytes)
    samples = measure(pair, [call], rule, warmup_calls(pair, call, warmup, rule.budget_s))
    summary = summarize(samples)
    return {
        "dtype": dtype,
        "op": op,
        "bytes": count * DTYPES[dtype].itemsize,
        "median_s": summary.median_s,
        "min_s": summary.min_s,
        "iterations": summary.iterations,
        "ci_rel_halfwidth": summary.ci_rel_halfwidth,
    }


def measure_pair(pair: MPI.Comm, job: CalibrationJob) -> dict:
    """Every ping-pong and reduction timing, taken by ranks 0 and 1 together."""
    rule, warmup = job.timing.pass_rule(), job.timing.warmup
    pingpong = [time_pingpong(pair, n, rule, warmup) for n in job.sizes]
    exchange = [time_exchange(pair, n, round_trips_per_sample(n), rule, warmup) for n in job.sizes]
    copies = [time_copy(pair, n, round_trips_per_sample(n), rule, warmup) for n in job.sizes]
    reductions = [
        time_reduction(pair, dtype, op, n, rule, warmup)
        for dtype in job.dtypes
        for op in job.ops
        for n in job.reduce_sizes
    ]
    overheads = time_overheads(pair, rule, warmup)
    return {
        "pingpong": pingpong,
        "exchange": exchange,
        "copies": copies,
        "reductions": reductions,
        "overheads": overheads,
    }


def provenance(comm: MPI.Comm, job: CalibrationJob) -> dict:
    """The MPI library, versions and timing settings of this job."""
    return {
        "mpi_library": MPI.Get_library_version().strip(),
        "mpi_version": "MPI {}.{}".format(*MPI.Get_version()),
        "mpi4py_version": mpi4py.__version__,
        "numpy_version": np.__version__,
        "ranks": comm.Get_size(),
        "processor_names": comm.gather(MPI.Get_processor_name(), root=0),
        "settings": job.timing.as_dict() | {"sync_cadence": SYNC_CADENCE},
    }


def wait_quietly(comm: MPI.Comm) -> None:
    """A barrier that sleeps instead of spinning, so idle ranks leave the cores alone."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(0.005)


def calibration_event(world: MPI.Comm, job: CalibrationJob) -> Calibrated | None:
    """Measure on ranks 0 and 1 of `world` (every rank calls this); rank 0 gets the event."""
    info = provenance(world, job)
    pair = world.Split(0 if world.Get_rank() < 2 else MPI.UNDEFINED, world.Get_rank())
    started = time.perf_counter()
    results = measure_pair(pair, job) if pair != MPI.COMM_NULL else {}
    if pair != MPI.COMM_NULL:
        pair.Free()
    wait_quietly(world)
    if world.Get_rank() != 0:
        return None
    return Calibrated(**info, **results, measure_s=time.perf_counter() - started)


def run(job: CalibrationJob) -> None:
    """Measure on ranks 0 and 1, then print the results as one JSON line from rank 0
    (`python -m runners.ranks calibrate JOB`)."""
    world = MPI.COMM_WORLD
    if world.Get_size() < 2:
        raise SystemExit("calibration needs at least 2 ranks for a ping-pong")
    measured = calibration_event(world, job)
    if measured is not None:
        print(event_line(measured), flush=True)
