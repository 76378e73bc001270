"""Runs inside every rank of a sweep job: times and verifies each point of a job file.

Rank 0 streams one JSON line per event on stdout (the typed records of runners.domain.sweep.events):
`hello` (provenance, once), `probe` (the machine-state probe, runners.ranks.probe, at the start
and the end), `cell` (a heartbeat as each (bytes, dtype, op) starts) and `point` (a finished
point with this launch's raw samples and their passes). The parent (runners.jobs.sweep_jobs)
merges every launch's samples of a point and computes its statistics
(runners.domain.sweep.repetition).
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path

import mpi4py
import numpy as np
from mpi4py import MPI

from runners.domain.algorithms.openmpi import AUTOTUNED_SETTINGS
from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.collectives.datatypes import DTYPES
from runners.domain.collectives.inputs import collective_case, mismatches
from runners.domain.libraries import LIBRARIES, PER_COMMUNICATOR, short_library_version, switching
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.status import PointStatus
from runners.domain.sweep.events import (
    CellStarted,
    Done,
    Event,
    Hello,
    PointMeasured,
    Probe,
    event_line,
)
from runners.domain.sweep.job_file import SweepJob
from runners.domain.sweep.plan import Cell
from runners.domain.sweep.records import PointKey, TimingPolicy
from runners.domain.sweep.stats import StopRule
from runners.ranks.algorithms import Allreduce, create
from runners.ranks.calibrate_worker import calibration_event
from runners.ranks.harness import SYNC_CADENCE, captured_stderr, measure
from runners.ranks.mpi_ops import mpi_op
from runners.ranks.mpit import Switch, allreduce_switch, forced_communicators
from runners.ranks.probe import probe

THREAD_LEVEL_NAMES = {
    MPI.THREAD_SINGLE: "single",
    MPI.THREAD_FUNNELED: "funneled",
    MPI.THREAD_SERIALIZED: "serialized",
    MPI.THREAD_MULTIPLE: "multiple",
}
MAX_COLD_BYTES = 256 * 2**20
FALLBACK_MARKERS = ("cannot be applied", "not usable")


def emit(comm: MPI.Comm, event: Event) -> None:
    """Print one event's JSON line from rank 0."""
    if comm.Get_rank() == 0:
        print(event_line(event), flush=True)


def memory_setting() -> str:
    """Transparent-huge-page mode of the kernel and whether numpy asks for huge pages."""
    try:
        thp = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    except OSError:
        thp = "unknown"
    madvise = np._core.multiarray._get_madvise_hugepage()  # type: ignore[attr-defined]  # private
    return f"THP enabled: {thp}; numpy madvise(MADV_HUGEPAGE): {madvise}"


def hello(comm: MPI.Comm) -> Hello:
    """Provenance of this job: library, versions, thread level, memory setting."""
    return Hello(
        mpi_library=MPI.Get_library_version().replace("\x00", "").strip(),
        mpi_version=short_library_version(MPI.Get_library_version()),
        mpi4py_version=mpi4py.__version__,
        numpy_version=np.__version__,
        python_version=platform.python_version(),
        thread_level=THREAD_LEVEL_NAMES.get(MPI.Query_thread(), "unknown"),
        memory_setting=memory_setting(),
        ranks=comm.Get_size(),
    )


def last_level_cache_bytes() -> int:
    """Size of the largest CPU cache, from sysfs (32 MiB when unknown)."""
    sizes = []
    for entry in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = entry.read_text().strip()
        scale = {"K": 2**10, "M": 2**20}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KM")) * scale)
    return max(sizes, default=32 * 2**20)


@dataclass
class Buffers:
    """The send/receive buffer pairs of a cell: one pair, or a rotation for cold caches.

    bcast's pairs are one buffer each (the root's holds the input and is never cleared);
    `expected` is None where the rank holds no result (reduce off the root)."""

    pairs: list[tuple[np.ndarray, np.ndarray]]
    expected: np.ndarray | None
    sent: np.ndarray  # this rank's input, kept to check the send buffers stay untouched
    keep_input: bool = False  # the receive buffer is the input (bcast's root)

    @classmethod
    def make(
        cls, comm: MPI.Comm, collective: str, dtype: str, op: str, count: int, cold: bool
    ) -> Buffers:
        """Allocate and write every buffer (no zero pages), and the expected result, for a
        whole vector of `count` elements of `dtype` for `collective` with `op`."""
        rank, size = comm.Get_rank(), comm.Get_size()
        nbytes = max(count * DTYPES[dtype].itemsize, 1)
        copies = 1
        if cold:
            copies = min(math.ceil(2 * last_level_cache_bytes() / (2 * nbytes)), 64)
            copies = max(1, min(copies, MAX_COLD_BYTES // (2 * nbytes)))
        made = COLLECTIVES[collective]
        send, recv, expected = collective_case(made, rank, size, count, dtype, op)
        if send is recv:
            pairs = [(buf, buf) for buf in [send] + [send.copy() for _ in range(copies - 1)]]
        else:
            pairs = [(send.copy(), np.empty_like(recv)) for _ in range(copies)]
        keep = send is recv and made.send_range(rank, size, count) is not None
        return cls(pairs, expected, send.copy(), keep)

    def clear_results(self) -> None:
        """Overwrite every receive buffer, so a stale right answer cannot pass a check."""
        if self.keep_input:
            return
        for _, recv in self.pairs:
            recv.fill(0)


@dataclass
class PointState:
    """What one algorithm has gathered in a cell so far."""

    algorithm: str
    status: PointStatus = PointStatus.OK
    reason: str = ""
    samples: list[float] = field(default_factory=list)
    passes: list[int] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)


def check_results(comm: MPI.Comm, buffers: Buffers) -> str:
    """Compare every rank's results (and untouched inputs) exactly; '' when all correct."""
    wrong = 0
    for send, recv in buffers.pairs:
        if buffers.expected is not None:
            wrong += mismatches(recv, buffers.expected)
        if send is not recv:
            wrong += mismatches(send, buffers.sent)
    per_rank = comm.allgather(wrong)
    if not any(per_rank):
        return ""
    bad = [rank for rank, n in enumerate(per_rank) if n]
    return f"wrong result: {sum(per_rank)} elements differ on ranks {bad}"


Outcome = tuple[PointStatus, str]  # a point's status so far, and why when it is not ok


def checked(comm: MPI.Comm, buffers: Buffers) -> Outcome:
    """OK when every rank's results are right, else FAILED with what was wrong."""
    wrong = check_results(comm, buffers)
    return (PointStatus.FAILED, wrong) if wrong else (PointStatus.OK, "")


def first_call(
    comm: MPI.Comm, algorithm: str, impl: Allreduce, buffers: Buffers, op: str
) -> Outcome:
    """Run and check the algorithm once: OK, SKIPPED where the library cannot run it as asked
    (an error, or it fell back on another algorithm), FAILED for a wrong result."""
    buffers.clear_results()
    send, recv = buffers.pairs[0]
    try:
        with captured_stderr() as notes:
            impl.bind(comm, send, recv, mpi_op(op))()
    except MPI.Exception as exc:
        return PointStatus.SKIPPED, f"library error: {exc.Get_error_string().strip()}"
    fell_back = any(marker in notes[0] for marker in FALLBACK_MARKERS)
    if comm.allreduce(int(fell_back), op=MPI.MAX):
        forced = ALGORITHMS[algorithm].forced
        return PointStatus.SKIPPED, f"MPICH could not apply {forced} here and fell back"
    return checked(comm, buffers)


_CELLS_SEEN: dict[str, set[tuple]] = {}  # per algorithm, the cells this rank has run it in


def inject_fault(comm: MPI.Comm, algorithm: str, cell: tuple) -> None:
    """Test hook: COLLSWEEP_FAULT=crash:<alg>, hang:<alg> or garble:<alg> breaks rank 1 at
    that algorithm (garble: rank 0 reports a malformed point, a bug in the parent's eyes);
    hold:<alg>[:<n>] parks it there (in the n-th cell this launch runs it in, when given)
    until the file named by COLLSWEEP_FAULT_RELEASE exists, so that a test acts while a sweep
    is surely mid-point, whatever the machine's speed. The launch passes COLLSWEEP_FAULT to
    the ranks only when the test suite turned the hooks on (runners.process.faults)."""
    kind, _, target = os.environ.get("COLLSWEEP_FAULT", "").partition(":")
    target, _, nth = target.partition(":")
    if target != algorithm:
        return
    seen = _CELLS_SEEN.setdefault(algorithm, set())
    seen.add(cell)
    if nth and (int(nth) != len(seen)):
        return
    if kind == "garble" and comm.Get_rank() == 0:  # a point event without its fields
        print(json.dumps({"type": "point", "algorithm": algorithm}), flush=True)
    if comm.Get_rank() != min(1, comm.Get_size() - 1):
        return
    if kind == "crash":
        raise RuntimeError(f"injected crash in {algorithm}")
    if kind == "hang":
        while True:
            time.sleep(1)
    if kind == "hold":
        release = os.environ.get("COLLSWEEP_FAULT_RELEASE", "")
        if release:  # the event a test waits for: parked, this rank's parent watch running
            Path(release + ".held").touch()
        while not (release and os.path.exists(release)):
            time.sleep(0.05)


def time_pass(
    comm: MPI.Comm, impl: Allreduce, buffers: Buffers, op: str, rule: StopRule, warmup: int
) -> np.ndarray:
    """One pass of one algorithm: bind over every buffer pair and measure."""
    mpi = mpi_op(op)
    calls = [impl.bind(comm, send, recv, mpi) for send, recv in buffers.pairs]
    return measure(comm, calls, rule, warmup)


@dataclass
class Library:
    """How a launch makes each algorithm run what it names: an MPI_T switch written before
    its turn (MPICH), or a communicator of its own (Open MPI); neither: the world as it is
    (the launch's environment forced it, Intel MPI)."""

    world: MPI.Comm
    switch: Switch | None = None
    comms: dict[str, MPI.Comm] = field(default_factory=dict)
    switches: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, comm: MPI.Comm, library: str, switches: dict[str, dict[str, int]]) -> Library:
        """The launch's library (by name) set up for the job's switches."""
        if LIBRARIES[library].runtime_forcing == PER_COMMUNICATOR:
            return cls(comm, comms=forced_communicators(comm, switches, dict(AUTOTUNED_SETTINGS)))
        return cls(comm, allreduce_switch() if switches else None, switches=switches)

    def turn(self, algorithm: str) -> MPI.Comm:
        """Set the library up for `algorithm`'s turn (untimed); the communicator to call."""
        if self.switch is not None:
            self.switch.apply(self.switches[algorithm])
        return self.comms.get(algorithm, self.world)

    def close(self) -> None:
        """The library's defaults again, as at the start."""
        if self.switch is not None:
            self.switch.apply(switching.settings("mpi"))
        for comm in self.comms.values():
            comm.Free()


def run_cell(
    comm: MPI.Comm, cell: Cell, job: SweepJob, impls: dict[str, Allreduce], library: Library
) -> None:
    """Time every algorithm of one cell, alternating their order over the passes; each
    algorithm's turn is set up first (Library.turn, untimed)."""

    emit(comm, CellStarted(cell.nbytes, cell.dtype, cell.op))
    timing = job.timing
    cold = timing.cache_mode == "cold"
    buffers = Buffers.make(comm, cell.collective, cell.dtype, cell.op, cell.count, cold)
    states = {a: PointState(a) for a in cell.algorithms}
    for alg, state in states.items():
        here = library.turn(alg)
        state.status, state.reason = first_call(here, alg, impls[alg], buffers, cell.op)
    passes, rule = timing.passes, timing.pass_rule()
    for index in range(passes):
        order = cell.algorithms if index % 2 == 0 else cell.algorithms[::-1]
        for alg in order:
            state = states[alg]
            if state.status != PointStatus.OK:
                continue
            inject_fault(comm, alg, (cell.nbytes, cell.dtype, cell.op))
            here = library.turn(alg)
            buffers.clear_results()
            samples = time_pass(here, impls[alg], buffers, cell.op, rule, timing.warmup)
            state.status, state.reason = checked(comm, buffers)
            state.samples += samples.tolist()
            state.passes += [index] * samples.size
    for state in states.values():
        emit(comm, point_event(comm, cell, job, timing, state))


def point_event(
    comm: MPI.Comm, cell: Cell, job: SweepJob, timing: TimingPolicy, state: PointState
) -> PointMeasured:
    """The `point` event: identity, launch, status and this launch's raw samples."""
    ranks, timed = comm.Get_size(), state.status == PointStatus.OK and bool(state.samples)
    key = PointKey(job.run_id, state.algorithm, ranks, cell.nbytes, cell.dtype, cell.op)
    return PointMeasured(
        point_id=key.point_id(),
        algorithm=state.algorithm,
        ranks=ranks,
        nbytes=cell.nbytes,
        dtype=cell.dtype,
        op=cell.op,
        status=state.status,
        reason=state.reason,
        started_at=state.started_at,
        finished_at=time.time(),
        warmup=timing.warmup,
        sync_cadence=SYNC_CADENCE,
        cache_mode=timing.cache_mode,
        verified=state.status == PointStatus.OK,
        launch=job.launch,
        samples=state.samples if timed else [],
        passes=state.passes if timed else [],
    )


def run(job: SweepJob) -> None:
    """Run a job file's cells in order (`python -m runners.ranks sweep JOB`)."""
    comm = MPI.COMM_WORLD
    emit(comm, hello(comm))
    names = {alg for cell in job.cells for alg in cell.algorithms}
    impls = {name: create(name) for name in sorted(names)}
    library = Library.of(comm, job.library, job.switches)
    emit(comm, Probe("start", time.time(), **probe(comm)))
    if job.calibration is not None and comm.Get_size() >= 2:  # this launch's machine state
        measured = calibration_event(comm, job.calibration)
        if measured is not None:
            emit(comm, measured)
    for cell in job.cells:
        run_cell(comm, cell, job, impls, library)
    library.close()
    emit(comm, Probe("end", time.time(), **probe(comm)))
    comm.Barrier()
    emit(comm, Done())
