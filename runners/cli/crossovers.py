"""`collsweep crossovers`: a run's measured and predicted crossovers and the model's agreement,
or its verdict (--summary)."""

from __future__ import annotations

import argparse
import json
import sys

import pandas as pd

from runners import store
from runners.analysis import run_analysis
from runners.analysis.verdict import run_verdict
from runners.cli.common import (
    add_run_argument,
    add_store_option,
    reads_store,
    render,
)
from runners.domain.collectives.collective import group_title
from runners.domain.libraries.catalog import local_name
from runners.domain.model.calibration_id import library_free, with_caveat
from runners.domain.sweep.run_labels import run_title
from runners.domain.sweep.simulated_run import found_by
from runners.domain.units import aligned_lines, format_bytes, wrapped
from runners.domain.verdict.speedup import Speedup, margin_words
from runners.domain.verdict.summary import INFERRED, PICKED
from runners.domain.verdict.winner_table import margin_of
from runners.store import run_reads


def _crossovers_table(frame, calibrations: list[str], found: str = "measured") -> str:
    """Per group, one row per pair of algorithms: the measured crossovers with their intervals
    beside the predicted ones of the run's most direct calibration (`calibrations` in order;
    --format csv or json gives every row), sizes in B/KiB/MiB; `found`: how the run's points
    were found (a simulated run's say 'simulated')."""

    def sizes(rows, interval: bool) -> str:
        shown = [
            format_bytes(round(r.bytes))
            + (f" [{format_bytes(r.low_bytes)}..{format_bytes(r.high_bytes)}]" if interval else "")
            for r in rows.sort_values("bytes").itertuples()
        ]
        return ", ".join(shown) or "-"

    # each library's own namesake (`fitted:<run>@nccl`) stands with the run's calibration
    frame = frame.assign(calibration_id=frame.calibration_id.map(library_free))
    predicted = frame[frame.kind == "predicted"]
    used = next((c for c in calibrations if c in set(predicted.calibration_id)), None)
    pairs = [" / ".join(sorted(p)) for p in zip(frame.algorithm_a, frame.algorithm_b, strict=True)]
    frame = frame.assign(pair=pairs)
    blocks = [f"predicted with calibration {with_caveat(used) if used else '(none)'}"]
    keys = ["collective", "ranks", "dtype", "op"]
    for (collective, ranks, dtype, op), group in frame.groupby(keys, sort=False):
        rows = [
            {
                "pair": pair,
                f"{found} [interval]": sizes(mine[mine.kind == "measured"], interval=True),
                "predicted": sizes(mine[mine.calibration_id == used], interval=False),
            }
            for pair, mine in group.groupby("pair")
        ]
        table = pd.DataFrame(rows).to_string(index=False)
        blocks.append(f"\n{group_title(ranks, dtype, op, collective)}:\n{table}")
    return "\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    """Print a run's measured and predicted crossovers (and, as a table, its agreement)."""
    path: store.Store = args.db  # the command's one read-only Store (reads_store)
    frame = run_analysis.crossovers_frame(path, args.run)
    inferred = run_reads.stored_inferences(path, args.run)
    if args.summary and args.format == "json":
        cells = verdict_cells(run_analysis.winners_frame(path, args.run), inferred)
        print(json.dumps(cells, indent=1))
        return 0
    if args.summary:
        run = store.get_run(path, args.run) or {}
        lines = run_verdict(path, run) if run else []
        if lines and (run.get("name") or run.get("tags")):  # the run as people call it
            lines = [f"verdict of {run_title(args.run, run.get('name'), run.get('tags'))}", *lines]
        print("\n".join(map(wrapped, lines)) if lines else f"run {args.run} has no analysis yet")
        return 0
    agreement = run_analysis.agreement_frame(path, args.run)
    winners = run_analysis.winners_frame(path, args.run)
    if agreement.empty and winners.empty and frame.empty:
        print(
            f"run {args.run} has no analysis yet: `collsweep analyze {args.run}`", file=sys.stderr
        )
    if args.format != "table":
        print(render(frame, args.format))
        return 0
    calibrations = store.calibration_order(path, args.run)
    found = found_by((store.get_run(path, args.run) or {}).get("spec_toml"))
    print(_crossovers_table(frame, calibrations, found) if len(frame) else "(no crossovers)")
    decided = (
        "the paired launches agree"
        if found == "measured"
        else "their times differ by more than the run's margin"
    )
    print(f"\nwinners: the fastest two per cell; decided when {decided}")
    print(_winners_table(winners) if len(winners) else "(no cells with two algorithms)")
    if len(inferred):
        print("\ninferred, not measured (an adaptive run's cells: docs/guide/adaptive.md)")
        print(_inferred_table(inferred))
    print(f"\nagreement: how often the model's pick is the {found} best (cells with 2+ models)")
    print(
        _agreement_table(agreement)
        if len(agreement)
        else "(no cells with two modelled algorithms)"
        if len(winners)
        else "(no analysis)"
    )
    return 0


def _winners_table(winners: pd.DataFrame) -> str:
    """The winners for reading, a block per group: sizes in B/KiB/MiB, how much slower the
    runner-up is and the winner's speed-up over the default, each with its interval
    (runners.domain.verdict.speedup)."""
    header = ("size", "winner", "runner-up", "runner-up is", "against the default")
    blocks = []
    keys = ["collective", "ranks", "dtype", "op"]
    for (collective, ranks, dtype, op), group in winners.groupby(keys, sort=False):
        body = [
            (
                format_bytes(row["bytes"]),
                local_name(row["winner"]),
                local_name(row["runner_up"]),
                _margin(row),
                Speedup.from_row(row).text(),
            )
            for row in group.to_dict("records")
        ]
        title = group_title(int(ranks), dtype, op, collective)
        blocks.append("\n".join([title, *aligned_lines([header, *body])]))
    return "\n\n".join(blocks)


def _inferred_table(inferred: pd.DataFrame) -> str:
    """An adaptive run's unmeasured cells, a block per group: the inferred winner, whether it
    is settled between two measured sizes or the model's pick, and why."""
    header = ("size", "inferred winner", "how", "why")
    blocks = []
    keys = ["collective", "ranks", "dtype", "op"]
    for (collective, ranks, dtype, op), group in inferred.groupby(keys, sort=False):
        body = [
            (
                format_bytes(row["bytes"]),
                local_name(row["winner"]),
                INFERRED if row["settled"] else PICKED,
                row["reason"],
            )
            for row in group.to_dict("records")
        ]
        title = group_title(int(ranks), dtype, op, collective)
        blocks.append("\n".join([title, *aligned_lines([header, *body])]))
    return "\n\n".join(blocks)


def _margin(row: dict) -> str:
    """How much slower the runner-up is, in words; 'unknown' without paired launches."""
    margin = margin_of(row)
    return "unknown" if margin is None else margin_words(margin, row["verdict"] == "decided")


def verdict_cells(winners: pd.DataFrame, inferred: pd.DataFrame | None = None) -> list[dict]:
    """The verdict per cell for scripts (`--summary --format json`): collective, ranks, dtype,
    op, bytes, winner, default, speedup, speedup_low, speedup_high, speedup_verdict, decided
    (the winner over the runner-up), measured; an adaptive run's unmeasured cells too, each
    with measured false, its `inferred` ('inferred' or 'inferred: the model picks') and
    `reason`, and no speed-up."""
    cells = _inferred_cells(inferred) if inferred is not None else []
    for row in winners.to_dict("records"):
        speedup = Speedup.from_row(row)
        default = row["default_algorithm"]
        cells.append(
            {
                "collective": row["collective"],
                "ranks": int(row["ranks"]),
                "dtype": row["dtype"],
                "op": row["op"],
                "bytes": int(row["bytes"]),
                "winner": row["winner"],
                "default": default if isinstance(default, str) else None,
                "speedup": speedup.ratio,
                "speedup_low": speedup.low,
                "speedup_high": speedup.high,
                "speedup_verdict": speedup.verdict,
                "decided": row["verdict"] == "decided",
                "measured": True,
            }
        )
    keys = ("collective", "ranks", "dtype", "op", "bytes")
    return sorted(cells, key=lambda cell: tuple(cell[k] for k in keys))


def _inferred_cells(inferred: pd.DataFrame) -> list[dict]:
    """verdict_cells' entries of an adaptive run's unmeasured cells."""
    return [
        {
            "collective": row["collective"],
            "ranks": int(row["ranks"]),
            "dtype": row["dtype"],
            "op": row["op"],
            "bytes": int(row["bytes"]),
            "winner": row["winner"],
            "default": None,
            "speedup": None,
            "speedup_low": None,
            "speedup_high": None,
            "speedup_verdict": "unknown",
            "decided": bool(row["settled"]),
            "measured": False,
            "inferred": INFERRED if row["settled"] else PICKED,
            "reason": row["reason"],
        }
        for row in inferred.to_dict("records")
    ]


def _agreement_table(agreement) -> str:
    """The agreement rows in percentages: exact pick, right schedule, median slowdown."""
    shown = agreement.assign(
        **{
            column: agreement[column].map(lambda v: "-" if v != v else f"{v:.0%}")
            for column in ("model_pick_share", "same_model_share", "median_slowdown")
        }
    ).rename(
        columns={
            "model_pick_share": "exact pick",
            "same_model_share": "right schedule",
            "median_slowdown": "median slowdown",
            "points": "cells",
        }
    )
    columns = ["scope", "calibration_id", "cells", "exact pick", "right schedule"]
    return shown[[*columns, "median slowdown"]].to_string(index=False)


def add(sub: argparse._SubParsersAction) -> None:
    crossovers = sub.add_parser(
        "crossovers",
        help="a run's measured and predicted crossovers, and the model's agreement",
        description="For every pair of algorithms and (ranks, dtype, op) of RUN: where their "
        "order, decided by the paired launches, flips between two measured sizes, and where "
        "each calibration's model predicts it (T_A = T_B within the swept sizes). algorithm_a "
        "is the faster below the crossover. As a table, also the winners per cell and how "
        "often the model picks the measured best. Rows: the crossovers table (docs/schema.md). "
        "--summary prints the verdict instead: per group the winner along the size axis "
        "(ties where the launches disagree) and where it changes, measured beside predicted.",
    )
    add_run_argument(crossovers, "run", help="run id or name (see collsweep runs)")
    crossovers.add_argument(
        "--summary",
        action="store_true",
        help="the verdict per group, not the tables; with --format json, one object per cell "
        "(winner, default, speedup with its interval, decided)",
    )
    crossovers.add_argument("--format", choices=("table", "csv", "json"), default="table")
    add_store_option(crossovers)
    reads_store(crossovers)
    crossovers.set_defaults(handler=run)
