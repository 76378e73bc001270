"""Names a sweep can use: datatypes, reduction ops and algorithms (their descriptors).

This module imports no MPI, so spec validation, the store and the dashboard can use it
without starting an MPI library.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from runners.domain.algorithms import HAND_WRITTEN, library
from runners.domain.descriptor import AlgorithmSpec

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


ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.name: spec for spec in (*HAND_WRITTEN, library.AUTOTUNED, *library.FORCED, library.TUNED)
}

# The algorithms whose code collsweep runs as it is, without a forcing environment.
BASE_ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.name: spec for spec in (*HAND_WRITTEN, library.AUTOTUNED)
}


def modelled_spec(algorithm: str) -> AlgorithmSpec | None:
    """The descriptor whose schedule predicts `algorithm`; None for the autotuned library."""
    spec = ALGORITHMS[algorithm]
    if spec.schedule is not None:
        return spec
    return ALGORITHMS[spec.modelled_by] if spec.modelled_by else None


def has_forced(algorithms: Iterable[str]) -> bool:
    """Whether any of the named algorithms is a library algorithm forced by name."""
    return any(ALGORITHMS[a].forced for a in algorithms)


def library_knobs(algorithm: str) -> dict[str, str]:
    """Environment that makes MPICH run `algorithm` (empty for hand-written and autotuned).

    Device-level (shared-memory) collectives are turned off, or MPICH would bypass the
    generic algorithm selection altogether.
    """
    forced = ALGORITHMS[algorithm].forced
    if not forced:
        return {}
    return {
        "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": forced,
        "MPIR_CVAR_DEVICE_COLLECTIVES": "none",
        "MPIR_CVAR_COLLECTIVE_FALLBACK": "print",
    }


def known_names(table: dict) -> str:
    """A comma-separated list of a table's keys, for error messages."""
    return ", ".join(sorted(table))
