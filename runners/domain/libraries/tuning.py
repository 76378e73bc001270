"""Tuning files from measured winners, whatever the library (pure: no MPI, no store, no files
written; the files on disk are read by runners.host.tuning_files). Each library writes its own
format: MPICH's JSON tables (runners.domain.libraries.mpich_tuning), Open MPI's coll/tuned rules
(runners.domain.libraries.openmpi), Intel MPI's JSON tree (runners.domain.libraries.impi).

Bands: per communicator size, consecutive measured sizes with the same choice form a band; a
boundary between two decided sizes with different choices lies at the measured crossover
where one was interpolated, else at their geometric midpoint. `None` is the library's default.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from runners.domain.units import format_bytes

TUNED = "mpi:tuned"
PROVENANCE_SUFFIX = ".provenance.json"


@dataclass(frozen=True)
class Band:
    """Message sizes up to `upto` bytes (None: every larger size) and the algorithm chosen
    there (`mpi:<name>`), or None for the library's default."""

    upto: int | None
    algorithm: str | None


PerCollective = Mapping[str, Mapping[int, Sequence[Band]]]  # per collective, per group size
# per ranks a node (0: every rank on one host) the bands a run on such nodes measured
Placements = Mapping[int, PerCollective]


def only_placement(placements: Placements) -> PerCollective:
    """The bands of a file that keys on communicator size only: those of its one placement.
    Raises ValueError for several (`collsweep tune` refuses them first, keys_nodes())."""
    if len(placements) > 1:
        raise ValueError("a file that keys on communicator size only holds one placement")
    return next(iter(placements.values()), {})


def by_size_and_node(
    placements: Placements, collective: str
) -> dict[int, dict[int, Sequence[Band]]]:
    """One collective's bands per group size, then per ranks a node."""
    out: dict[int, dict[int, Sequence[Band]]] = {}
    for per_node, per_collective in sorted(placements.items()):
        for ranks, found in per_collective.get(collective, {}).items():
            out.setdefault(ranks, {})[per_node] = found
    return out


def bands(
    choices: Sequence[tuple[int, str | None]], crossings: Mapping[tuple[int, int], float] = {}
) -> list[Band]:
    """The bands of one communicator size from (size, choice) pairs: a band per run of equal
    choices, bounded at the measured crossover between the two sizes where `crossings` has
    one (keyed by the pair of sizes), else at their geometric midpoint (rounded down)."""
    ordered = sorted(choices)
    out: list[Band] = []
    for (size, choice), (next_size, next_choice) in itertools.pairwise(ordered):
        if choice != next_choice:
            edge = crossings.get((size, next_size), math.sqrt(size * next_size))
            out.append(Band(int(min(max(edge, size), next_size - 1)), choice))
    if ordered:
        out.append(Band(None, ordered[-1][1]))
    return out


def band_ranges(uptos: Sequence[int | None]) -> list[str]:
    """The size range of each band, in words, from the bands' upper bounds in order: 'up to
    22 B', 'above 22 B up to 181 B', 'above 181 B and larger'; one band alone is 'every size'."""
    out = []
    for index, upto in enumerate(uptos):
        low = f"above {format_bytes(uptos[index - 1] or 0)} " if index else ""
        high = f"up to {format_bytes(upto)}" if upto is not None else "and larger"
        out.append(f"{low}{high}" if low or upto is not None else "every size")
    return out


def provenance_path(tuning_file: str | Path) -> Path:
    """Where `collsweep tune` puts what a tuning file came from: FILE.provenance.json."""
    return Path(f"{tuning_file}{PROVENANCE_SUFFIX}")
