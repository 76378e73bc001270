"""The measured choices a tuning file is made of: per group size, the decided winner among the
library's own algorithms at each swept size (no MPI imported here; the files: tuning_files.py).

Only one library's algorithms of one collective compete (its autotuned default and its forced
algorithms; collsweep's hand-written ones cannot be named in a library's table, and
`<library>:tuned` is what a file makes). A size keeps the library's default (choice None)
unless the fastest of the library's algorithms there is decidedly faster than the default in
the paired launches (a tie between two forced algorithms that both beat the default does not
stop it: either helps); the stand-in of a default is the forced algorithm measured closest to
it there, for a library whose file must name an algorithm at every size (Intel MPI).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from runners.analysis.crossings import group_points
from runners.analysis.points import load_points
from runners.analysis.winners import Comparisons, measured_crossover_rows, winner_rows
from runners.domain.libraries import DEFAULT, LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS, autotuned_of
from runners.domain.libraries.tuning import Band, bands
from runners.domain.verdict.comparison import Comparison
from runners.store.reads import Source
from runners.store.run_reads import assumption_counts


@dataclass(frozen=True)
class SizeChoice:
    """One swept size of a group: the choice (None: the library's default) and the evidence,
    the winners row of the library's algorithms there."""

    nbytes: int
    choice: str | None
    winner: dict[str, Any]
    stand_in: str | None = None  # the choice, or the forced algorithm closest to the default
    # the fastest against the default: ratio, ratio_low, ratio_high (empty: it is the default)
    against_default: dict[str, float] = field(default_factory=dict)

    @property
    def stand_in_loses(self) -> bool:
        """The default was decidedly faster than the stand-in (every swept forced algorithm):
        a file that must name an algorithm here makes this size slower."""
        return (
            self.choice is None
            and self.winner.get("winner") != self.stand_in
            and bool(self.winner.get("decided"))
        )

    @property
    def concrete(self) -> str | None:
        """The algorithm to name here when the default cannot be named: the decided choice,
        else the stand-in."""
        return self.choice or self.stand_in


@dataclass(frozen=True)
class GroupTuning:
    """One group size's choices and the bands they make, with the measured crossovers used."""

    ranks: int
    sizes: list[SizeChoice]
    crossings: dict[tuple[int, int], float] = field(default_factory=dict)
    oversubscribed: bool = False  # more ranks than cores: the scheduler's times, not a tuning

    @property
    def bands(self) -> list[Band]:
        """The group's bands (domain.libraries.tuning.bands), None where the default stays."""
        return bands([(s.nbytes, s.choice) for s in self.sizes], self.crossings)

    @property
    def concrete_bands(self) -> list[Band]:
        """The group's bands naming an algorithm everywhere (stand-ins for the default)."""
        return bands([(s.nbytes, s.concrete) for s in self.sizes], self.crossings)

    @property
    def decided(self) -> int:
        """How many sizes name an algorithm other than the default."""
        return sum(s.choice is not None for s in self.sizes)


def competes(algorithm: str, library: str = DEFAULT.name, collective: str = "allreduce") -> bool:
    """Whether an algorithm of `collective` can be named in `library`'s table (or is its
    default): one of the library's own, of a collective its file can tune."""
    spec = ALGORITHMS[algorithm]
    tunable = collective in LIBRARIES[library].tuning_collectives
    mine = spec.library and not spec.own_launch and spec.runs_on == library  # members too
    named = LIBRARIES[library].tunable(spec)  # not MPICH's compositions: its table lacks them
    return mine and tunable and named and spec.collective == collective


def group_tunings(
    path: Source,
    run_id: str,
    dtype: str,
    op: str,
    library: str = DEFAULT.name,
    collective: str = "allreduce",
) -> dict[int, GroupTuning]:
    """Per group size of the run (dtype, op given), its choices at every swept size among
    `library`'s algorithms of `collective`."""
    points = [p for p in load_points(path, run_id) if competes(p.algorithm, library, collective)]
    groups = {k: v for k, v in group_points(points).items() if k[1:] == (dtype, op)}
    comparisons = Comparisons.load(path, run_id)
    winners = winner_rows(groups, comparisons)
    crossings = measured_crossover_rows(groups, comparisons)
    default = autotuned_of(library, collective)
    out = {}
    for key, by_alg in groups.items():
        ranks = key[0]
        mine = [w for w in winners if w["ranks"] == ranks]
        sizes = [
            _size_choice(w, default, _against(w, by_alg, default, comparisons))
            for w in sorted(mine, key=lambda w: w["bytes"])
        ]
        over = any(p.oversubscribed for p in points if p.ranks == ranks)
        if sizes:
            found = _crossings(sizes, crossings, ranks, default)
            out[ranks] = GroupTuning(ranks, sizes, found, over)
    return out


def _against(
    winner: Mapping[str, Any], by_alg: Mapping, default: str, comparisons: Comparisons
) -> Comparison | None:
    """The fastest algorithm at a size against the default there (None: it is the default,
    or the default was not measured)."""
    nbytes = int(winner["bytes"])
    mine = by_alg.get(winner["winner"], {}).get(nbytes)
    base = by_alg.get(default, {}).get(nbytes)
    if winner["winner"] == default or mine is None or base is None:
        return None
    return comparisons.of(mine, base)


def _size_choice(winner: Mapping[str, Any], default: str, against: Comparison | None) -> SizeChoice:
    beats = against is not None and against.decided and against.a_faster
    closest = winner["runner_up"] if winner["winner"] == default else winner["winner"]
    choice = winner["winner"] if beats else None
    ratios = (
        {"ratio": against.ratio, "ratio_low": against.low, "ratio_high": against.high}
        if against
        else {}
    )
    return SizeChoice(int(winner["bytes"]), choice, dict(winner), choice or closest, ratios)


def _crossings(
    sizes: list[SizeChoice], rows: list[dict[str, Any]], ranks: int, default: str
) -> dict[tuple[int, int], float]:
    """The measured crossovers between neighbouring sizes whose choices they separate."""
    out = {}
    for below, above in itertools.pairwise(sizes):
        pair = {below.choice or default, above.choice or default}
        for row in rows:
            same_pair = {row["algorithm_a"], row["algorithm_b"]} == pair
            here = (row["low_bytes"], row["high_bytes"]) == (below.nbytes, above.nbytes)
            if row["ranks"] == ranks and same_pair and here:
                out[(below.nbytes, above.nbytes)] = float(row["bytes"])
    return out


def assumption_states(path: Source, run_id: str) -> dict[str, dict[str, int]]:
    """Per assumption, how many of the run's checks hold, are violated or unknown."""
    frame = assumption_counts(path, run_id)
    out: dict[str, dict[str, int]] = {}
    for row in frame.itertuples(index=False):
        out.setdefault(row.name, {})[row.state] = int(row.n)
    return out
