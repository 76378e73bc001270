"""Every hand-written algorithm: its descriptor's schedule, executed step by step."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
from mpi4py import MPI

from runners.domain.descriptor import AlgorithmSpec
from runners.domain.schedule import Step, scratch_elements
from runners.ranks.algorithms.base import Allreduce, mpi_type

Call = Callable[[], object]


class ScheduledAllreduce(Allreduce):
    """Runs `spec.schedule` for this rank: the MPI calls are worked out at bind time.

    `bind` turns every step into ready-made calls on fixed slices of the buffers
    (Sendrecv / Send / Recv with explicit [buffer, count, datatype], then Reduce_local), so a
    timed call only copies the input and makes those calls in order.
    """

    def __init__(self, spec: AlgorithmSpec) -> None:
        super().__init__()
        if spec.schedule is None:
            raise ValueError(f"{spec.name} has no schedule to run")
        self.name = spec.name
        self._schedule = spec.schedule

    def _bound(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op
    ) -> Callable[[], None]:
        steps = self._schedule(comm.Get_rank(), comm.Get_size(), recvbuf.size)
        scratch = self.scratch("tmp", recvbuf, scratch_elements(steps))
        calls: list[Call] = []
        for step in steps:
            calls += step_calls(comm, step, recvbuf, scratch, op)
        return partial(_run, tuple(calls), sendbuf, recvbuf)


def _run(calls: tuple[Call, ...], sendbuf: np.ndarray, recvbuf: np.ndarray) -> None:
    recvbuf[...] = sendbuf
    for call in calls:
        call()


def step_calls(
    comm: MPI.Comm, step: Step, buf: np.ndarray, scratch: np.ndarray, op: MPI.Op
) -> list[Call]:
    """The MPI calls of one step, bound to their slices of `buf` and `scratch`."""
    dt = mpi_type(buf)
    landing = None
    if step.recv is not None:
        target = buf[step.recv[0] : step.recv[1]]
        landing = scratch[: target.size] if step.reduce else target
    calls = [_transfer(comm, step, buf, landing, dt)]
    if step.reduce and landing is not None:
        calls += _reduce(op, target, landing, step.mine_is_left)
    return calls


def _spec(array: np.ndarray, dt: MPI.Datatype) -> list:
    # mpi4py takes a memoryview's buffer about 0.1 us faster than a numpy array's
    return [memoryview(array), array.size, dt]


def _transfer(
    comm: MPI.Comm, step: Step, buf: np.ndarray, landing: np.ndarray | None, dt: MPI.Datatype
) -> Call:
    sent = None if step.send is None else _spec(buf[step.send[0] : step.send[1]], dt)
    received = None if landing is None else _spec(landing, dt)
    if sent is not None and received is not None:
        return partial(comm.Sendrecv, sent, step.send_to, 0, received, step.recv_from, 0)
    if sent is not None:
        return partial(comm.Send, sent, step.send_to, 0)
    return partial(comm.Recv, received, step.recv_from, 0)


def _reduce(op: MPI.Op, mine: np.ndarray, theirs: np.ndarray, mine_is_left: bool) -> list[Call]:
    """Reduce `theirs` into `mine`, keeping rank order for noncommutative ops.

    Reduce_local(a, b) computes b = a o b. When `mine` is the left operand of a
    noncommutative op the result lands in `theirs` and is copied back, as MPICH does.
    """
    if mine_is_left and not op.Is_commutative():
        return [partial(op.Reduce_local, mine, theirs), partial(np.copyto, mine, theirs)]
    return [partial(op.Reduce_local, theirs, mine)]
