"""Figure 3, second part: which factor makes the quick preset and the OSU-style policy differ.

The two policies differ in five ways: the number of launches (5 against OSU's one mpiexec),
the passes (2, the algorithms' order reversed in the second, against one), the warm-ups (3
against 100 / 10), the iterations a launch times (adaptive, 20-400 shared over the launches,
against a fixed 1000 / 100) and, beside them, whether a Barrier precedes every call. The first
four are varied one at a time from the quick preset as `collsweep sweep` overrides, at p=2 (a
core per rank), every variant once per round and the rounds interleaved, so each variant is
compared with the quick preset of its own round; the quick preset repeated a round later is the
baseline (what a repeat alone moves). The fifth is timed inside one launch by
benchmarks.barrier_worker, both ways in alternating blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import KIB, log, run_python_job, table
from runners import store
from runners.domain.spec import SweepSpec
from runners.domain.status import PointStatus
from runners.domain.units import format_bytes, format_seconds

OSU_SMALL_MAX = 8 * KIB
OSU_SETTINGS = {"small": (100, 1000), "large": (10, 100)}  # (warm-ups, iterations a launch)
POINTS_SQL = (
    "SELECT algorithm, bytes, median_s, coalesce(launch_low_s, interval_low_s) AS low_s, "
    "coalesce(launch_high_s, interval_high_s) AS high_s FROM points "
    "WHERE status = ? AND ranks = 2 AND median_s > 0"
)
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


SMOKE_VARIANTS = (VARIANTS[0], VARIANTS[1], VARIANTS[-1])  # the code paths, not the study


def run_variants(
    spec_file: Path,
    spec: SweepSpec,
    folder: Path,
    plan: tuple[tuple[Variant, ...], int],
    sweep: Callable,
) -> dict[tuple[str, int], pd.DataFrame]:
    """Every variant once per round, each round's order rotated; p=2 points by (key, round)."""
    variants, rounds = plan
    found = {}
    for r in range(rounds):
        shift = r % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            log(f"figure 3 factors: round {r + 1}/{rounds}, {variant.name}")
            path = folder / f"{variant.key}-{r}.duckdb"
            for overrides in variant.sweeps(spec):
                sweep(spec_file, path, ["--ranks", "2", *overrides])
            points = store.query(path, POINTS_SQL, [PointStatus.OK.value])
            found[variant.key, r] = points.set_index(["algorithm", "bytes"])
    return found


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Per shared point: a's median / b's, and whether a's median lies in b's interval."""
    both = a.join(b, lsuffix="_a", rsuffix="_b", how="inner")
    return pd.DataFrame(
        {
            "ratio": both.median_s_a / both.median_s_b,
            "inside": both.median_s_a.between(both.low_s_b, both.high_s_b),
        }
    )


def factor_rows(
    found: dict[tuple[str, int], pd.DataFrame], plan: tuple[tuple[Variant, ...], int]
) -> list[dict]:
    """Each variant against the quick preset of its round; the quick preset a round later
    against the round before (the baseline)."""
    variants, rounds = plan
    rows = []
    if rounds > 1:
        pairs = [compare(found["quick", r + 1], found["quick", r]) for r in range(rounds - 1)]
        rows.append(_summary("quick preset, a round later (baseline)", pairs))
    for variant in variants[1:]:
        pairs = [compare(found[variant.key, r], found["quick", r]) for r in range(rounds)]
        rows.append(_summary(variant.name, pairs))
    return rows


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
    }


def factor_table(rows: list[dict]) -> list[str]:
    """The factor rows as text."""
    return table(
        [
            "against the quick preset (same round)",
            "points",
            "median ratio",
            "typical move",
            "10-90%",
            "inside",
        ],
        [
            [
                row["name"],
                row["points"],
                f"{row['median']:.3f}",
                f"x/ {np.exp(row['moved']):.3f}",
                f"{row['p10']:.2f}-{row['p90']:.2f}",
                f"{row['inside']:.0%}",
            ]
            for row in rows
        ],
    )


def largest_factor(rows: list[dict]) -> dict:
    """The single factor (not the baseline, not the whole OSU policy) that moves medians most:
    the largest typical move (median |log ratio|) against the quick preset of its round."""
    singles = [r for r in rows if r["name"] in {v.name for v in VARIANTS[1:-1]}]
    return max(singles, key=lambda r: r["moved"])


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
