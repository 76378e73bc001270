"""Typed records shared by the ranks, the parent and the store: the point key, the events, the
timing policy."""

from __future__ import annotations

import pytest

from runners.domain.status import PointStatus
from runners.domain.sweep.events import (
    Checked,
    MalformedEvent,
    PointMeasured,
    Probe,
    event_line,
    parse_event,
)
from runners.domain.sweep.plan import Group
from runners.domain.sweep.point_row import PointRow
from runners.domain.sweep.records import PointKey
from runners.jobs.sweep_jobs import event_rows


def test_point_id_and_row() -> None:
    key = PointKey("r1", "mpi:ring", 3, 64, "float64", "sum")
    assert key.point_id() == "r1/mpi:ring/3/64/float64/sum"
    row = PointRow(key, PointStatus.SKIPPED, "why", cores=2).columns()
    assert row["point_id"] == key.point_id() and row["bytes"] == 64 and row["count"] == 8
    assert row["library"] == "mpich" and row["collective"] == "allreduce"
    assert row["library_config"] == "env MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ring"
    runtime = PointRow(key, PointStatus.SKIPPED, "why", cores=2, switching="runtime")
    assert runtime.columns()["library_config"] == "MPI_T MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ring"
    # oversubscribed by the core count given, never by this host's
    assert (
        row["oversubscribed"] and not PointRow(key, "ok", "", cores=3).columns()["oversubscribed"]
    )
    assert "job" not in row and "launches" not in row and "median_s" not in row


def _event(point_id: str) -> PointMeasured:
    return PointMeasured(
        point_id=point_id,
        algorithm="ring",
        ranks=2,
        nbytes=8,
        dtype="float32",
        op="sum",
        status="ok",
        reason="",
        started_at=0.0,
        finished_at=1.0,
        warmup=1,
        sync_cadence="barrier",
        cache_mode="hot",
        verified=True,
        launch=0,
        samples=[1e-6, 2e-6],
        passes=[0, 1],
    )


def test_the_parent_checks_the_id_the_ranks_report() -> None:
    group = Group(2, "", {}, switching="runtime")
    point, samples = event_rows("r1", _event("r1/ring/2/8/float32/sum"), 4, group)
    row = point.columns()
    assert row["point_id"] == "r1/ring/2/8/float32/sum" and len(samples) == 2
    assert row["job"] == group.label and row["status"] == "ok" and row["verified"]
    assert row["started_at"] < row["finished_at"] and not row["oversubscribed"]
    with pytest.raises(ValueError, match="reported point"):
        event_rows("r1", _event("r0/ring/2/8/float32/sum"), 4, group)


def test_events_go_through_their_json_lines_unchanged_and_malformed_ones_are_refused() -> None:
    event = _event("r1/ring/2/8/float32/sum")
    assert parse_event(event_line(event)) == event
    assert parse_event(event_line(Probe("start", 1.0, 2e-6, 10.0))) == Probe(
        "start", 1.0, 2e-6, 10.0
    )
    checked = Checked("ring", "int32", "sum", 7, 3, "ok", "")
    assert parse_event(event_line(checked)) == checked
    assert parse_event("MPICH says hello") is None and parse_event('{"type": "other"}') is None
    with pytest.raises(MalformedEvent, match="missing"):
        parse_event('{"type": "point", "algorithm": "ring"}')


def test_one_timing_policy_from_the_spec_to_the_stop_rule() -> None:
    """The spec makes the policy, the job file carries it, and each pass of each launch gets its
    share of the iterations and the time (at least min_iterations in every launch)."""
    from runners.domain.sweep.records import TimingPolicy
    from runners.domain.sweep.spec import parse_spec

    spec = parse_spec(
        "sizes = [8]\nranks = [2]\nbudget_s = 0.9\npasses = 3\nmin_iterations = 10\n"
        "max_iterations = 100\ncache_mode = 'cold'\nlaunches = 2\n"
    )
    policy = spec.timing
    given = {"budget_s": 0.9, "passes": 3, "max_iterations": 100, "cache_mode": "cold"}
    assert policy == TimingPolicy(**given, launches=2)
    rule = policy.pass_rule()
    assert (rule.min_iterations, rule.max_iterations) == (4, 17)
    assert rule.budget_s == pytest.approx(0.15) and rule.target_rel_ci == policy.target_rel_ci
