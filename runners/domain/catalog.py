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
    forced: str = ""  # the MPICH algorithm a library entry forces; "" = autotuned
    color: str = "#7f7f7f"  # its colour in every chart (forced library variants: lighter)
    short: str = ""  # its short label in tight places (heat-map cells); "" = the name

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
            color="#1f77b4",
            short="rd",
        ),
        AlgorithmSpec(
            "binomial_tree",
            "binomial-tree reduce to rank 0, then binomial-tree broadcast",
            color="#ff7f0e",
            short="tree",
        ),
        AlgorithmSpec(
            "rabenseifner",
            "recursive-halving reduce-scatter + recursive-doubling allgather; "
            "non-power-of-two p folds the extra ranks into a power-of-two core",
            color="#2ca02c",
            short="rab",
        ),
        AlgorithmSpec(
            "ring",
            "ring reduce-scatter + ring allgather, 2(p-1) steps",
            commutative_only=True,
            color="#d62728",
            short="ring",
        ),
        AlgorithmSpec(
            "mpi",
            "the MPI library's own MPI_Allreduce, autotuned",
            library=True,
            color="#3b3b3b",
            short="mpi",
        ),
    )
}

# The algorithms whose code collsweep runs as it is, without a forcing environment.
BASE_ALGORITHMS: dict[str, AlgorithmSpec] = dict(ALGORITHMS)

# MPICH's generic allreduce algorithms that a sweep can force, with what MPICH needs to
# apply them (otherwise it silently runs another one; the sweep detects that too).
LIBRARY_FORCED: dict[str, tuple[str, bool, str]] = {  # text, commutative only, colour
    "recursive_doubling": ("MPICH recursive doubling", False, "#7fb3e0"),
    "reduce_scatter_allgather": (
        "MPICH Rabenseifner (reduce-scatter + allgather)",
        True,
        "#98df8a",
    ),
    "ring": ("MPICH ring", True, "#f19a9b"),
    "tree": ("MPICH tree (k-ary reduce + bcast)", False, "#ffbb78"),
}
for _forced, (_text, _commutative, _color) in LIBRARY_FORCED.items():
    ALGORITHMS[f"mpi:{_forced}"] = AlgorithmSpec(
        f"mpi:{_forced}",
        f"MPI_Allreduce forced to {_text} via MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM",
        commutative_only=_commutative,
        library=True,
        forced=_forced,
        color=_color,
    )


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
