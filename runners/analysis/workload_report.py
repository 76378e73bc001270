"""A whole job's communication time under each policy, from a run's stored points.

Each call is priced by the point of the algorithm the policy chooses for it
(runners.domain.workload.policy). Every (launch, pass) the pricing points share gives one job
total: the sum over calls of calls x that unit's median, so a machine state that slows every
call alike moves the whole total, as it would the job. The policy's total is the median launch
of those totals, with the 95% interval of the median launch (runners.domain.sweep.repetition), as a
point's median has; its ratio to the default pairs the two policies' totals unit by unit
(runners.domain.verdict.comparison). `points_sum_s` keeps the plain sum of calls x point medians,
which
each call's row adds up to. Calls the run has no default point for are priced by no policy
(listed in the notes), so every policy sums the same calls.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from runners import store
from runners.analysis.winners import Comparisons
from runners.domain.libraries.catalog import autotuned_of, library_of
from runners.domain.sweep.repetition import unit_log_intervals
from runners.domain.units import format_bytes
from runners.domain.verdict.comparison import (
    FASTER,
    SLOWER,
    WITHIN_NOISE,
    Comparison,
    Unit,
    compare,
)
from runners.domain.workload.file import Call, Workload
from runners.domain.workload.policy import CallKey, Policy, policies, run_libraries
from runners.store.run_reads import predictions_of
from runners.store.workloads import replace_workload_report

SAME = "same as default"


@dataclass(frozen=True)
class PointRef:
    """A stored point that prices a call: its id and median."""

    point_id: str
    median_s: float


@dataclass
class RunFacts:
    """What the report reads of a run: its ok points per call key, each point's per-(launch,
    pass) medians and its prediction, and why its winners are provisional ('' if they are not)."""

    points: dict[CallKey, dict[str, PointRef]]
    units: dict[str, dict[Unit, float]]
    predicted: dict[str, float] = field(default_factory=dict)
    provisional: str = ""

    @classmethod
    def load(cls, path: store.Source, run_id: str) -> RunFacts:
        """Read the run's points, winners, units and predictions."""
        points: dict[CallKey, dict[str, PointRef]] = {}
        for r in store.ok_points(path, run_id).itertuples(index=False):
            key = (r.collective, int(r.bytes), r.dtype, r.op, int(r.ranks))
            points.setdefault(key, {})[r.algorithm] = PointRef(r.point_id, float(r.median_s))
        reasons = store.provisional_reasons(path, run_id)
        order = store.calibration_order(path, run_id)
        rank = {cal: i for i, cal in enumerate(order)}
        predicted: dict[str, tuple[int, float]] = {}
        for r in predictions_of(path, run_id).itertuples(index=False):
            here = rank.get(r.calibration_id, len(order))
            if r.predicted_s is not None and here < predicted.get(r.point_id, (math.inf, 0))[0]:
                predicted[r.point_id] = (here, float(r.predicted_s))
        units = Comparisons.load(path, run_id).units
        chosen = {k: v for k, (_, v) in predicted.items()}
        return cls(points, units, chosen, "; ".join(reasons))

    def fastest_against_default(self, key: CallKey, default: str) -> str | None:
        """The fastest (by median) of the algorithms of the default's library that are
        decidedly faster than the default at this call, paired by (launch, pass); None if
        none is."""
        here = self.points.get(key, {})
        if default not in here:
            return None
        base = self.units.get(here[default].point_id, {})
        library = library_of(default)
        faster = [
            (ref.median_s, name)
            for name, ref in here.items()
            if name != default
            and library_of(name) == library
            and _verdict(compare(self.units.get(ref.point_id, {}), base)) == FASTER
        ]
        return min(faster)[1] if faster else None


@dataclass(frozen=True)
class PricedPolicy:
    """A policy's job total with its interval, against the default, and per call."""

    policy: Policy
    row: dict[str, Any]
    calls: list[dict[str, Any]]


def _unit_totals(refs: Sequence[PointRef], counts: Sequence[int], units: Mapping) -> dict:
    """The job total per (launch, pass) shared by every pricing point."""
    shared = set.intersection(*(set(units.get(r.point_id, {})) for r in refs)) if refs else set()
    return {
        u: sum(n * units[r.point_id][u] for r, n in zip(refs, counts, strict=True)) for u in shared
    }


def _median_launch(totals: Mapping[Unit, float]) -> tuple[float | None, float, float]:
    """The median launch's job total (median over launches of the median over each launch's
    passes) with its 95% interval; (None, nan, nan) without two units, and the interval nan
    without two launches."""
    if not totals:
        return None, math.nan, math.nan
    shared = sorted(totals)
    logs = np.log(np.array([[totals[u] for u in shared]]))
    launches = np.array([u[0] for u in shared])
    per_launch = [np.median(logs[0, launches == n]) for n in np.unique(launches)]
    centre = math.exp(float(np.median(per_launch)))
    if len(per_launch) < 2:
        return centre, math.nan, math.nan
    low, high = unit_log_intervals(logs, np.array([u[1] for u in shared]), launches)[0]
    return centre, math.exp(low), math.exp(high)


def _verdict(found: Comparison | None) -> str:
    """Against the default's point or total; within noise where too few units are shared."""
    return WITHIN_NOISE if found is None else found.verdict


def _ratio_columns(found: Comparison | None, same: bool = False) -> dict[str, Any]:
    """Ratio to the default with its interval and verdict; `same`: it is the default's own
    choice (no ratio)."""
    return {
        "ratio": found.ratio if found else None,
        "ratio_low": found.low if found else None,
        "ratio_high": found.high if found else None,
        "verdict": SAME if same else _verdict(found),
    }


def _call_row(
    index: int, call: Call, algorithm: str, own: bool, ref: PointRef, base: PointRef, facts
) -> dict[str, Any]:
    """One call's part of a policy's job, against the default's choice for it."""
    same = ref == base
    units = facts.units
    found = None if same else compare(units.get(ref.point_id, {}), units.get(base.point_id, {}))
    return {
        "call_index": index,
        "collective": call.collective,
        "bytes": call.nbytes,
        "dtype": call.dtype,
        "op": call.op,
        "ranks": call.ranks,
        "calls": call.calls,
        "algorithm": algorithm,
        "own": own,
        "median_s": ref.median_s,
        "time_s": call.calls * ref.median_s,
        "default_time_s": call.calls * base.median_s,
        "delta_s": call.calls * (ref.median_s - base.median_s),
    } | _ratio_columns(found, same)


def price(
    policy: Policy, default: Policy, calls: Sequence[Call], priced: Sequence[int], facts: RunFacts
) -> PricedPolicy | None:
    """The policy's total over the `priced` calls (indices), or None where it cannot price
    one of them."""
    if any(policy.choices[i] is None for i in priced):
        return None
    refs = [facts.points[calls[i].key][policy.choice(i)] for i in priced]
    bases = [facts.points[calls[i].key][default.choice(i)] for i in priced]
    counts = [calls[i].calls for i in priced]
    rows = [
        _call_row(i, calls[i], policy.choice(i), policy.own[i], ref, base, facts)
        for i, ref, base in zip(priced, refs, bases, strict=True)
    ]
    points_sum = sum(n * r.median_s for r, n in zip(refs, counts, strict=True))
    default_sum = sum(n * b.median_s for b, n in zip(bases, counts, strict=True))
    totals = _unit_totals(refs, counts, facts.units)
    total, low, high = _median_launch(totals)
    default_totals = _unit_totals(bases, counts, facts.units)
    same = all(policy.choices[i] == default.choices[i] for i in priced)
    versus = None if same else compare(totals, default_totals)
    predictions = [facts.predicted.get(r.point_id) for r in refs]
    for row in rows:
        row["share_of_default"] = row["delta_s"] / default_sum if default_sum else None
    row = {
        "policy": policy.name,
        "kind": policy.kind,
        "library": policy.library,
        "total_s": total if total is not None else points_sum,
        "interval_low_s": None if math.isnan(low) else low,
        "interval_high_s": None if math.isnan(high) else high,
        "points_sum_s": points_sum,
        "default_total_s": _median_launch(default_totals)[0] or default_sum,
        "predicted_s": _predicted(predictions, counts),
        "covered_calls": sum(policy.own[i] for i in priced),
        "priced_calls": len(priced),
        "faster_calls": sum(r["verdict"] == FASTER for r in rows),
        "slower_calls": sum(r["verdict"] == SLOWER for r in rows),
        "gain_s": -sum(r["delta_s"] for r in rows if r["verdict"] == FASTER),
        "loss_s": sum(r["delta_s"] for r in rows if r["verdict"] == SLOWER),
        "gain_share": -sum(r["share_of_default"] or 0 for r in rows if r["verdict"] == FASTER),
        "loss_share": sum(r["share_of_default"] or 0 for r in rows if r["verdict"] == SLOWER),
    } | _ratio_columns(versus, same)
    return PricedPolicy(policy, row, rows)


def _predicted(predictions: Sequence[float | None], counts: Sequence[int]) -> float | None:
    """The model's job total; None where a pricing point has no prediction."""
    known = [p for p in predictions if p is not None]
    if len(known) < len(predictions):
        return None
    return sum(n * p for p, n in zip(known, counts, strict=True))


@dataclass(frozen=True)
class WorkloadReport:
    """Every policy priced for one workload on one run, what could not be priced, and the
    replays made for it (runners.jobs.replay; empty without one)."""

    workload: Workload
    run_id: str
    priced: list[PricedPolicy]
    notes: list[str]
    replays: list[dict[str, Any]] = field(default_factory=list)


def report_workload(path: Path, run_id: str, workload: Workload) -> WorkloadReport:
    """Price every policy and store the report, replacing the workload's last one on the run
    (tables workloads, workload_policies, workload_calls)."""
    report = workload_report(path, run_id, workload)
    replace_workload_report(
        path,
        run_id,
        workload.name or "workload",
        workload.as_json(),
        [p.row for p in report.priced],
        [call | {"policy": p.row["policy"]} for p in report.priced for call in p.calls],
        report.notes,
    )
    return report


def workload_report(path: Path, run_id: str, workload: Workload) -> WorkloadReport:
    """Price every policy the run allows for the workload's calls (see the module docstring)."""
    facts = RunFacts.load(path, run_id)
    calls = list(workload.calls)
    measured = {call.key: set(facts.points.get(call.key, {})) for call in calls}
    libraries = run_libraries(measured)
    best = {}
    if libraries:
        for call in calls:
            pick = facts.fastest_against_default(
                call.key, autotuned_of(libraries[0], call.collective)
            )
            if pick is not None:
                best[call.key] = pick
    found = policies(calls, measured, best)
    notes = _unpriced_notes(workload, found)
    if facts.provisional:
        notes.append(
            f"provisional: {facts.provisional}; measure again on a quiet machine before acting "
            "on these totals"
        )
    if not found:
        return WorkloadReport(workload, run_id, [], notes or ["the run measured none of its calls"])
    default = found[0]
    priced_calls = [i for i, choice in enumerate(default.choices) if choice is not None]
    priced = [p for policy in found if (p := price(policy, default, calls, priced_calls, facts))]
    return WorkloadReport(workload, run_id, priced, notes)


def _unpriced_notes(workload: Workload, found: list[Policy]) -> list[str]:
    """What the totals leave out: calls collsweep cannot measure, calls without a default."""
    notes = []
    missing = [
        call for i, call in enumerate(workload.calls) if not found or found[0].choices[i] is None
    ]
    if missing:
        share = sum(c.calls for c in missing) / workload.total_calls
        shown = ", ".join(
            f"{c.collective} {format_bytes(c.nbytes)} {c.dtype} {c.op} p={c.ranks}"
            for c in missing[:4]
        )
        notes.append(
            f"{len(missing)} of {len(workload.calls)} distinct calls ({share:.0%} of the job's "
            f"calls) have no default point in the run and are left out of every total: {shown}"
            + (" ..." if len(missing) > 4 else "")
        )
    return notes
