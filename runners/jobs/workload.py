"""Answering for a whole job: price a workload on a run and store the report, and replay it.

cli -> here -> analysis (pricing) and store; the replay's ranks run in runners.ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners.analysis.workload_report import WorkloadReport, workload_report
from runners.domain.workload import Workload
from runners.store.workloads import replace_workload_report


@dataclass(frozen=True)
class AnsweredWorkload(WorkloadReport):
    """A stored report, with the replays made for it (empty without --replay)."""

    replays: list[dict[str, Any]] = field(default_factory=list)


def report_workload(
    path: Path, run_id: str, workload: Workload, replay: bool = False, launches: int = 5
) -> AnsweredWorkload:
    """Price every policy, store the report (replacing the workload's last one on the run)."""
    report = workload_report(path, run_id, workload)
    name = workload.name or "workload"
    replace_workload_report(
        path,
        run_id,
        name,
        workload.as_json(),
        [p.row for p in report.priced],
        [call | {"policy": p.row["policy"]} for p in report.priced for call in p.calls],
        report.notes,
    )
    replays: list[dict[str, Any]] = []
    if replay:
        from runners.jobs.replay import replay_workload

        replays = replay_workload(path, run_id, workload, report, launches)
    return AnsweredWorkload(report.workload, report.run_id, report.priced, report.notes, replays)
