"""Writing and reading a run's workload reports and replays (schema 10; no MPI).

A report replaces everything stored for its (run, workload) in one transaction: the workload's
JSON, each policy's row and each call's row. Replays add rows: every replay is kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runners.store.reads import _lookup
from runners.store.store import writing
from runners.store.writes import _insert, _now

REPORT_TABLES = ("workloads", "workload_policies", "workload_calls")


def replace_workload_report(
    path: Path | str,
    run_id: str,
    workload: str,
    body: dict[str, Any],
    policies: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    notes: Sequence[str] = (),
) -> None:
    """Store a workload's report on a run in place of the one before (one transaction)."""
    keyed = {"run_id": run_id, "workload": workload}
    with writing(path) as con:
        for table in REPORT_TABLES:
            con.execute(
                f"DELETE FROM {table} WHERE run_id = ? AND workload = ?", [run_id, workload]
            )
        _insert(
            con,
            "workloads",
            [
                keyed
                | {
                    "body": body,
                    "notes": list(notes),
                    "reported_at": _now(),
                }
            ],
        )
        _insert(con, "workload_policies", [keyed | row for row in policies])
        _insert(con, "workload_calls", [keyed | row for row in calls])


def add_replays(
    path: Path | str, run_id: str, workload: str, rows: list[dict[str, Any]], replay_id: str
) -> None:
    """Store replayed job times (policy, ranks, launch, repetition, replayed_s, ...) of one
    `--replay` invocation."""
    keyed = {"run_id": run_id, "workload": workload, "replay_id": replay_id, "replayed_at": _now()}
    with writing(path) as con:
        _insert(con, "replays", [keyed | row for row in rows])


def set_workload_notes(path: Path | str, run_id: str, workload: str, notes: Sequence[str]) -> None:
    """Replace the notes of a stored report (a replay adds why a policy was not replayed)."""
    with writing(path) as con:
        con.execute(
            "UPDATE workloads SET notes = ? WHERE run_id = ? AND workload = ?",
            [json.dumps(list(notes)), run_id, workload],
        )


def stored_workloads(path: Path | str, run_id: str) -> list[dict[str, Any]]:
    """The workloads reported on a run: name, JSON body and notes."""
    rows = _lookup(
        path,
        "SELECT workload, body, notes FROM workloads WHERE run_id = ? ORDER BY workload",
        [run_id],
    )
    return [r | {"notes": r["notes"] or []} for r in rows]  # JSON columns come back decoded
