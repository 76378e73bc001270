"""Runs inside every rank of a replay: a workload's calls in recorded order, timed as a job.

Each policy of the launch binds every call once (its algorithm, its buffers), checks each
call's result once, untimed, then replays the whole sequence: one warm-up replay, then
`repetitions` timed ones, the policies taking turns (their order reversed every other
repetition). A replay is timed from a Barrier to the last call's return with no Barrier in
between (as the job runs them); its time is the maximum over ranks, reduced after the loop.
Rank 0 prints one JSON line per policy: {"type": "replayed", "policy", "launch", "seconds"}.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

import numpy as np
from mpi4py import MPI

from runners.domain.collectives.datatypes import DTYPES
from runners.domain.sweep.job_file import ReplayJob
from runners.ranks.algorithms import create
from runners.ranks.mpi_ops import mpi_op
from runners.ranks.sweep_worker import Buffers, check_results


def _buffers(comm: MPI.Comm, job: ReplayJob) -> list[Buffers]:
    """One set of buffers per call, shared by every policy (as the job has one set)."""
    return [
        Buffers.make(
            comm, c.collective, c.dtype, c.op, c.nbytes // DTYPES[c.dtype].itemsize, cold=False
        )
        for c in job.calls
    ]


def _bound_calls(
    comm: MPI.Comm,
    job: ReplayJob,
    algorithms: tuple[str, ...],
    buffers: list[Buffers],
    impls: dict,
) -> list[Callable[[], None]]:
    """Each call's zero-argument library or schedule call on its buffers, each checked once
    (one instance per algorithm, whichever policies use it: its scratch buffers are shared
    as a job's would be)."""
    bound = []
    for call, name, made in zip(job.calls, algorithms, buffers, strict=True):
        impl = impls.setdefault(name, create(name))
        send, recv = made.pairs[0]
        bound.append(impl.bind(comm, send, recv, mpi_op(call.op)))
        made.clear_results()
        bound[-1]()
        wrong = check_results(comm, made)
        if wrong:
            raise RuntimeError(f"replay: {name}: {wrong}")
    return bound


def _checked(comm: MPI.Comm, name: str, buffers: list[Buffers]) -> None:
    """Every call's result still right after the replays."""
    for made in buffers:
        wrong = check_results(comm, made)
        if wrong:
            raise RuntimeError(f"replay of {name}: {wrong}")


def _replay(comm: MPI.Comm, calls: list[Callable[[], None]], sequence: Sequence[int]) -> float:
    """One replay of the sequence, timed on this rank."""
    comm.Barrier()
    start = perf_counter()
    for index in sequence:
        calls[index]()
    return perf_counter() - start


def _sequenced(
    comm: MPI.Comm, calls: list[Callable[[], None]], sequence: Sequence[int]
) -> np.ndarray:
    """The sequence again with a Barrier before every call: each call's time on this rank, in
    sequence order (their sum: the calls in the job's order and cache state, minus what
    back-to-back calls gain or lose)."""
    out = np.empty(len(sequence))
    barrier, clock = comm.Barrier, perf_counter
    for n, index in enumerate(sequence):
        barrier()
        start = clock()
        calls[index]()
        out[n] = clock() - start
    return out


def _isolated(comm: MPI.Comm, calls: list[Callable[[], None]], repeats: int) -> np.ndarray:
    """Each call alone as a sweep times it (Barrier, call; the same call again): per call,
    per repeat, this rank's time."""
    out = np.empty((len(calls), repeats))
    for index, call in enumerate(calls):
        call()  # its buffers hot, as in a sweep's timed loop
        for r in range(repeats):
            comm.Barrier()
            start = perf_counter()
            call()
            out[index, r] = perf_counter() - start
    return out


ISOLATED_REPEATS = 3  # timed calls of each distinct call per repetition (their median)


def run(job: ReplayJob) -> None:
    """Replay every policy of the job file (`python -m runners.ranks replay JOB`): per policy
    and repetition, interleaved so that machine states meet all three alike, the replay's
    time, the sequence's with Barriers (summed per call), and each distinct call alone (times
    its count); every time the maximum over ranks."""
    comm = MPI.COMM_WORLD
    sequence, buffers = job.sequence, _buffers(comm, job)
    impls: dict[str, Any] = {}
    bound = {
        name: _bound_calls(comm, job, algorithms, buffers, impls)
        for name, algorithms in job.policies.items()
    }
    names, reps = list(bound), job.repetitions
    counts = np.bincount(sequence, minlength=len(job.calls))
    times = {name: np.empty(reps) for name in names}
    steps = {name: np.empty((reps, len(sequence))) for name in names}
    alone = {name: np.empty((reps, len(counts), ISOLATED_REPEATS)) for name in names}
    for repetition in range(-1, reps):  # -1: each policy's warm-up replay
        for name in names if repetition % 2 == 0 else names[::-1]:
            seconds = _replay(comm, bound[name], sequence)
            per_call = _sequenced(comm, bound[name], sequence)
            isolated = _isolated(comm, bound[name], ISOLATED_REPEATS)
            if repetition >= 0:
                times[name][repetition], steps[name][repetition] = seconds, per_call
                alone[name][repetition] = isolated
            _checked(comm, name, buffers)
    for name in names:
        for values in (times[name], steps[name], alone[name]):
            comm.Allreduce(MPI.IN_PLACE, values, op=MPI.MAX)
        if comm.Get_rank() == 0:
            line = {
                "type": "replayed",
                "policy": name,
                "launch": job.launch,
                "seconds": times[name].tolist(),
                "sequenced_s": steps[name].sum(axis=1).tolist(),
                "isolated_s": (np.median(alone[name], axis=2) @ counts).tolist(),
            }
            print(json.dumps(line), flush=True)
    comm.Barrier()
