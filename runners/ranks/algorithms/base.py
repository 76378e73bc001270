"""The interface every allreduce algorithm implements, and the helpers they share."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import ClassVar

import numpy as np
from mpi4py import MPI
from mpi4py.util.dtlib import from_numpy_dtype

from runners.domain.catalog import ALGORITHMS, AlgorithmSpec


class UnsupportedError(ValueError):
    """Raised when an algorithm is asked for a case it declares it cannot compute."""


class Allreduce:
    """An allreduce with the contract of MPI_Allreduce on 1-D contiguous numpy buffers.

    Subclasses implement `_run`; `__call__` checks the declared requirements first, so an
    unsupported case is refused on every rank alike, never answered wrongly. Scratch buffers
    are kept between calls, so a timed call allocates nothing it can reuse.
    """

    name: ClassVar[str]

    def __init__(self) -> None:
        self._scratch: dict[str, np.ndarray] = {}
        self._views: dict[tuple[str, np.dtype, int], np.ndarray] = {}

    @property
    def spec(self) -> AlgorithmSpec:
        """The catalog entry declaring what this algorithm supports."""
        return ALGORITHMS[self.name]

    def __call__(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op
    ) -> None:
        """Reduce `sendbuf` over `comm` with `op` and leave the result in every `recvbuf`."""
        self.bind(comm, sendbuf, recvbuf, op)()

    def bind(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op
    ) -> Callable[[], None]:
        """Check once, then return a zero-argument call for a timing loop to repeat."""
        self.check_supported(comm.Get_size(), op)
        if sendbuf.shape != recvbuf.shape or sendbuf.dtype != recvbuf.dtype:
            raise ValueError("sendbuf and recvbuf must have the same shape and dtype")
        flat_send, flat_recv = sendbuf.reshape(-1), recvbuf.reshape(-1)
        return self._bound(comm, flat_send, flat_recv, op)

    def _bound(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op
    ) -> Callable[[], None]:
        """The zero-argument call `bind` returns, on checked 1-D buffers (default: `_run`)."""
        return partial(self._run, comm, sendbuf, recvbuf, op)

    def check_supported(self, ranks: int, op: MPI.Op) -> None:
        """Raise UnsupportedError when this algorithm cannot reduce `op` on `ranks` ranks."""
        if self.spec.commutative_only and not op.Is_commutative():
            raise UnsupportedError(f"{self.name} needs a commutative op; this op is not")
        if self.spec.power_of_two_only and ranks & (ranks - 1):
            raise UnsupportedError(f"{self.name} needs a power-of-two number of ranks")

    def _run(self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op) -> None:
        raise NotImplementedError

    def scratch(self, key: str, like: np.ndarray, count: int | None = None) -> np.ndarray:
        """A kept buffer of `count` elements of `like`'s dtype, grown only when too small."""
        count = like.size if count is None else count
        view_key = (key, like.dtype, count)
        view = self._views.get(view_key)
        if view is not None:  # a timed call asks for the same view again: reuse it
            return view
        nbytes = count * like.itemsize
        buf = self._scratch.get(key)
        if buf is None or buf.nbytes < nbytes:
            buf = np.empty(max(nbytes, 1), dtype=np.uint8)
            buf[:] = 0  # touch every page now, not inside a timed call
            self._scratch[key] = buf
            self._views = {k: v for k, v in self._views.items() if k[0] != key}
        view = self._views[view_key] = buf[:nbytes].view(like.dtype)
        return view


def mpi_type(array: np.ndarray) -> MPI.Datatype:
    """The predefined MPI datatype of a numpy array's elements.

    Predefined types matter: built-in ops are undefined on derived (dup'ed) datatypes, and a
    lookup allocates nothing per call.
    """
    predefined = MPI._typedict.get(array.dtype.char)
    return predefined if predefined is not None else from_numpy_dtype(array.dtype)


def sendrecv(
    comm: MPI.Comm,
    send: np.ndarray,
    dest: int,
    recv: np.ndarray,
    source: int,
    datatype: MPI.Datatype,
) -> None:
    """Exchange two contiguous slices with explicit datatypes (no per-call type inference)."""
    comm.Sendrecv([send, send.size, datatype], dest, 0, [recv, recv.size, datatype], source, 0)


def combine(op: MPI.Op, mine: np.ndarray, theirs: np.ndarray, mine_is_left: bool) -> None:
    """Reduce `theirs` into `mine`, keeping rank order for noncommutative ops.

    Reduce_local(a, b) computes b = a o b. When `mine` is the left operand of a
    noncommutative op the result lands in `theirs` and is copied back, as MPICH does.
    """
    if mine_is_left and not op.Is_commutative():
        op.Reduce_local(mine, theirs)
        mine[...] = theirs
    else:
        op.Reduce_local(theirs, mine)


@cache
def block_bounds(count: int, parts: int) -> tuple[int, ...]:
    """Boundaries of `parts` near-equal, datatype-aligned blocks of `count` elements.

    Block i is [bounds[i], bounds[i + 1]). The first count % parts blocks hold one extra
    element; blocks are empty when count < parts. Cached: a timed call asks the same again.
    """
    base, extra = divmod(count, parts)
    bounds = [0]
    for i in range(parts):
        bounds.append(bounds[-1] + base + (1 if i < extra else 0))
    return tuple(bounds)
