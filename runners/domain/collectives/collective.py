"""The collectives collsweep sweeps, and each one's contract (pure: no MPI).

A collective's schedule works on one buffer of the whole vector per rank (`count` elements,
the size a sweep names: for allgather and bcast what every rank holds at the end, for
reduce_scatter and reduce what every rank holds at the start, as nccl-tests reports sizes).
The contract says what each rank's buffer holds before the schedule runs and which part of it
must hold what afterwards; the ranks, the serial reference and the symbolic simulation all read
it from here. The root of rooted collectives is rank 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runners.domain.collectives.schedule import Contribution, Range, block_bounds

ROOT = 0
NO_OP = "none"  # the op column of a collective that reduces nothing


@dataclass(frozen=True)
class Collective:
    """One MPI collective as collsweep times it.

    `reduces`: it takes an op (and gamma prices its reductions). `equal_blocks`: the whole
    vector is cut into p equal blocks (MPI_Reduce_scatter_block, MPI_Allgather), so a size that
    is not a multiple of p elements cannot be run. `busbw` is nccl-tests' factor from algbw to
    bus bandwidth at p ranks.
    """

    name: str
    mpi_call: str
    description: str
    reduces: bool
    equal_blocks: bool
    busbw: Callable[[int], float]

    def buffer_counts(self, size: int, count: int) -> tuple[int, int]:
        """Elements of the send and the receive buffer of a call on a `count`-element whole
        vector (bcast: one buffer, both)."""
        if self.name == "reduce_scatter":
            return count, count // size
        if self.name == "allgather":
            return count // size, count
        return count, count

    def checked_count(self, count: int, size: int) -> int:
        """The whole vector `collsweep verify` checks for one of its counts: per block for
        the collectives of equal blocks (p of them), so edge counts stay edges."""
        return count * size if self.equal_blocks else count

    def whole_count(self, size: int, send_count: int) -> int:
        """The whole vector's elements, from a call's send buffer."""
        return send_count * size if self.name == "allgather" else send_count

    def send_range(self, rank: int, size: int, count: int) -> Range | None:
        """Where this rank's input sits in the whole vector; None: it has none (bcast off root)."""
        if self.name == "allgather":
            return block(rank, size, count)
        if self.name == "bcast" and rank != ROOT:
            return None
        return (0, count)

    def result_range(self, rank: int, size: int, count: int) -> Range | None:
        """The part of the whole vector this rank holds the result in; None: none (reduce off
        root)."""
        if self.name == "reduce_scatter":
            return block(rank, size, count)
        if self.name == "reduce" and rank != ROOT:
            return None
        return (0, count)

    def expected(self, rank: int, size: int, count: int) -> list[Contribution]:
        """What each element of this rank's result range holds at the end, symbolically: the
        ranks whose inputs it combines, in rank order."""
        found = self.result_range(rank, size, count)
        if found is None:
            return []
        start, stop = found
        if self.name == "allgather":
            owners = block_owners(size, count)
            return [(owners[i],) for i in range(start, stop)]
        if self.name == "bcast":
            return [(ROOT,)] * (stop - start)
        return [tuple(range(size))] * (stop - start)

    def start(self, rank: int, size: int, count: int) -> list[Contribution]:
        """What each element of this rank's buffer holds before the schedule runs."""
        values: list[Contribution] = [()] * count
        found = self.send_range(rank, size, count)
        if found is not None:
            values[found[0] : found[1]] = [(rank,)] * (found[1] - found[0])
        return values

    def unsupported_count(self, count: int, size: int) -> str | None:
        """Why a whole vector of `count` elements cannot be run on `size` ranks, or None."""
        if self.equal_blocks and count % size:
            return (
                f"{self.name} cuts the vector into {size} equal blocks: {count} elements is not "
                f"a multiple of {size}"
            )
        return None


def block(rank: int, size: int, count: int) -> Range:
    """Rank `rank`'s block of the whole vector (near-equal blocks, as every schedule cuts)."""
    bounds = block_bounds(count, size)
    return bounds[rank], bounds[rank + 1]


def block_owners(size: int, count: int) -> list[int]:
    """The rank whose block each element of the whole vector is in."""
    bounds = block_bounds(count, size)
    return [r for r in range(size) for _ in range(bounds[r + 1] - bounds[r])]


def _fraction(ranks: int) -> float:
    return (ranks - 1) / ranks if ranks else 0.0


COLLECTIVES: dict[str, Collective] = {
    c.name: c
    for c in (
        Collective(
            "allreduce",
            "MPI_Allreduce",
            "every rank ends with the reduction of every rank's vector",
            reduces=True,
            equal_blocks=False,
            busbw=lambda p: 2 * _fraction(p),
        ),
        Collective(
            "reduce_scatter",
            "MPI_Reduce_scatter_block",
            "rank r ends with block r of the reduction of every rank's vector",
            reduces=True,
            equal_blocks=True,
            busbw=_fraction,
        ),
        Collective(
            "allgather",
            "MPI_Allgather",
            "every rank ends with every rank's block, in rank order",
            reduces=False,
            equal_blocks=True,
            busbw=_fraction,
        ),
        Collective(
            "bcast",
            "MPI_Bcast",
            "every rank ends with rank 0's vector",
            reduces=False,
            equal_blocks=False,
            busbw=lambda p: 1.0,
        ),
        Collective(
            "reduce",
            "MPI_Reduce",
            "rank 0 ends with the reduction of every rank's vector",
            reduces=True,
            equal_blocks=False,
            busbw=lambda p: 1.0,
        ),
    )
}
DEFAULT_COLLECTIVE = "allreduce"


def qualified(collective: str, name: str) -> str:
    """The catalog's name of algorithm `name` of `collective` (allreduce's keep their own)."""
    return name if collective == DEFAULT_COLLECTIVE else f"{collective}.{name}"


def group_title(ranks: int, dtype: str, op: str, collective: str = DEFAULT_COLLECTIVE) -> str:
    """A group's name in every table and sentence: `p=2 float32 sum` for allreduce (as ever),
    the collective first for the others, and no op where it reduces nothing
    (`allgather p=2 float32`)."""
    head = "" if collective == DEFAULT_COLLECTIVE else f"{collective} "
    tail = "" if op == NO_OP else f" {op}"
    return f"{head}p={ranks} {dtype}{tail}"
