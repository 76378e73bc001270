"""How a workload and its report read in the terminal: `workload show`, `record`, `workload
report` and `sweep --workload` print the same text."""

from __future__ import annotations

import math
from typing import Any

from runners.domain.units import format_bytes, format_ratio, format_seconds, wrapped
from runners.domain.workload.file import Workload

SHOWN_CALLS = 8  # per-call lines printed for the chosen policy (all are stored and in --json)


def show_text(workload: Workload) -> str:
    """The workload as a table, with where it came from and what its maker noted."""
    kind = workload.source.get("kind", "unknown")
    lines = [
        f"workload {workload.name or '(unnamed)'}: {len(workload.calls)} distinct calls, "
        f"{workload.total_calls} calls in all (source: {kind})",
        f"{'collective':<15} {'bytes':>10} {'dtype':<8} {'op':<6} {'ranks':>5} "
        f"{'root':>4} {'calls':>8}",
    ]
    for call in workload.calls:
        root = "-" if call.root is None else str(call.root)
        unmeasured = "" if call.measurable else "  (not measurable by collsweep)"
        lines.append(
            f"{call.collective:<15} {format_bytes(call.nbytes):>10} {call.dtype:<8} "
            f"{call.op:<6} {call.ranks:>5} {root:>4} {call.calls:>8}{unmeasured}"
        )
    ordered = f"{workload.sequence_length} calls in recorded order" if workload.order else "none"
    lines.append(f"order: {ordered}")
    lines += [f"note: {note}" for note in workload.notes]
    return "\n".join(lines)


SHOWN_CALLS = 8  # per-call lines printed for the chosen policy (all are stored and in --json)


def _seconds(value: float | None) -> str:
    return "-" if value is None else format_seconds(value)


def _versus(row: dict[str, Any]) -> str:
    if row["ratio"] is None:
        return "-"
    return (
        f"{format_ratio(row['ratio'])} [{format_ratio(row['ratio_low'])}, "
        f"{format_ratio(row['ratio_high'])}] {row['verdict']}"
    )


def _effects(row: dict[str, Any]) -> str:
    """Which calls the policy speeds up and slows down, and by how much of the default job."""
    parts = []
    for count, share, word in (
        ("faster_calls", "gain_share", "faster"),
        ("slower_calls", "loss_share", "slower"),
    ):
        if row[count]:
            parts.append(f"{row[count]} {word} ({100 * row[share]:.1f}% of the job)")
    return "; ".join(parts) or "-"


def _interval_text(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "-"
    return f"[{format_seconds(low)}, {format_seconds(high)}]"


def policy_lines(report) -> list[str]:
    """One line per policy: total, interval, against the default, effects, prediction."""
    names = [
        p.row["policy"]
        if p.row["kind"] in (p.row["policy"], "algorithm")
        else f"{p.row['policy']} ({p.row['kind']})"
        for p in report.priced
    ]
    width = max(len("policy"), *map(len, names))
    lines = [
        f"{'policy':<{width}}  {'job total':>9}  {'95% interval':<20}  {'vs default':<34}  "
        f"{'predicted':>9}  calls decidedly faster / slower"
    ]
    for name, priced in zip(names, report.priced, strict=True):
        row = priced.row
        interval = _interval_text(row["interval_low_s"], row["interval_high_s"])
        lines.append(
            f"{name:<{width}}  {format_seconds(row['total_s']):>9}  {interval:<20}  "
            f"{_versus(row):<34}  {_seconds(row['predicted_s']):>9}  {_effects(row)}"
        )
    return lines


def call_lines(priced) -> list[str]:
    """The policy's calls, costliest first: each one's share of the job and its effect."""
    whole = sum(call["time_s"] for call in priced.calls) or 1.0
    lines = []
    for call in sorted(priced.calls, key=lambda c: -c["time_s"])[:SHOWN_CALLS]:
        effect = "" if call["ratio"] is None else f"; {_versus(call)} vs default"
        lines.append(
            f"  {call['collective']} {format_bytes(call['bytes'])} {call['dtype']} "
            f"p={call['ranks']} x{call['calls']}: {call['algorithm']}, "
            f"{format_seconds(call['time_s'])} ({100 * call['time_s'] / whole:.0f}%){effect}"
        )
    hidden = len(priced.calls) - SHOWN_CALLS
    return lines + ([f"  ... {hidden} more (--json lists all)"] if hidden > 0 else [])


def report_text(report) -> str:
    """The report for people: the policies, where the default job's time goes, and what the
    best policy changes."""
    workload = report.workload
    head = (
        f"workload {workload.name or '(unnamed)'} on run {report.run_id}: "
        f"{len(workload.calls)} distinct calls, {workload.total_calls} calls in all"
    )
    if not report.priced:
        return "\n".join([head, *[f"note: {n}" for n in report.notes]])
    lines = [head, *policy_lines(report)]
    default = report.priced[0]
    lines.append(f"where the job's time goes under {default.row['policy']} (calls x median):")
    lines += call_lines(default)
    lines += gap_lines(default)
    best = next((p for p in report.priced if p.row["kind"] == "best"), None)
    if best is not None and best.policy.choices != default.policy.choices:
        lines.append("best's choice per call:")
        lines += call_lines(best)
    prose = [*replay_lines(report), *[f"note: {n}" for n in report.notes]]
    lines += [wrapped(line) for line in prose]
    return "\n".join(lines)


GAP_SHARE = 0.01  # a breakdown further than this from its total has its gap said


def gap_lines(priced) -> list[str]:
    """The gap between a policy's total and the sum of its breakdown, named and sized where it
    is more than 1%: the total is the median launch's job total, the breakdown each call's
    median, and launches that differ make the two differ."""
    parts = sum(call["time_s"] for call in priced.calls)
    total = priced.row["total_s"]
    if not total or abs(parts - total) <= GAP_SHARE * total:
        return []
    return [
        f"  these sum to {format_seconds(parts)}; the total {format_seconds(total)} is the "
        f"median launch's job total, {format_ratio(total / parts)} the sum: the launches "
        "timed the calls differently (each call's median comes from its own launches)"
    ]


FACTORS = (  # (replay's measure over the one before it, what that step changes)
    ("isolated_s", "estimate_s", "the calls alone then vs in the sweep (machine state)"),
    ("sequenced_s", "isolated_s", "the job's order (cache state between calls)"),
    ("replayed_s", "sequenced_s", "back to back without Barriers"),
)


def replay_verdicts(report) -> list[str]:
    """Warnings where a replay does not confirm the points: a replayed total outside the
    points' 95% interval (with the step that moved it most), and a policy the points call
    decidedly faster or slower than the default whose replay says the opposite."""
    rows = {p.row["policy"]: p.row for p in report.priced}
    replays = {r["policy"]: r for r in report.replays}
    lines = []
    for name, r in replays.items():
        row = rows.get(name, {})
        low, high = row.get("interval_low_s"), row.get("interval_high_s")
        if low is None or high is None or low <= r["replayed_s"] <= high:
            continue
        step, factor = max(
            ((words, r[a] / r[b]) for a, b, words in FACTORS if r.get(a) and r.get(b)),
            key=lambda item: abs(math.log(item[1])),
            default=("unknown", 1.0),
        )
        lines.append(
            f"warning: the replay does not confirm the points for {name}: "
            f"{format_seconds(r['replayed_s'])} is outside their 95% interval "
            f"{_interval_text(low, high)}; the largest factor: {step}, {format_ratio(factor)}"
        )
    lines += _reversals(rows, replays)
    return lines


def _reversals(rows: dict[str, dict], replays: dict[str, dict]) -> list[str]:
    """Policies whose replay against the default's replay says the opposite of the points'
    decided verdict."""
    default = next((n for n, row in rows.items() if row["kind"] == "default"), None)
    if default not in replays:
        return []
    lines = []
    for name, r in replays.items():
        verdict = rows.get(name, {}).get("verdict")
        replayed = r["replayed_s"] / replays[default]["replayed_s"]
        if (verdict == "faster" and replayed > 1) or (verdict == "slower" and replayed < 1):
            lines.append(
                f"warning: the replay reverses the points on {name}: the points say "
                f"{format_ratio(rows[name]['ratio'])} {verdict} than {default}, the replays "
                f"{format_ratio(replayed)}"
            )
    return lines


def replay_lines(report) -> list[str]:
    """Per replayed policy: the replayed job time beside the total from the run's points, and
    where the difference comes from, step by step; then the warnings where the replay does
    not confirm the points."""
    lines = []
    for r in report.replays:
        lines.append(
            f"replay {r['policy']}: {format_seconds(r['replayed_s'])} per job (median of "
            f"{r['launches']} launches); the run's points say {format_seconds(r['estimate_s'])}: "
            f"replay / points {format_ratio(r['replayed_s'] / r['estimate_s'])} = "
            f"{format_ratio(r['isolated_s'] / r['estimate_s'])} the calls alone then vs in the "
            f"sweep (machine state; and the launch's settings for a forced policy) x "
            f"{format_ratio(r['sequenced_s'] / r['isolated_s'])} in "
            f"the job's order (cache state between calls) x "
            f"{format_ratio(r['replayed_s'] / r['sequenced_s'])} back to back without Barriers"
        )
    return lines + replay_verdicts(report)
