"""Rank side of the calibration: exchanges and the software overheads of the implementations.

Two more measurements on the calibration pair (ranks 0 and 1), beside the ping-pong:

* the **exchange** curve: both ranks send and receive at once (one `Sendrecv` each, through
  mpi4py as collsweep's algorithms call it), the shape of most rounds of an allreduce, in which
  two copies share the node's memory bandwidth;
* the **copy** curve: both ranks copy a buffer locally at once, as every allreduce first copies
  its input into its result buffer;
* **overhead runs**: whole allreduces of each implementation family at sizes no sweep
  measures (runners.domain.model.overheads names them and solves the per-call and per-round costs);
  the library's are forced through MPI_T and skipped where that is unavailable.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mpi4py import MPI

from runners.domain.libraries import switching
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.model.overheads import RUN_ELEMENTS
from runners.domain.sweep.stats import StopRule, summarize
from runners.ranks.algorithms import create
from runners.ranks.harness import measure
from runners.ranks.mpi_ops import mpi_op
from runners.ranks.mpit import SwitchUnavailable, allreduce_switch

EXCHANGE_TAG = 19


def exchange_call(pair: MPI.Comm, nbytes: int, repeats: int) -> Callable[[], None]:
    """One sample's `repeats` simultaneous exchanges of `nbytes` between the two ranks."""
    send = np.full(nbytes, pair.Get_rank() + 1, dtype=np.uint8)
    recv = np.full(nbytes, 255, dtype=np.uint8)
    out, into = [send.data, nbytes, MPI.BYTE], [recv.data, nbytes, MPI.BYTE]
    peer, sendrecv = 1 - pair.Get_rank(), pair.Sendrecv

    def call() -> None:
        for _ in range(repeats):
            sendrecv(out, peer, EXCHANGE_TAG, into, peer, EXCHANGE_TAG)

    return call


def time_exchange(pair: MPI.Comm, nbytes: int, repeats: int, rule: StopRule, warmup: int) -> dict:
    """The median time of one exchange of `nbytes` bytes each way (the slower rank's)."""
    samples = measure(pair, [exchange_call(pair, nbytes, repeats)], rule, warmup)
    summary = summarize(samples / repeats)
    return {"bytes": nbytes, "median_s": summary.median_s, "iterations": summary.iterations}


def time_copy(pair: MPI.Comm, nbytes: int, repeats: int, rule: StopRule, warmup: int) -> dict:
    """The median time of a local copy of `nbytes` bytes with both ranks copying at once, as
    every allreduce copies its input into its result buffer first (the slower rank's)."""
    src, dst = np.full(nbytes, 1, dtype=np.uint8), np.zeros(nbytes, dtype=np.uint8)

    def call() -> None:
        for _ in range(repeats):
            dst[...] = src

    summary = summarize(measure(pair, [call], rule, warmup) / repeats)
    return {"bytes": nbytes, "median_s": summary.median_s, "iterations": summary.iterations}


def time_overheads(pair: MPI.Comm, rule: StopRule, warmup: int) -> list[dict]:
    """Median seconds of each overhead run that this library can run (float32 sum). The
    allreduce settings are put back as they were (a launch may force an algorithm through its
    environment, which a write through MPI_T would undo)."""
    try:
        switch = allreduce_switch()
    except SwitchUnavailable:
        switch = None
    before = {n: switch.read(n) for n in switching.CVARS} if switch is not None else {}
    rows = []
    for algorithm, count in RUN_ELEMENTS.items():
        library = ALGORITHMS[algorithm].library
        if library and switch is None:
            continue
        if switch is not None:
            switch.apply(switching.settings(algorithm if library else "mpi"))
        send, recv = np.ones(count, np.float32), np.zeros(count, np.float32)
        call = create(algorithm).bind(pair, send, recv, mpi_op("sum"))
        summary = summarize(measure(pair, [call], rule, warmup))
        rows.append({"algorithm": algorithm, "count": count, "median_s": summary.median_s})
    if switch is not None:
        switch.apply(before)
    return rows
