"""A job report adds up: a total apart from its breakdown has the gap said, and a replay that
does not confirm the points is a warning with the step that moved it most (#45, item 4)."""

from __future__ import annotations

from runners.analysis.workload_report import PricedPolicy, WorkloadReport
from runners.cli.workload_texts import report_text
from runners.domain.workload.file import Workload
from runners.domain.workload.policy import Policy


def priced(name: str, kind: str, total: float, calls: list[float], **row) -> PricedPolicy:
    """A policy's priced row with its calls' times."""
    policy = Policy(name, kind, "mpich", ("mpi",), (True,))
    fields = {
        "policy": name,
        "kind": kind,
        "total_s": total,
        "interval_low_s": total * 0.9,
        "interval_high_s": total * 1.1,
        "ratio": None,
        "ratio_low": None,
        "ratio_high": None,
        "verdict": None,
        "predicted_s": None,
        "faster_calls": 0,
        "slower_calls": 0,
        "gain_share": 0.0,
        "loss_share": 0.0,
    } | row
    breakdown = [
        {"collective": "allreduce", "bytes": 8, "dtype": "float32", "ranks": 2, "calls": 1,
         "algorithm": "mpi", "time_s": t, "ratio": None}
        for t in calls
    ]  # fmt: skip
    return PricedPolicy(policy, fields, breakdown)


def replay(name: str, replayed: float, estimate: float, isolated: float, sequenced: float):
    return {
        "policy": name,
        "replayed_s": replayed,
        "estimate_s": estimate,
        "isolated_s": isolated,
        "sequenced_s": sequenced,
        "launches": 3,
    }


def test_a_total_apart_from_its_breakdown_says_the_gap() -> None:
    report = WorkloadReport(
        Workload("job", ()), "r1", [priced("default", "default", 90.7e-3, [20e-3, 10.3e-3])], []
    )
    text = report_text(report)
    assert "these sum to 30.3 ms; the total 90.7 ms" in text and "2.99x the sum" in text
    agrees = WorkloadReport(Workload("job", ()), "r1", [priced("d", "default", 3e-3, [3e-3])], [])
    assert "sum to" not in report_text(agrees)


def test_a_replay_outside_the_points_is_a_warning_naming_its_largest_step() -> None:
    rows = [
        priced("default", "default", 10e-3, [10e-3]),
        priced(
            "ring",
            "algorithm",
            5e-3,
            [5e-3],
            ratio=0.5,
            ratio_low=0.45,
            ratio_high=0.55,
            verdict="faster",
        ),
    ]
    replays = [
        replay("default", 97e-3, 10e-3, 12e-3, 90e-3),  # 9.7x: the job's order did it
        replay("ring", 105e-3, 5e-3, 5.2e-3, 100e-3),  # faster by the points, slower replayed
    ]
    text = report_text(WorkloadReport(Workload("job", ()), "r1", rows, [], replays))
    assert (
        "warning: the replay does not confirm the points for default: 97 ms is outside their "
        "95% interval [9 ms, 11 ms]; the largest factor: the job's order (cache state between "
        "calls), 7.5x"
    ) in " ".join(text.split())
    assert "warning: the replay reverses the points on ring" in text


def test_a_replay_inside_the_points_says_nothing_more() -> None:
    rows = [priced("default", "default", 10e-3, [10e-3])]
    replays = [replay("default", 10.5e-3, 10e-3, 10.2e-3, 10.4e-3)]
    text = report_text(WorkloadReport(Workload("job", ()), "r1", rows, [], replays))
    assert "warning" not in text
