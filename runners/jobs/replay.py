"""Replaying a workload on real ranks under each policy, and storing the replayed job times
(the plan: runners.domain.sweep.replay; the ranks: runners.ranks.replay_worker)."""

from __future__ import annotations

import json
import secrets
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners import store
from runners.domain.errors import CollsweepError
from runners.domain.sweep.job_file import ReplayJob
from runners.domain.sweep.launcher import default_knobs
from runners.domain.sweep.replay import ReplayLaunch, plan_replay, repetitions, replay_job
from runners.domain.sweep.spec import STARTUP_GRACE_S, SweepSpec, parse_spec
from runners.domain.workload.file import Workload
from runners.host.machine import physical_cores
from runners.jobs import launch
from runners.store.workloads import add_replays, set_workload_notes


class ReplayFailed(CollsweepError):
    """A replay launch that did not finish."""


def _estimates(report, subset: Sequence[int], counts: dict[int, int]) -> dict[str, float]:
    """Per policy, the replayed sequence's time summed from the points' medians."""
    times = {i: counts.get(i, 0) for i in subset}
    return {
        p.row["policy"]: sum(
            times[c["call_index"]] * c["median_s"] for c in p.calls if c["call_index"] in times
        )
        for p in report.priced
    }


def _run_launch(
    spec: SweepSpec, ranks: int, job: ReplayJob, group: ReplayLaunch, timeout: float
) -> dict[str, dict[str, Any]]:
    """One replay launch; each policy's event: its timed replays, the sequence's time with
    Barriers per repetition, and the calls alone (runners.ranks.replay_worker)."""
    knobs = {**default_knobs(ranks, spec.thread_level, cores=physical_cores()), **group.env}
    with launch.job_file(job) as path:
        ranked = launch.Job(
            ranks,
            launch.RANKS_ENTRY,
            ("replay", path),
            knobs,
            spec.launcher,
            spec.launcher_shell,
            group.library,
        )
        result = launch.run(ranked, timeout)
    if result.returncode != 0 or result.timed_out:
        tail = " ".join(result.stderr.strip().splitlines()[-2:])
        why = "timed out" if result.timed_out else f"exit status {result.returncode}"
        raise ReplayFailed(f"replay launch of {', '.join(group.policies)} failed ({why}): {tail}")
    found = {}
    for line in result.stdout.splitlines():
        if line.startswith("{") and '"replayed"' in line:
            event = json.loads(line)
            found[event["policy"]] = event
    return found


MEASURES = ("replayed_s", "sequenced_s", "isolated_s")


@dataclass(frozen=True)
class Replaying:
    """One `--replay`: where it stores, what it replays, the run's spec (launcher, thread
    level, tuning file) and its id."""

    path: Path
    run_id: str
    workload: Workload
    report: Any  # runners.analysis.workload_report.WorkloadReport (read by its fields)
    spec: SweepSpec
    launches: int
    replay_id: str = field(default_factory=lambda: f"replay-{secrets.token_hex(4)}")

    @property
    def name(self) -> str:
        """The workload's name in the store."""
        return self.workload.name or "workload"


def replay_workload(
    path: Path, run_id: str, workload: Workload, report, launches: int
) -> list[dict[str, Any]]:
    """Replay every replayable policy over `launches` rounds per group size; store each timed
    replay (and, with the report's notes, why a policy was not replayed) and return per policy
    the replayed job time beside the sum of its points, and the two steps between them (the
    calls alone in the replay's launches; in the job's order with a Barrier before each)."""
    run = store.get_run(path, run_id) or {}
    spec = parse_spec(run.get("spec_toml") or "")
    replaying = Replaying(path, run_id, workload, report, spec, launches)
    priced = sorted({c["call_index"] for c in report.priced[0].calls}) if report.priced else []
    by_ranks: dict[int, list[int]] = {}
    for i in priced:
        by_ranks.setdefault(workload.calls[i].ranks, []).append(i)
    sums: dict[str, dict[str, float]] = {}
    seen: dict[str, int] = {}
    for ranks, subset in sorted(by_ranks.items()):
        for name, values in _replay_size(replaying, ranks, subset).items():
            mine = sums.setdefault(name, dict.fromkeys((*MEASURES, "estimate_s"), 0.0))
            for key, value in values.items():
                mine[key] += value
            seen[name] = seen.get(name, 0) + 1
    set_workload_notes(path, run_id, replaying.name, report.notes)
    return [
        {"policy": name, **values, "launches": launches, "replay_id": replaying.replay_id}
        for name, values in sums.items()
        if seen[name] == len(by_ranks)
    ]


def _replay_size(replaying: Replaying, ranks: int, subset: list[int]) -> dict[str, dict]:
    """Replay the calls of one group size; per policy the median launch's replay, sequence
    and calls-alone times, and the estimate from the run's points."""
    workload, report = replaying.workload, replaying.report
    position = {index: n for n, index in enumerate(subset)}
    remapped = [position[i] for i in workload.sequence() if i in position]
    estimates = _estimates(report, subset, workload.sequence_counts())
    policies = [p.policy for p in report.priced]
    groups, notes = plan_replay(policies, subset, replaying.spec.tuning_file)
    report.notes.extend(f"replay p={ranks}: {note}" for note in notes)
    calls = [workload.calls[i] for i in subset]
    per_launch: dict[str, dict[str, list[float]]] = {}
    for index in range(replaying.launches):
        for group in groups:
            slowest = max(estimates[name] for name in group.policies)
            reps = repetitions(slowest)
            timeout = STARTUP_GRACE_S + 60 + 20 * slowest * (reps + 1) * len(group.policies)
            job = replay_job(calls, remapped, group, index, reps)
            found = _run_launch(replaying.spec, ranks, job, group, timeout)
            rows = _rows(found, ranks, index, group)
            add_replays(replaying.path, replaying.run_id, replaying.name, rows, replaying.replay_id)
            for name, event in found.items():
                mine = per_launch.setdefault(name, {key: [] for key in MEASURES})
                mine["replayed_s"].append(statistics.median(event["seconds"]))
                mine["sequenced_s"].append(statistics.median(event["sequenced_s"]))
                mine["isolated_s"].append(statistics.median(event["isolated_s"]))
    return {
        name: {key: statistics.median(values) for key, values in measures.items()}
        | {"estimate_s": estimates[name]}
        for name, measures in per_launch.items()
    }


def _rows(found: dict[str, dict], ranks: int, index: int, group: ReplayLaunch) -> list[dict]:
    """The replays table's rows of one launch."""
    return [
        {"policy": name, "ranks": ranks, "launch": index, "repetition": r, "replayed_s": seconds,
         "sequenced_s": event["sequenced_s"][r], "isolated_s": event["isolated_s"][r],
         "library": group.library}
        for name, event in found.items()
        for r, seconds in enumerate(event["seconds"])
    ]  # fmt: skip
