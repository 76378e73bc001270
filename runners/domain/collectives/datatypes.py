"""The datatypes and reduction ops a sweep can name (pure: no MPI)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from runners.domain.collectives.collective import COLLECTIVES, NO_OP

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

# The op column of a point of a collective that reduces nothing (allgather, bcast).
NONE_OP = OpSpec(NO_OP, True, True, "no reduction: the collective moves data only")


def op_spec(name: str) -> OpSpec:
    """The op a point names: one of OPS, or `none` for a collective that reduces nothing."""
    return NONE_OP if name == NO_OP else OPS[name]


def ops_of(collective: str, ops: Iterable[str]) -> tuple[str, ...]:
    """The ops a collective runs among `ops`: all of them, or `none` where it reduces nothing."""
    return tuple(ops) if COLLECTIVES[collective].reduces else (NO_OP,)
