"""Which algorithm wins each cell, decided only when the launches agree, and the measured
crossovers between decided sizes (runners.domain.verdict.comparison)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from runners import store
from runners.analysis.crossings import crossing_row
from runners.analysis.points import Key, Point
from runners.domain.libraries import DEFAULT
from runners.domain.libraries.catalog import ALGORITHMS, autotuned_of, is_autotuned
from runners.domain.sweep.simulated_run import DEFAULT_MARGIN, margin_pairing, simulated_table
from runners.domain.verdict.comparison import Comparison, Unit, compare_many, within_margin
from runners.domain.verdict.crossovers import decided_crossovers
from runners.domain.verdict.speedup import Speedup
from runners.domain.verdict.winner_table import default_of

Groups = Mapping[Key, Mapping[str, Mapping[int, Point]]]


class Comparisons:
    """Paired comparisons of a run's points, from each (launch, pass) median, computed once."""

    def __init__(
        self, units: dict[str, dict[Unit, float]], jobs: dict[str, str] | None = None
    ) -> None:
        self.units = units
        self.jobs = jobs or {}  # point_id -> the job whose launches measured it
        self._done: dict[tuple[str, str], Comparison | None] = {}

    @classmethod
    def load(cls, path: store.Source, run_id: str) -> Comparisons:
        """Every ok point's median per (launch, pass)."""
        frame = store.unit_medians(path, run_id)
        units: dict[str, dict[Unit, float]] = {}
        for row in frame.itertuples(index=False):
            units.setdefault(row.point_id, {})[(int(row.launch), int(row[2]))] = row.median_s
        return cls(units, store.point_jobs(path, run_id))

    def pairing(self, a: Point, b: Point) -> str:
        """How two points' passes were paired: in one launch (one job), or in one round of
        launches (jobs of their own: a forced library algorithm without run-time switching)."""
        jobs = self.jobs.get(a.point_id), self.jobs.get(b.point_id)
        if None in jobs:  # stored before points.job: forced algorithms had launches of their own
            same = ALGORITHMS[a.algorithm].forced == ALGORITHMS[b.algorithm].forced
        else:
            same = jobs[0] == jobs[1]
        return "same launch" if same else "same round"

    def of(self, a: Point, b: Point) -> Comparison | None:
        """a's time over b's (None when they share fewer than two passes)."""
        key = (a.point_id, b.point_id)
        if key not in self._done:
            self.prime([(a, b)])
        return self._done[key]

    def prime(self, pairs: Iterable[tuple[Point, Point]]) -> None:
        """Compare every pair not compared yet, in one batch (comparison.compare_many)."""
        keys = list(dict.fromkeys((a.point_id, b.point_id) for a, b in pairs))
        keys = [k for k in keys if k not in self._done]
        units = [(self.units.get(a, {}), self.units.get(b, {})) for a, b in keys]
        self._done |= dict(zip(keys, compare_many(units), strict=True))


class MarginComparisons(Comparisons):
    """A simulated run's comparisons: one deterministic figure per point, no launches to pair;
    two points are told apart when they differ by more than the run's stated margin
    (comparison.within_margin), a tie otherwise."""

    def __init__(self, margin: float) -> None:
        super().__init__({})
        self.margin = margin

    def pairing(self, a: Point, b: Point) -> str:
        return margin_pairing(self.margin)

    def prime(self, pairs: Iterable[tuple[Point, Point]]) -> None:
        for a, b in pairs:
            self._done.setdefault(
                (a.point_id, b.point_id), within_margin(a.median_s, b.median_s, self.margin)
            )


def comparisons_of(path: store.Source, run: Mapping[str, Any]) -> Comparisons:
    """How a run's points are compared: by their paired launches, or for a simulated run by
    its stated margin."""
    table = simulated_table(run.get("spec_toml"))
    if table is not None:
        return MarginComparisons(float(table.get("margin", DEFAULT_MARGIN)))
    return Comparisons.load(path, run["run_id"])


ALL_LIBRARIES = "all"  # winners.library of the rows where every library's algorithms compete


def winner_rows(
    groups: Groups, comparisons: Comparisons, library: str = ALL_LIBRARIES
) -> list[dict[str, Any]]:
    """Per (ranks, dtype, op, bytes) with two or more ok points: the fastest two by median,
    whether the launches decide between them, and their time ratio with its interval
    (`library`: whose algorithms the groups hold, all libraries' by default)."""
    cells = [
        (key, nbytes, here)
        for key, by_alg in groups.items()
        for nbytes in sorted({n for points in by_alg.values() for n in points})
        if len(here := _fastest_first(by_alg, nbytes)) >= 2
    ]
    comparisons.prime((here[0], here[1]) for _, _, here in cells)
    comparisons.prime(
        (point, here[0])
        for _, _, here in cells
        if (point := _default_in(here, default_of(here[0].algorithm))) is not None
        and point is not here[1]
    )
    rows = []
    for (ranks, dtype, op), nbytes, here in cells:
        best, second = here[0], here[1]
        found = comparisons.of(best, second)
        default = default_of(best.algorithm)
        rows.append(
            {
                "ranks": ranks,
                "dtype": dtype,
                "op": op,
                "bytes": nbytes,
                "winner": best.algorithm,
                "runner_up": second.algorithm,
                "decided": bool(found and found.decided and found.a_faster),
                "ratio": found.ratio if found else None,
                "ratio_low": found.low if found else None,
                "ratio_high": found.high if found else None,
                "launches": found.launches if found else 0,
                "pairing": comparisons.pairing(best, second),
                "candidates": len(here),
                "library": library,
                "default_algorithm": default or None,
                **_speedup(here, default, comparisons).columns(),
            }
        )
    return rows


def _default_in(here: list[Point], default: str) -> Point | None:
    """The point of the cell's library ``default`` (the winner's library's autotuned entry,
    winner_table.default_of) when it was measured there and is not the winner itself."""
    return next((p for p in here[1:] if p.algorithm == default), None)


def _speedup(here: list[Point], default: str, comparisons: Comparisons) -> Speedup:
    """The default's time over the winner's, paired over their launches (speedup.Speedup)."""
    if here[0].algorithm == default:
        return Speedup.of(None, winner_is_default=True)
    point = _default_in(here, default)
    if point is here[1]:  # the margin's own comparison, turned round: one pair, one number
        found = comparisons.of(here[0], point)
        return Speedup.of(found.inverse() if found else None, False)
    return Speedup.of(comparisons.of(point, here[0]) if point else None, False)


def _fastest_first(by_alg: Mapping[str, Mapping[int, Point]], nbytes: int) -> list[Point]:
    """The points measured at `nbytes`, fastest median first (ties: by name)."""
    return sorted(
        (p for points in by_alg.values() if (p := points.get(nbytes))),
        key=lambda p: (p.median_s, p.algorithm),
    )


def baseline_of(algorithm: str) -> str | None:
    """The default a library algorithm is compared with: its own library's autotuned entry for
    a forced one (or mpi:tuned), MPICH's `mpi` for another library's autotuned one; None for
    MPICH's `mpi` and collsweep's own algorithms."""
    spec = ALGORITHMS[algorithm]
    mpich_default = autotuned_of(DEFAULT.name, spec.collective)
    if not spec.library or algorithm == mpich_default:
        return None
    return mpich_default if is_autotuned(algorithm) else autotuned_of(spec.runs_on, spec.collective)


def against_default_rows(groups: Groups, comparisons: Comparisons) -> list[dict[str, Any]]:
    """Every library algorithm other than a default (forced ones, mpi:tuned) against its
    library's autotuned default, and each other library's default against MPICH's, at each
    size both measured: time ratio (< 1: faster than the baseline) with its interval from the
    paired launches, and the verdict it gives."""
    pairs = [
        (key, algorithm, nbytes, point, default[nbytes])
        for key, by_alg in groups.items()
        for algorithm in sorted(by_alg)
        if (default := by_alg.get(baseline_of(algorithm) or "", {}))
        for nbytes, point in sorted(by_alg[algorithm].items())
        if nbytes in default
    ]
    comparisons.prime((point, base) for *_, point, base in pairs)
    rows = []
    for (ranks, dtype, op), algorithm, nbytes, point, base in pairs:
        found = comparisons.of(point, base)
        rows.append(
            {
                "ranks": ranks,
                "dtype": dtype,
                "op": op,
                "bytes": nbytes,
                "algorithm": algorithm,
                "baseline": baseline_of(algorithm),
                "ratio": found.ratio if found else None,
                "ratio_low": found.low if found else None,
                "ratio_high": found.high if found else None,
                "verdict": _verdict(found),
                "launches": found.launches if found else 0,
                "pairing": comparisons.pairing(point, base),
            }
        )
    return rows


def _verdict(found: Comparison | None) -> str:
    return "unknown" if found is None else found.verdict


def measured_crossover_rows(groups: Groups, comparisons: Comparisons) -> list[dict[str, Any]]:
    """Measured crossovers of every pair of algorithms in every (ranks, dtype, op): where
    their decided order flips, bracketed by the two measured sizes around the flip."""
    comparisons.prime(
        (by_alg[a][n], by_alg[b][n])
        for by_alg in groups.values()
        for a, b in itertools.combinations(sorted(by_alg), 2)
        for n in by_alg[a].keys() & by_alg[b].keys()
    )
    rows = []
    for key, by_alg in groups.items():
        for a, b in itertools.combinations(sorted(by_alg), 2):
            sizes = sorted(by_alg[a].keys() & by_alg[b].keys())
            found = [comparisons.of(by_alg[a][n], by_alg[b][n]) for n in sizes]
            for estimate, low, high in decided_crossovers(sizes, found):
                how = comparisons.pairing(by_alg[a][int(low)], by_alg[b][int(low)])
                rows.append(_measured_row(key, (a, b), (estimate, low, high), found, sizes, how))
    return rows


def _measured_row(
    key: Key, names: tuple[str, str], where: tuple, found: list, sizes: list, how: str
) -> dict[str, Any]:
    """A crossovers row; algorithm_a is the faster one below the crossover."""
    (a, b), (estimate, low, high) = names, where
    below = found[sizes.index(int(low))]
    ties = sum(low < n < high for n in sizes)
    detail = (
        f"the order, decided by the paired launches at both sizes ({how}), flips "
        "between these two measured sizes"
        + (f" ({ties} undecided sizes between)" if ties else "")
        + "; bytes interpolates the time ratio log-log between them"
    )
    rest = {"bytes": estimate, "low_bytes": low, "high_bytes": high, "detail": detail}
    return crossing_row(key, a, b, below.a_faster, "measured", **rest)
