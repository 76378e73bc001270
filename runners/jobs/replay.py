"""Replaying a workload on real ranks under each policy, and storing the replayed job times
(the plan: runners.domain.replay; the ranks: runners.ranks.replay_worker)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runners import store
from runners.domain.errors import CollsweepError
from runners.domain.launcher import default_knobs
from runners.domain.replay import ReplayLaunch, plan_replay, repetitions, replay_job
from runners.domain.spec import STARTUP_GRACE_S, SweepSpec, parse_spec
from runners.domain.workload import Workload
from runners.jobs import launch
from runners.store.workloads import add_replays


class ReplayFailed(CollsweepError):
    """A replay launch that did not finish."""


def _estimates(report, subset: Sequence[int], sequence: Sequence[int]) -> dict[str, float]:
    """Per policy, the replayed sequence's time summed from the points' medians."""
    times = {i: sequence.count(i) for i in subset}
    return {
        p.row["policy"]: sum(
            times[c["call_index"]] * c["median_s"] for c in p.calls if c["call_index"] in times
        )
        for p in report.priced
    }


def _run_launch(
    spec: SweepSpec, ranks: int, job: dict[str, Any], group: ReplayLaunch, timeout: float
) -> dict[str, dict[str, Any]]:
    """One replay launch; each policy's event: its timed replays, the sequence's time with
    Barriers per repetition, and the calls alone (runners.ranks.replay_worker)."""
    knobs = {**default_knobs(ranks, spec.thread_level), **group.env}
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


def replay_workload(
    path: Path, run_id: str, workload: Workload, report, launches: int
) -> list[dict[str, Any]]:
    """Replay every replayable policy over `launches` rounds per group size; store each timed
    replay and return per policy the replayed job time beside the sum of its points, and the
    two steps between them (the calls alone in the replay's launches; in the job's order with
    a Barrier before each)."""
    run = store.get_run(path, run_id) or {}
    spec = parse_spec(run["spec_toml"])
    priced = sorted({c["call_index"] for c in report.priced[0].calls}) if report.priced else []
    by_ranks: dict[int, list[int]] = {}
    for i in priced:
        by_ranks.setdefault(workload.calls[i].ranks, []).append(i)
    sums: dict[str, dict[str, float]] = {}
    seen: dict[str, int] = {}
    for ranks, subset in sorted(by_ranks.items()):
        per_policy = _replay_size(path, run_id, workload, report, spec, ranks, subset, launches)
        for name, values in per_policy.items():
            mine = sums.setdefault(name, dict.fromkeys((*MEASURES, "estimate_s"), 0.0))
            for key, value in values.items():
                mine[key] += value
            seen[name] = seen.get(name, 0) + 1
    return [
        {"policy": name, **values, "launches": launches}
        for name, values in sums.items()
        if seen[name] == len(by_ranks)
    ]


def _replay_size(
    path: Path, run_id: str, workload: Workload, report, spec: SweepSpec, ranks: int,
    subset: list[int], launches: int,
) -> dict[str, dict[str, float]]:  # fmt: skip
    """Replay the calls of one group size; per policy the median launch's replay, sequence
    and calls-alone times, and the estimate from the run's points."""
    position = {index: n for n, index in enumerate(subset)}
    sequence = [i for i in workload.sequence() if i in position]
    estimates = _estimates(report, subset, sequence)
    groups, notes = plan_replay([p.policy for p in report.priced], subset, spec.tuning_file)
    report.notes.extend(f"replay p={ranks}: {note}" for note in notes)
    calls = [workload.calls[i] for i in subset]
    remapped = [position[i] for i in sequence]
    per_launch: dict[str, dict[str, list[float]]] = {}
    for index in range(launches):
        for group in groups:
            slowest = max(estimates[name] for name in group.policies)
            reps = repetitions(slowest)
            timeout = STARTUP_GRACE_S + 60 + 20 * slowest * (reps + 1) * len(group.policies)
            job = replay_job(calls, remapped, group, index, reps)
            found = _run_launch(spec, ranks, job, group, timeout)
            add_replays(
                path, run_id, workload.name or "workload", _rows(found, ranks, index, group)
            )
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
