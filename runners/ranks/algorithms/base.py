"""The interface every algorithm of every collective implements, and the helpers they share."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mpi4py import MPI
from mpi4py.util.dtlib import from_numpy_dtype

from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.libraries.catalog import ALGORITHMS, AlgorithmSpec

PAGE = 4096
SCRATCH_SKEW = {"tmp": 1088, "work": 2176}  # bytes past a page start: apart from each other


class UnsupportedError(ValueError):
    """Raised when an algorithm is asked for a case it declares it cannot compute."""


class Allreduce:
    """A collective with the contract of its MPI call on 1-D contiguous numpy buffers
    (MPI_Allreduce for allreduce's algorithms; bcast takes one buffer as both, and its
    root is rank 0 as for reduce).

    Subclasses implement `_bound`; `__call__` checks the declared requirements first, so an
    unsupported case is refused on every rank alike, never answered wrongly. Scratch buffers
    are kept between calls, so a timed call allocates nothing it can reuse.
    """

    name: str

    def __init__(self) -> None:
        self._scratch: dict[str, np.ndarray] = {}
        self._views: dict[tuple[str, np.dtype, int], np.ndarray] = {}

    @property
    def spec(self) -> AlgorithmSpec:
        """The catalog entry declaring what this algorithm supports."""
        return ALGORITHMS[self.name]

    def __call__(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op | None
    ) -> None:
        """Run the collective on `sendbuf` and `recvbuf` (allreduce: reduce `sendbuf` over
        `comm` with `op` and leave the result in every `recvbuf`)."""
        self.bind(comm, sendbuf, recvbuf, op)()

    def bind(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op | None
    ) -> Callable[[], None]:
        """Check once, then return a zero-argument call for a timing loop to repeat."""
        size = comm.Get_size()
        self.check_supported(size, op)
        collective = COLLECTIVES[self.spec.collective]
        whole = collective.whole_count(size, sendbuf.size)
        if (sendbuf.size, recvbuf.size) != collective.buffer_counts(size, whole):
            raise ValueError(
                f"{collective.mpi_call} on {size} ranks takes buffers of "
                f"{collective.buffer_counts(size, whole)} elements, got "
                f"{(sendbuf.size, recvbuf.size)}"
            )
        if sendbuf.dtype != recvbuf.dtype:
            raise ValueError("sendbuf and recvbuf must have the same dtype")
        if collective.unsupported_count(whole, size):
            raise UnsupportedError(collective.unsupported_count(whole, size))
        if sendbuf is recvbuf:
            flat = sendbuf.reshape(-1)
            return self._bound(comm, flat, flat, op)
        return self._bound(comm, sendbuf.reshape(-1), recvbuf.reshape(-1), op)

    def _bound(
        self, comm: MPI.Comm, sendbuf: np.ndarray, recvbuf: np.ndarray, op: MPI.Op | None
    ) -> Callable[[], None]:
        """The zero-argument call `bind` returns, on checked 1-D buffers."""
        raise NotImplementedError

    def check_supported(self, ranks: int, op: MPI.Op | None) -> None:
        """Raise UnsupportedError when this algorithm cannot reduce `op` on `ranks` ranks."""
        commutative = op is None or op == MPI.OP_NULL or op.Is_commutative()
        reason = self.spec.unsupported_reason(ranks, "this op", commutative)
        if reason is not None:
            raise UnsupportedError(reason)

    def scratch(self, key: str, like: np.ndarray, count: int | None = None) -> np.ndarray:
        """A kept buffer of `count` elements of `like`'s dtype, grown only when too small.

        It starts SCRATCH_SKEW[key] bytes past a page boundary: large numpy buffers are
        page-aligned, and a reduction reading one page-aligned buffer while writing another
        at the same offset within a page stalls on 4K aliasing (1.7x slower for MPI_SUM of
        512 KiB float32 here, benchmarks figure 2's reduce-scatter rows)."""
        count = like.size if count is None else count
        view_key = (key, like.dtype, count)
        view = self._views.get(view_key)
        if view is not None:  # a timed call asks for the same view again: reuse it
            return view
        nbytes = count * like.itemsize
        skew = SCRATCH_SKEW.get(key, SCRATCH_SKEW["tmp"])
        buf = self._scratch.get(key)
        if buf is None or buf.nbytes < nbytes + PAGE + skew:
            buf = touched(max(nbytes, 1) + PAGE + skew)
            self._scratch[key] = buf
            self._views = {k: v for k, v in self._views.items() if k[0] != key}
        view = self._views[view_key] = skewed_view(buf, nbytes, skew).view(like.dtype)
        return view


def skewed_view(buf: np.ndarray, nbytes: int, skew: int) -> np.ndarray:
    """`nbytes` of the byte buffer `buf` starting `skew` bytes past its first page boundary
    (`buf` holds at least nbytes + PAGE + skew bytes)."""
    start = (-buf.ctypes.data) % PAGE + skew
    return buf[start : start + nbytes]


def skewed_empty(count: int, dtype: np.dtype, key: str = "tmp") -> np.ndarray:
    """A new array of `count` elements placed as scratch space `key` is (SCRATCH_SKEW)."""
    dtype = np.dtype(dtype)
    nbytes = count * dtype.itemsize
    skew = SCRATCH_SKEW[key]
    return skewed_view(touched(max(nbytes, 1) + PAGE + skew), nbytes, skew).view(dtype)


def touched(nbytes: int) -> np.ndarray:
    """A byte buffer with every page written now (np.zeros may map the zero page lazily, so
    the first timed call would fault its pages in)."""
    buf = np.empty(nbytes, dtype=np.uint8)
    buf.fill(0)
    return buf


def mpi_type(array: np.ndarray) -> MPI.Datatype:
    """The predefined MPI datatype of a numpy array's elements.

    Predefined types matter: built-in ops are undefined on derived (dup'ed) datatypes, and a
    lookup allocates nothing per call.
    """
    predefined = MPI._typedict.get(array.dtype.char)
    return predefined if predefined is not None else from_numpy_dtype(array.dtype)
