"""Names a sweep can use: datatypes, reduction ops and algorithms, with what each supports.

This module imports no MPI, so spec validation, the store and the dashboard can use it
without starting an MPI library.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DTYPES: dict[str, np.dtype] = {
    name: np.dtype(name) for name in ("int32", "int64", "float16", "float32", "float64")
}


@dataclass(frozen=True)
class OpSpec:
    """A reduction operation as a sweep names it."""

    name: str
    commutative: bool
    builtin: bool
    description: str


OPS: dict[str, OpSpec] = {
    spec.name: spec
    for spec in (
        OpSpec("sum", True, True, "MPI_SUM"),
        OpSpec("prod", True, True, "MPI_PROD"),
        OpSpec("max", True, True, "MPI_MAX"),
        OpSpec("min", True, True, "MPI_MIN"),
        OpSpec(
            "first_nonzero",
            False,
            False,
            "user-defined, noncommutative: a o b = a if a != 0 else b (associative)",
        ),
    )
}


@dataclass(frozen=True)
class AlgorithmSpec:
    """What an allreduce algorithm needs from a point before it can run it."""

    name: str
    description: str
    commutative_only: bool = False
    power_of_two_only: bool = False
    library: bool = False

    def unsupported_reason(self, ranks: int, op: str) -> str | None:
        """Why this algorithm cannot run `op` on `ranks` ranks, or None when it can."""
        if ranks < 1:
            return f"ranks must be >= 1, got {ranks}"
        if self.power_of_two_only and ranks & (ranks - 1):
            return f"{self.name} needs a power-of-two number of ranks, got {ranks}"
        if self.commutative_only and not OPS[op].commutative:
            return f"{self.name} needs a commutative op; {op} is not commutative"
        return None


ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.name: spec
    for spec in (
        AlgorithmSpec(
            "recursive_doubling",
            "full-array exchange with partner rank XOR 2^k, log2 p rounds; "
            "non-power-of-two p folds the extra ranks into a power-of-two core",
        ),
        AlgorithmSpec(
            "binomial_tree",
            "binomial-tree reduce to rank 0, then binomial-tree broadcast",
        ),
        AlgorithmSpec(
            "rabenseifner",
            "recursive-halving reduce-scatter + recursive-doubling allgather; "
            "non-power-of-two p folds the extra ranks into a power-of-two core",
        ),
        AlgorithmSpec(
            "ring",
            "ring reduce-scatter + ring allgather, 2(p-1) steps",
            commutative_only=True,
        ),
        AlgorithmSpec("mpi", "the MPI library's own MPI_Allreduce", library=True),
    )
}


def known_names(table: dict) -> str:
    """A comma-separated list of a table's keys, for error messages."""
    return ", ".join(sorted(table))
