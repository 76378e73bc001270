"""`collsweep workload report W --run RUN`: the whole job's communication time per policy."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from runners.cli.common import UsageError, add_store_option, store_path
from runners.domain.names import run_id_problem
from runners.domain.units import format_bytes, format_ratio, format_seconds
from runners.domain.workload.file import load_workload

MAX_REPLAY_LAUNCHES = 100
SHOWN_CALLS = 8  # per-call lines printed for the chosen policy (all are stored and in --json)


def cmd_report(args: argparse.Namespace) -> int:
    """Price every policy for the workload on the run, store the report and print it."""
    workload = load_workload(Path(args.workload))
    if run_id_problem(args.run):
        raise UsageError(str(run_id_problem(args.run)))
    path = store_path(args)
    from runners import store
    from runners.analysis.workload_report import report_workload

    if store.get_run(path, args.run) is None:
        raise UsageError(f"no run {args.run} in {path}: `collsweep runs` lists them")
    if not 1 <= args.launches <= MAX_REPLAY_LAUNCHES:
        raise UsageError(
            f"--launches must be between 1 and {MAX_REPLAY_LAUNCHES}, got {args.launches}"
        )
    report = report_workload(path, args.run, workload)
    if args.replay:
        from runners.jobs.replay import replay_workload

        report.replays.extend(replay_workload(path, args.run, workload, report, args.launches))
    print(json.dumps(report_json(report), indent=1) if args.json else report_text(report))
    return 0


def report_json(report) -> dict[str, Any]:
    """The report as JSON: {"workload", "run_id", "notes", "policies": [{"policy", "total_s",
    "interval_low_s", "interval_high_s", ..., "replayed_s" where replayed, "calls": [...]}],
    "replays": [...]}."""
    replays = {r["policy"]: r for r in report.replays}
    return {
        "workload": report.workload.name,
        "run_id": report.run_id,
        "notes": report.notes,
        "policies": [
            p.row
            | {"replayed_s": replays.get(p.row["policy"], {}).get("replayed_s"), "calls": p.calls}
            for p in report.priced
        ],
        "replays": list(replays.values()),
    }


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
    best = next((p for p in report.priced if p.row["kind"] == "best"), None)
    if best is not None and best.policy.choices != default.policy.choices:
        lines.append("best's choice per call:")
        lines += call_lines(best)
    lines += replay_lines(report)
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines)


def replay_lines(report) -> list[str]:
    """Per replayed policy: the replayed job time beside the total from the run's points, and
    where the difference comes from, step by step."""
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
    return lines


def add_report(actions: argparse._SubParsersAction) -> None:
    parser = actions.add_parser(
        "report",
        help="the whole job's communication time under each policy, from a run's points",
        description="Price the workload's calls with the run's points under every policy: "
        "default (each library's autotuned call), each algorithm for every call it ran, best "
        "(the decided winner per call) and each tuned file the run timed; each total with a "
        "95% interval over paired launches, its ratio to the default, the calls it speeds "
        "up and slows down, and the model's prediction. The report is stored with the run "
        "(tables workload_policies, workload_calls) for the dashboard's Workload page.",
    )
    parser.add_argument("workload", metavar="W", help="a workload file")
    parser.add_argument("--run", required=True, help="the run whose points price the calls")
    parser.add_argument(
        "--json", action="store_true", help='{"policies": [{"policy", "total_s", ...}]}'
    )
    parser.add_argument(
        "--replay",
        action="store_true",
        help="also run the workload's calls in recorded order on real ranks under each "
        "replayable policy and store the replayed job time beside the sum of points",
    )
    parser.add_argument(
        "--launches", type=int, default=5, help="launches per policy of a replay (default 5)"
    )
    add_store_option(parser)
    parser.set_defaults(handler=cmd_report)
