"""Figure 3, second part: which factor makes the quick preset and the OSU-style policy differ.

The two policies differ in five ways: the number of launches (5 against OSU's one mpiexec),
the passes (2, the algorithms' order reversed in the second, against one), the warm-ups (3
against 100 / 10), the iterations a launch times (adaptive, 20-400 shared over the launches,
against a fixed 1000 / 100) and, beside them, whether a Barrier precedes every call. The first
four are varied one at a time from the quick preset as `collsweep sweep` overrides, at p=2 (a
core per rank), with a quick-preset sweep before every variant's (Q V1 Q V2 ... Q per round), so
each variant is compared with the quick run just before it, and each quick run with the one
before it is the baseline: what a repeat alone moves over the same time. The fifth is timed
inside one launch by benchmarks.barrier_worker, both ways in alternating blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import KIB, Check, log, run_python_job, table
from runners.domain.sweep.spec import SweepSpec
from runners.domain.units import format_bytes, format_seconds
from runners.store import across_runs

OSU_SMALL_MAX = 8 * KIB
OSU_SETTINGS = {"small": (100, 1000), "large": (10, 100)}  # (warm-ups, iterations a launch)
Overrides = list[list[str]]  # one `collsweep sweep` per list


def sizes_of(spec: SweepSpec, kind: str) -> list[int]:
    """The spec's sizes OSU counts as small (up to 8 KiB) or large."""
    return [s for s in spec.sizes if (s <= OSU_SMALL_MAX) == (kind == "small")]


def by_size(spec: SweepSpec, settings: Callable[[str], list[str]]) -> Overrides:
    """One sweep per OSU size class that has sizes, each with that class's settings."""
    return [
        ["--sizes", ",".join(map(str, sizes)), *settings(kind)]
        for kind in OSU_SETTINGS
        if (sizes := sizes_of(spec, kind))
    ]


def osu_warmups(kind: str) -> list[str]:
    """OSU's warm-up count for a size class."""
    return ["--warmup", str(OSU_SETTINGS[kind][0])]


def fixed_iterations(launches: int) -> Callable[[str], list[str]]:
    """OSU's iteration count in every launch (the spec shares its limits over the launches),
    with a target no point reaches and a budget that never binds."""

    def settings(kind: str) -> list[str]:
        count = OSU_SETTINGS[kind][1]
        return [
            *("--min-iterations", str(count), "--max-iterations", str(count * launches)),
            *("--target-ci", "1e-9", "--budget", "3600", "--point-timeout", "600"),
        ]

    return settings


def osu_policy(kind: str) -> list[str]:
    """The whole OSU-style policy for a size class: one launch, one pass, OSU's counts."""
    return [*osu_warmups(kind), *fixed_iterations(1)(kind), "--launches", "1", "--passes", "1"]


@dataclass(frozen=True)
class Variant:
    """The quick preset with one factor changed (or none, or all: the two policies)."""

    key: str
    name: str
    sweeps: Callable[[SweepSpec], Overrides]


VARIANTS = (
    Variant("quick", "quick preset (5 launches x 2 passes)", lambda spec: [[]]),
    Variant("launches", "one launch", lambda spec: [["--launches", "1"]]),
    Variant("passes", "one pass (one order)", lambda spec: [["--passes", "1"]]),
    Variant("warmup", "OSU's warm-ups (100 / 10)", lambda spec: by_size(spec, osu_warmups)),
    Variant(
        "iterations",
        "OSU's iterations per launch (1000 / 100)",
        lambda spec: by_size(spec, fixed_iterations(spec.timing.launches)),
    ),
    Variant("osu", "OSU-style: all four", lambda spec: by_size(spec, osu_policy)),
)


SMOKE_VARIANTS = (VARIANTS[0], VARIANTS[-1])  # the code paths (Q O Q), not the study


@dataclass(frozen=True)
class Timed:
    """One sweep of the timeline: which variant, and its p=2 points by (algorithm, bytes)."""

    key: str
    points: pd.DataFrame


def run_variants(
    spec_file: Path,
    spec: SweepSpec,
    folder: Path,
    plan: tuple[tuple[Variant, ...], int],
    sweep: Callable,
) -> list[Timed]:
    """Per round, the quick preset before every other variant and once more at the end (Q V1
    Q V2 ... Q), the variants' order rotated each round. Every quick run goes into one store,
    so its intervals are widened by the host's history from the third run on, as a user's
    would be; each variant run into a store of its own. The sweeps in the order they ran."""
    variants, rounds = plan
    quick, others = variants[0], variants[1:]
    timeline: list[Timed] = []
    for r in range(rounds):
        shift = r % len(others)
        for variant in [*others[shift:], *others[:shift], None]:
            timeline.append(_sweep_variant(quick, spec_file, spec, folder / "quick.duckdb", sweep))
            if variant is not None:
                path = folder / f"{variant.key}-{r}.duckdb"
                timeline.append(_sweep_variant(variant, spec_file, spec, path, sweep))
    return timeline


def _sweep_variant(
    variant: Variant, spec_file: Path, spec: SweepSpec, path: Path, sweep: Callable
) -> Timed:
    """Sweep one variant into `path` at p=2; the points of the runs it made."""
    log(f"figure 3 factors: {variant.name}")
    before = set(across_runs.run_ids(path))
    for overrides in variant.sweeps(spec):
        sweep(spec_file, path, ["--ranks", "2", *overrides])
    made = [run for run in across_runs.run_ids(path) if run not in before]
    return Timed(variant.key, _intervals(path, made).set_index(["algorithm", "bytes"]))


def _intervals(path: Path, runs: list[str]) -> pd.DataFrame:
    """The runs' p=2 points: the stored interval (widened by the host's history) as low_s and
    high_s, and the launches' own."""
    points = across_runs.ok_points_of_every_run(path)
    points = points[points.run_id.isin(runs) & (points.ranks == 2) & (points.median_s > 0)]
    points = points.rename(columns={"interval_low_s": "low_s", "interval_high_s": "high_s"})
    return points[
        ["algorithm", "bytes", "median_s", "low_s", "high_s", "launch_low_s", "launch_high_s"]
    ]


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Per shared point: a's median / b's, and whether a's median lies in b's stored interval
    and in b's interval over launches alone."""
    both = a.join(b, lsuffix="_a", rsuffix="_b", how="inner")
    return pd.DataFrame(
        {
            "ratio": both.median_s_a / both.median_s_b,
            "inside": both.median_s_a.between(both.launch_low_s_b, both.launch_high_s_b),
            "inside_stored": both.median_s_a.between(both.low_s_b, both.high_s_b),
        }
    )


def factor_rows(timeline: list[Timed], variants: tuple[Variant, ...]) -> list[dict]:
    """Each variant against the quick run just before it; the baseline: each quick run against
    the quick run before it (a variant's sweep between them)."""
    quick_key = variants[0].key
    pairs: dict[str, list[pd.DataFrame]] = {}
    last_quick = previous_quick = None
    for timed in timeline:
        if timed.key == quick_key:
            previous_quick, last_quick = last_quick, timed
            if previous_quick is not None:
                pairs.setdefault("baseline", []).append(
                    compare(timed.points, previous_quick.points)
                )
        elif last_quick is not None:  # every variant runs after a quick run
            pairs.setdefault(timed.key, []).append(compare(timed.points, last_quick.points))
    names = {"baseline": "quick preset, the run before (baseline)"}
    names |= {v.key: v.name for v in variants[1:]}
    return [_summary(names[key], pairs[key]) for key in names if key in pairs]


def _summary(name: str, pairs: list[pd.DataFrame]) -> dict:
    frame = pd.concat(pairs)
    ratios = frame.ratio.to_numpy()
    return {
        "name": name,
        "points": len(frame),
        "median": float(np.median(ratios)),
        "moved": float(np.median(np.abs(np.log(ratios)))),  # the typical move, either way
        "p10": float(np.quantile(ratios, 0.1)),
        "p90": float(np.quantile(ratios, 0.9)),
        "inside": float(frame.inside.mean()),
        "inside_stored": float(frame.inside_stored.mean()),
    }


def factor_table(rows: list[dict]) -> list[str]:
    """The factor rows as text."""
    return table(
        [
            "against the quick run just before",
            "points",
            "median ratio",
            "typical move",
            "10-90%",
            "inside",
            "(stored)",
        ],
        [
            [
                row["name"],
                row["points"],
                f"{row['median']:.3f}",
                f"x/ {np.exp(row['moved']):.3f}",
                f"{row['p10']:.2f}-{row['p90']:.2f}",
                f"{row['inside']:.0%}",
                f"{row['inside_stored']:.0%}",
            ]
            for row in rows
        ],
    )


def largest_factor(rows: list[dict]) -> dict | None:
    """The single factor (not the baseline, not the whole OSU policy) that moves medians most:
    the largest typical move (median |log ratio|) against the quick run before it; None when
    no single factor was varied (a smoke run)."""
    singles = [r for r in rows if r["name"] in {v.name for v in VARIANTS[1:-1]}]
    return max(singles, key=lambda r: r["moved"], default=None)


def barrier_lines(spec: SweepSpec, rounds: int) -> list[dict]:
    """MPICH's default allreduce at the preset's sizes, p=2: Barrier per call or back to back."""
    log("figure 3 factors: Barrier per call against back to back, p=2")
    args = ["mpi", str(rounds), *map(str, spec.sizes)]
    return run_python_job(2, "benchmarks.barrier_worker", args, timeout=600)


def barrier_table(lines: list[dict]) -> list[str]:
    """The Barrier factor per size as text."""
    rows = []
    for line in lines:
        size = format_bytes(line["bytes"])
        if "skipped" in line:
            rows.append([size, "", "", "", f"skipped: {line['skipped'][:40]}"])
            continue
        times = [format_seconds(line["synchronised_s"]), format_seconds(line["back_to_back_s"])]
        rows.append([size, *times, f"{line['paired_ratio']:.3f}", line["calls"]])
    return table(["bytes", "Barrier per call", "back to back", "paired ratio", "calls"], rows)


def check(factors: list[dict]) -> Check:
    """The issue's bar: OSU-style medians inside the quick preset's stored interval, p=2."""
    osu = factors[-1]
    return Check(
        "p=2 OSU-style medians inside the quick run's stored interval (the run just before)",
        f"{osu['inside_stored']:.0%} of {osu['points']}",
        ">= 90%, else the factor table says why",
        osu["inside_stored"] >= 0.90,
    )


def notes(factors: list[dict], barrier: list[dict], rounds: int) -> list[str]:
    """What the factor tables mean, which single factor moved the medians most, and whether
    the two policies differ more than the quick preset differs from itself."""
    largest, base, osu = largest_factor(factors), factors[0], factors[-1]
    ratios = [line["paired_ratio"] for line in barrier if "paired_ratio" in line]
    spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "not timed"
    return [
        "factors: each variant changes one setting of the quick preset toward OSU's, p=2, "
        f"{rounds} round(s) of Q V1 Q V2 ... Q (variants rotated each round); ratio = the "
        "variant's median / the quick run's just before it; inside = within that quick run's "
        "interval over launches; (stored) = within its stored interval, widened by the host's "
        "history from the third quick run on; the baseline row: each quick run against the "
        "quick run before it (one variant's sweep between them)",
        _largest_words(largest),
        f"OSU-style: typical move x/ {np.exp(osu['moved']):.3f}, {osu['inside']:.0%} inside; "
        f"the quick preset against itself: x/ {np.exp(base['moved']):.3f}, "
        f"{base['inside']:.0%} inside",
        "Barrier per call (the sweep's harness) against the same calls back to back, MPICH's "
        f"default allreduce, alternating blocks in one launch: back to back / Barrier {spread}",
    ]


def _largest_words(largest: dict | None) -> str:
    if largest is None:
        return "no single factor varied in this mode"
    return (
        f"the single factor that moved the medians most: {largest['name']} (typical move "
        f"x/ {np.exp(largest['moved']):.3f}, {largest['inside']:.0%} inside)"
    )
