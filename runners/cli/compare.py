"""`collsweep compare RUN_A RUN_B`: run B against run A, for people and for CI scripts."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from runners import store
from runners.cli.common import UsageError, add_run_argument, add_store_option, reads_store
from runners.domain.collectives.collective import group_title
from runners.domain.names import checked_run_id
from runners.domain.sweep.run_labels import run_title, stored_tags
from runners.domain.units import aligned_lines, format_bytes, format_ratio
from runners.domain.verdict.run_comparison import FASTER, SLOWER
from runners.store.run_compare import compare_runs, no_overlap_reason

if TYPE_CHECKING:
    import pandas as pd

    from runners.store.run_compare import RunComparison

FAIL_ON = ("slower", "winner-change")


def run(args: argparse.Namespace) -> int:
    """Print run B against run A; exit 1 when a --fail-on condition is found."""
    run_a, run_b = checked_run_id(args.run_a), checked_run_id(args.run_b)
    if run_a == run_b:
        raise UsageError("RUN_A and RUN_B are the same run: name two runs")
    db: store.Store = args.db  # the command's one read-only Store (reads_store)
    found = compare_runs(db, run_a, run_b)
    if not found.summary["matching_points"]:
        why = no_overlap_reason(db, run_a, run_b) or "no point is ok in both"
        raise UsageError(f"{run_a} and {run_b} share no point to compare: {why}")
    failures = failed_conditions(found.summary, args.fail_on or [])
    labels = run_labels(db, run_a, run_b)
    if args.json:
        print(json.dumps(as_json(found, failures) | labels_json(labels), indent=1))
    else:
        print("\n".join(text_lines(found, failures, labels)))
    return 1 if failures else 0


def run_labels(path: store.Source, *run_ids: str) -> dict[str, dict[str, Any]]:
    """Each run's name and tags, keyed by run id (both runs exist: compare_runs checked)."""
    runs = {run_id: store.get_run(path, run_id) or {} for run_id in run_ids}
    return {
        run_id: {"name": run.get("name"), "tags": stored_tags(run.get("tags"))}
        for run_id, run in runs.items()
    }


def labels_json(labels: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """run_a_name, run_a_tags, run_b_name, run_b_tags (null and [] where none)."""
    mine_a, mine_b = labels.values()
    return {
        "run_a_name": mine_a["name"],
        "run_a_tags": mine_a["tags"],
        "run_b_name": mine_b["name"],
        "run_b_tags": mine_b["tags"],
    }


def failed_conditions(summary: dict[str, int], wanted: list[str]) -> list[str]:
    """The --fail-on conditions that hold: a decidedly slower point, a changed winner."""
    found = []
    if "slower" in wanted and summary["slower"]:
        found.append(f"{summary['slower']} points decidedly slower")
    if "winner-change" in wanted and summary["winner_changes"]:
        found.append(f"the decided winner changed in {summary['winner_changes']} cells")
    return found


def as_json(found: RunComparison, failures: list[str]) -> dict[str, Any]:
    """The comparison with stable keys: run_a, run_b, summary, points, winners, failures."""
    return {
        "run_a": found.run_a,
        "run_b": found.run_b,
        "summary": found.summary,
        "points": json.loads(found.points.to_json(orient="records")),
        "winners": [
            {
                "ranks": w.cell[0],
                "dtype": w.cell[1],
                "op": w.cell[2],
                "bytes": w.cell[3],
                "collective": w.cell[4],
                "winner_a": w.winner_a or None,
                "winner_b": w.winner_b or None,
                "changed": w.changed,
            }
            for w in found.winners
        ],
        "failures": failures,
    }


def text_lines(
    found: RunComparison, failures: list[str], labels: dict[str, dict[str, Any]] | None = None
) -> list[str]:
    """A summary sentence (each run by its title: 'name (run id) [tags]' where it has them),
    the decided changes largest first, the winner changes, and what failed."""
    labels = labels or {}
    title_a, title_b = (
        run_title(run_id, **labels.get(run_id, {})) for run_id in (found.run_a, found.run_b)
    )
    s = found.summary
    lines = [
        f"{title_b} against {title_a}: {s['matching_points']} matching points; "
        f"{s['slower']} decidedly slower, {s['faster']} decidedly faster, "
        f"{s['within_noise']} within noise (95% interval of the ratio of medians)"
    ]
    decided = found.points[found.points["change"].isin([SLOWER, FASTER])]
    if len(decided):
        order = (decided["b_over_a"].map(abs_log)).sort_values(ascending=False).index
        lines += ["", *change_table(decided.loc[order])]
    changed = [w for w in found.winners if w.changed]
    lines += [
        "",
        f"winners: {s['cells_decided_in_both']} cells decided in both runs; "
        f"the winner changed in {s['winner_changes']}" + (":" if changed else ""),
    ]
    for w in changed:
        ranks, dtype, op, nbytes, collective = w.cell
        title = group_title(ranks, dtype, op, collective)
        lines.append(f"  {title} {format_bytes(nbytes)}: {w.winner_a} -> {w.winner_b}")
    if failures:
        lines += ["", f"failing (--fail-on): {'; '.join(failures)}"]
    return lines


def abs_log(value: float) -> float:
    """How far a ratio is from 1, either way."""
    return abs(math.log(value))


def change_table(rows: pd.DataFrame) -> list[str]:
    """The decided changes as an aligned table, units in the headers."""
    header = ("algorithm", "p", "dtype", "op", "size", "B / A", "95% interval", "B is")
    body = [
        (
            r.algorithm,
            str(r.ranks),
            r.dtype,
            r.op,
            format_bytes(r.bytes),
            format_ratio(r.b_over_a),
            f"{format_ratio(r.ratio_low)} .. {format_ratio(r.ratio_high)}",
            f"decidedly {r.change}",
        )
        for r in rows.itertuples(index=False)
    ]
    return aligned_lines([header, *body])


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "compare",
        help="run B against run A: decided slow-downs, speed-ups and winner changes",
        description="Compare two stored runs at every point they share (same algorithm, "
        "ranks, size, dtype and op): B's median over A's with a 95% interval from both "
        "points' launch-to-launch intervals, called decidedly slower or faster only when the "
        "interval excludes 1; and every cell both runs decided, flagged where the winner "
        "changed. Exit status 1 when a --fail-on condition holds (for CI), 2 on bad input "
        "and when the runs share no point.",
    )
    add_run_argument(parser, "run_a", metavar="RUN_A", help="the baseline run (id or name)")
    add_run_argument(parser, "run_b", metavar="RUN_B", help="the run compared with it")
    parser.add_argument(
        "--fail-on",
        action="append",
        choices=FAIL_ON,
        help="exit 1 when a point is decidedly slower in B (slower) or a cell's decided "
        "winner changed (winner-change); may be given twice",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (stable keys)")
    add_store_option(parser)
    reads_store(parser)
    parser.set_defaults(handler=run)
