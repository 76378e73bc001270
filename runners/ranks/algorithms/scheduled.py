"""Every hand-written algorithm: its descriptor's schedule, executed step by step."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
from mpi4py import MPI

from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.collectives.contract_check import rotation
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import (
    Range,
    Step,
    exchange_first,
    rounds_of,
    scratch_elements,
)
from runners.ranks.algorithms.base import Allreduce, mpi_type

Call = Callable[[], object]
Copy = tuple[np.ndarray, np.ndarray]  # (destination, source)


class ScheduledAllreduce(Allreduce):
    """Runs `spec.schedule` for this rank: the MPI calls are worked out at bind time.

    `bind` turns every step into ready-made calls on fixed slices of a working buffer of the
    whole vector (Sendrecv / Send / Recv with explicit [buffer, count, datatype], then
    Reduce_local), so a timed call only places the input, makes those calls in order and
    takes out the result. The working buffer is the receive buffer where it holds the whole
    vector in order (allreduce, allgather, bcast, reduce), else kept scratch space.
    """

    def __init__(self, spec: AlgorithmSpec) -> None:
        super().__init__()
        if spec.schedule is None:
            raise ValueError(f"{spec.name} has no schedule to run")
        self.name = spec.name

    def _bound(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op | None
    ) -> Callable[[], None]:
        rank, size = comm.Get_rank(), comm.Get_size()
        collective = COLLECTIVES[self.spec.collective]
        count = collective.whole_count(size, sendbuf.size)
        steps = self.spec.schedule_at(recvbuf.itemsize)(rank, size, count)
        shift = rotation(self.spec, rank, size, count)
        in_place = recvbuf.size == count and not shift
        work = recvbuf if in_place else self.scratch("work", recvbuf, count)
        scratch = self.scratch("tmp", recvbuf, scratch_elements(steps))
        before: list[Copy] = []
        if sendbuf is not recvbuf and (found := collective.send_range(rank, size, count)):
            before = _pieces(work, sendbuf, found, shift, count)
        after: list[Copy] = []
        if not in_place and (found := collective.result_range(rank, size, count)):
            after = [(dst, src) for src, dst in _pieces(work, recvbuf, found, shift, count)]
        calls: list[Call] = []
        for group in rounds_of(steps):
            if exchange_first(group):
                calls += round_calls(comm, group, work, scratch, op)
                continue
            for step in group:
                calls += step_calls(comm, step, work, scratch, op)
        return partial(_run, tuple(before), tuple(calls), tuple(after))


def _pieces(
    work: np.ndarray, outside: np.ndarray, found: Range, shift: int, count: int
) -> list[Copy]:
    """The (work slice, outside slice) pairs that hold the vector's range `found` in a working
    buffer rotated by `shift` (two pieces where the range wraps around its end)."""
    start, stop = found
    if stop <= start:
        return []
    first = (start - shift) % count
    head = min(stop - start, count - first)
    pairs = [(work[first : first + head], outside[:head])]
    if head < stop - start:
        pairs.append((work[: stop - start - head], outside[head : stop - start]))
    return pairs


def _run(before: tuple[Copy, ...], calls: tuple[Call, ...], after: tuple[Copy, ...]) -> None:
    for dst, src in before:
        dst[...] = src
    for call in calls:
        call()
    for dst, src in after:
        dst[...] = src


def step_calls(
    comm: MPI.Comm, step: Step, buf: np.ndarray, scratch: np.ndarray, op: MPI.Op | None
) -> list[Call]:
    """The MPI calls of one step, bound to their slices of `buf` and `scratch`."""
    dt = mpi_type(buf)
    landing = None
    if step.recv is not None:
        target = buf[step.recv[0] : step.recv[1]]
        landing = scratch[: target.size] if step.reduce else target
    calls = [_transfer(comm, step, buf, landing, dt)]
    if step.reduce and landing is not None:
        if op is None:
            raise ValueError(f"step {step} reduces, but the collective has no op")
        calls += _reduce(op, target, landing, step.mine_is_left)
    return calls


def round_calls(
    comm: MPI.Comm, steps: tuple[Step, ...], buf: np.ndarray, scratch: np.ndarray, op: MPI.Op | None
) -> list[Call]:
    """The MPI calls of a round that moves everything before it reduces (exchange_first): its
    sends and receives at once (nonblocking, so no order of partners can deadlock), each
    reduced block into scratch space of its own, then the reductions in step order."""
    dt, offset = mpi_type(buf), 0
    receives: list[tuple[list, int]] = []
    sends: list[tuple[list, int]] = []
    reductions: list[Call] = []
    for step in steps:
        if step.send is not None and step.send_to is not None:
            sends.append((_spec(buf[step.send[0] : step.send[1]], dt), step.send_to))
        if step.recv is None or step.recv_from is None:
            continue
        target = buf[step.recv[0] : step.recv[1]]
        landing = scratch[offset : offset + target.size] if step.reduce else target
        if step.reduce:
            if op is None:
                raise ValueError(f"step {step} reduces, but the collective has no op")
            offset += target.size
            reductions += _reduce(op, target, landing, step.mine_is_left)
        receives.append((_spec(landing, dt), step.recv_from))
    return [partial(_exchange, comm, tuple(receives), tuple(sends)), *reductions]


def _exchange(
    comm: MPI.Comm, receives: tuple[tuple[list, int], ...], sends: tuple[tuple[list, int], ...]
) -> None:
    requests = [comm.Irecv(spec, source, 0) for spec, source in receives]
    requests += [comm.Isend(spec, to, 0) for spec, to in sends]
    MPI.Request.Waitall(requests)


def _spec(array: np.ndarray, dt: MPI.Datatype) -> list:
    # mpi4py takes a memoryview's buffer about 0.1 us faster than a numpy array's
    return [array.data, array.size, dt]


def _transfer(
    comm: MPI.Comm, step: Step, buf: np.ndarray, landing: np.ndarray | None, dt: MPI.Datatype
) -> Call:
    sent = None if step.send is None else _spec(buf[step.send[0] : step.send[1]], dt)
    received = None if landing is None else _spec(landing, dt)
    to, source = step.send_to, step.recv_from
    if sent is not None and received is not None and to is not None and source is not None:
        return partial(comm.Sendrecv, sent, to, 0, received, source, 0)
    if sent is not None and received is None and to is not None:
        return partial(comm.Send, sent, to, 0)
    if received is not None and sent is None and source is not None:
        return partial(comm.Recv, received, source, 0)
    raise ValueError(f"step {step} moves a range without naming its partner")


def _reduce(op: MPI.Op, mine: np.ndarray, theirs: np.ndarray, mine_is_left: bool) -> list[Call]:
    """Reduce `theirs` into `mine`, keeping rank order for noncommutative ops.

    Reduce_local(a, b) computes b = a o b. When `mine` is the left operand of a
    noncommutative op the result lands in `theirs` and is copied back, as MPICH does.
    """
    if mine_is_left and not op.Is_commutative():
        return [partial(op.Reduce_local, mine, theirs), partial(np.copyto, mine, theirs)]
    return [partial(op.Reduce_local, theirs, mine)]
