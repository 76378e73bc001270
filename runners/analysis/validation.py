"""The verdict of a tuning file's validation: a run that timed the file's tuned entry (`mpi:tuned`,
`collsweep sweep VALIDATION_SPEC`) against the library default, per size, and whether the
default itself moved against the run the file came from (no MPI here).

Per size the tuned entry is faster, slower or within noise against the default, paired over
the launches that timed both (the stored `against_default` rows). The default of the
validation run is set against the source run's (the file's provenance names it) at every
point both measured: a median outside the source's 95% interval over launches means the
baseline drifted, so a gain or a loss there is not the file's alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from runners import store
from runners.domain.collectives.collective import group_title
from runners.domain.libraries.catalog import is_tuned
from runners.domain.units import format_bytes, format_ratio
from runners.store import run_reads

KEY = ["collective", "ranks", "dtype", "op", "bytes"]


def tuning_record(run: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """What a run recorded of the tuning file it timed (environment.tuning_file), or None."""
    environment = run.get("environment")
    record = environment.get("tuning_file") if isinstance(environment, dict) else None
    return record if isinstance(record, dict) else None


def validation_lines(source: store.Source, run: Mapping[str, Any]) -> list[str]:
    """The validation verdict of a run that timed a tuning file ([] for any other run)."""
    record = tuning_record(run)
    if record is None:
        return []
    rows = run_reads.stored_against_default(source, run["run_id"])
    tuned = rows[[is_tuned(a) for a in rows["algorithm"]]] if len(rows) else rows
    if tuned.empty:
        return []
    lines = ["validation (the tuned entry against the library default, paired by launch):"]
    for (collective, ranks, dtype, op), group in tuned.groupby(KEY[:4], sort=True):
        cells = [
            f"{format_bytes(r.bytes)} {_said(r.verdict, r.ratio, r.ratio_low, r.ratio_high)}"
            for r in group.sort_values("bytes").itertuples(index=False)
        ]
        lines.append(f"  {group_title(ranks, dtype, op, collective)}: " + "; ".join(cells))
    source_run = (record.get("provenance") or {}).get("run_id")
    if source_run:
        lines += drift_lines(source, run["run_id"], str(source_run), set(tuned["baseline"]))
    return lines


def _said(verdict: str, ratio: float | None, low: float | None, high: float | None) -> str:
    """`faster 0.8x [0.7x, 0.9x]`: tuned time over the default's, with its interval."""
    if ratio is None or pd.isna(ratio):
        return "unknown (too few shared launches)"
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return f"{verdict} {format_ratio(ratio)}"
    return f"{verdict} {format_ratio(ratio)} [{format_ratio(low)}, {format_ratio(high)}]"


def drift_lines(source: store.Source, run_id: str, source_run: str, defaults: set) -> list[str]:
    """Where the validation run's default lies outside the source run's 95% interval at the
    same point: the baseline moved between the two runs."""
    if store.get_run(source, source_run) is None:
        return [f"  the run the file came from ({source_run}) is not in this store: no drift check"]
    mine = run_reads.point_intervals(source, run_id)
    theirs = run_reads.point_intervals(source, source_run)
    both = mine[mine["algorithm"].isin(defaults)].merge(
        theirs[theirs["algorithm"].isin(defaults)], on=[*KEY, "algorithm"], suffixes=("", "_src")
    )
    moved = [
        f"{format_bytes(r.bytes)} p={r.ranks}: {format_ratio(r.median_s / r.median_s_src)}"
        for r in both.itertuples(index=False)
        if pd.notna(r.interval_low_s_src)
        and not r.interval_low_s_src <= r.median_s <= r.interval_high_s_src
    ]
    if not moved:
        return [
            f"  the default stayed inside run {source_run}'s intervals at all {len(both)} points"
        ]
    return [
        f"  warning: the baseline drifted: the default left run {source_run}'s 95% interval at "
        f"{len(moved)} of {len(both)} points (its time now over then: {', '.join(moved[:6])}"
        f"{' ...' if len(moved) > 6 else ''}); a gain or loss there is not the file's alone"
    ]
