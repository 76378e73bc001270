"""Data of the Workload page: a workload's report on a run as `collsweep workload report` stored
it (schema 10: workloads, workload_policies, workload_calls, replays), and each replayed
policy's job time beside the estimate from the run's points. No Streamlit and no MPI here."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from runners.domain.sweep.replay import plan_replay
from runners.domain.units import format_bytes
from runners.domain.workload.file import WorkloadError, workload_from_json
from runners.domain.workload.policy import Policy
from runners.store.dashboard_reads.base import StorePath, _catalog, _df, _open

# Policies in the order a reader looks for them: the defaults, best, tuned files, algorithms.
KIND_ORDER = {"default": 0, "best": 1, "tuned": 2, "algorithm": 3}
MEASURES = ("isolated_s", "sequenced_s", "replayed_s")

_RUNS_SQL = """
SELECT DISTINCT w.run_id, r.started_at FROM workloads w JOIN runs r USING (run_id)
ORDER BY r.started_at DESC, w.run_id
"""

# One launch of a replay is one (policy, ranks, launch, replayed_at): the launch index restarts
# with every `--replay`, and every replay is kept. A launch counts its repetitions' median, the
# policy the median launch (runners.jobs.replay does the same).
_REPLAYS_SQL = """
WITH launches AS (
    SELECT policy, ranks, launch, replayed_at, count(*) AS repetitions,
           median(replayed_s) AS replayed_s, median(sequenced_s) AS sequenced_s,
           median(isolated_s) AS isolated_s
    FROM replays WHERE run_id = $run AND workload = $workload
    GROUP BY policy, ranks, launch, replayed_at
)
SELECT policy, ranks, count(*) AS launches, sum(repetitions) AS repetitions,
       median(isolated_s) AS isolated_s, median(sequenced_s) AS sequenced_s,
       median(replayed_s) AS replayed_s, max(replayed_at) AS replayed_at
FROM launches GROUP BY policy, ranks ORDER BY policy, ranks
"""


@dataclass(frozen=True)
class WorkloadData:
    """One workload's stored report on one run: the workload file (body), the report's notes,
    every policy (default first), every policy's calls with a `call` label, and per replayed
    policy its replay beside the points' estimate (replay_table)."""

    name: str
    body: dict[str, Any]
    notes: list[str]
    reported_at: Any
    policies: pd.DataFrame
    calls: pd.DataFrame
    replays: pd.DataFrame = field(default_factory=pd.DataFrame)
    unreplayed: dict[str, str] = field(default_factory=dict)

    def policy(self, name: str) -> dict[str, Any] | None:
        """The policy's row as a dict, or None."""
        rows = self.policies[self.policies["policy"] == name]
        return rows.iloc[0].to_dict() if len(rows) else None

    @property
    def default(self) -> str | None:
        """The run's first library's default policy (the report's baseline), or None."""
        return str(self.policies["policy"].iloc[0]) if len(self.policies) else None

    def calls_of(self, policy: str) -> pd.DataFrame:
        """The policy's calls, in the workload's order."""
        return self.calls[self.calls["policy"] == policy].reset_index(drop=True)

    def replay_of(self, policy: str) -> dict[str, Any] | None:
        """The policy's replay row (replay_table) as a dict, or None where it was not replayed."""
        if self.replays.empty:
            return None
        rows = self.replays[self.replays["policy"] == policy]
        return rows.iloc[0].to_dict() if len(rows) else None


def workload_runs(path: StorePath) -> list[str]:
    """The runs with at least one stored workload report, newest first."""
    with _open(path) as con:
        if not _catalog(con).has("workloads"):
            return []
        return _df(con, _RUNS_SQL)["run_id"].tolist()


def workloads_of(path: StorePath, run_id: str) -> list[str]:
    """The names of the workloads reported on a run."""
    with _open(path) as con:
        frame = _df(
            con,
            "SELECT workload FROM workloads WHERE run_id = $run ORDER BY workload",
            {"run": run_id},
        )
    return frame["workload"].tolist()


def _decoded(value: Any, empty: Any) -> Any:
    """A JSON column's value (DuckDB returns JSON as text)."""
    if isinstance(value, str):
        return json.loads(value)
    return empty if value is None else value


def _sorted_policies(policies: pd.DataFrame) -> pd.DataFrame:
    """Policies default first (the run's first library's: `default`), then best, tuned files
    and algorithms, each by name."""
    order = policies.assign(
        _first=policies["policy"] != "default",
        _kind=policies["kind"].map(KIND_ORDER).fillna(len(KIND_ORDER)),
    )
    order = order.sort_values(["_first", "_kind", "policy"], kind="stable")
    return order.drop(columns=["_first", "_kind"]).reset_index(drop=True)


def workload_data(path: StorePath, run_id: str, workload: str) -> WorkloadData:
    """Everything the Workload page shows of one workload's report on one run."""
    keyed = {"run": run_id, "workload": workload}
    where = "WHERE run_id = $run AND workload = $workload"
    with _open(path) as con:
        head = _df(con, f"SELECT body, notes, reported_at FROM workloads {where}", keyed)
        policies = _df(
            con, f"SELECT * EXCLUDE (run_id, workload) FROM workload_policies {where}", keyed
        )
        calls = _df(
            con,
            f"SELECT * EXCLUDE (run_id, workload) FROM workload_calls {where} "
            "ORDER BY policy, call_index",
            keyed,
        )
        replays = _df(con, _REPLAYS_SQL, keyed)
    row = head.iloc[0] if len(head) else {"body": None, "notes": None, "reported_at": None}
    body = _decoded(row["body"], {})
    calls = calls.assign(call=call_labels(calls))
    table = replay_table(calls, sequence_counts(body), replays)
    return WorkloadData(
        name=workload,
        body=body,
        notes=list(_decoded(row["notes"], [])),
        reported_at=row["reported_at"],
        policies=_sorted_policies(policies),
        calls=calls,
        replays=table,
        unreplayed=unreplayed(policies, calls, set(table["policy"])) if len(table) else {},
    )


def unreplayed(policies: pd.DataFrame, calls: pd.DataFrame, replayed: set[str]) -> dict[str, str]:
    """Per priced policy without a replay, why: what runners.domain.sweep.replay's plan says of it
    at
    each group size (a policy running two library algorithms of one collective has no launch
    that does both), else that no replay of it is stored."""
    size = int(calls["call_index"].max()) + 1 if len(calls) else 0
    found = {}
    for row in policies[~policies["policy"].isin(replayed)].itertuples(index=False):
        mine = calls[calls["policy"] == row.policy]
        choices: list[str | None] = [None] * size
        own = [False] * size
        for call in mine.itertuples(index=False):
            choices[call.call_index], own[call.call_index] = call.algorithm, bool(call.own)
        policy = Policy(row.policy, row.kind, row.library, tuple(choices), tuple(own))
        notes = []
        for ranks, group in mine.groupby("ranks"):
            _, said = plan_replay([policy], group["call_index"].tolist(), "")
            notes += [f"p={ranks}: {note}" for note in said]
        found[row.policy] = "; ".join(notes) or "no replay of it is stored"
    return found


def call_labels(calls: pd.DataFrame) -> list[str]:
    """Each call as people name it: collective, size and count ('allreduce 1 MiB x50'), with
    the group size and datatype where the workload has several, and its index where two calls
    would read the same."""
    if calls.empty:
        return []
    several = {c: calls[c].nunique() > 1 for c in ("ranks", "dtype")}
    labels = {}
    for row in calls.drop_duplicates("call_index").itertuples(index=False):
        parts = [row.collective, format_bytes(row.bytes)]
        parts += [row.dtype] if several["dtype"] else []
        parts += [f"p={row.ranks}"] if several["ranks"] else []
        labels[row.call_index] = " ".join([*parts, f"x{row.calls}"])
    taken = pd.Series(labels).duplicated(keep=False)
    for index in taken[taken].index:
        labels[index] += f" (#{index})"
    return [labels[i] for i in calls["call_index"]]


def sequence_counts(body: Mapping[str, Any]) -> dict[int, int]:
    """How many times a replay runs each call (Workload.sequence_counts); empty for a body
    that is not a workload."""
    try:
        return workload_from_json(dict(body)).sequence_counts()
    except WorkloadError:
        return {}


def replay_table(
    calls: pd.DataFrame, counts: Mapping[int, int], replays: pd.DataFrame
) -> pd.DataFrame:
    """Per replayed policy, summed over the group sizes it was replayed at: the estimate from
    the run's points (the replayed sequence's calls x the median of the policy's point), the
    calls alone in the replay's launches (isolated), the sequence with a Barrier before each
    call (sequenced) and back to back (replayed), with the steps between them:
    replayed / estimate = isolated / estimate (machine state then vs during the sweep)
    x sequenced / isolated (the job's order and cache state) x replayed / sequenced (no
    Barriers). `complete`: replayed at every group size the report priced."""
    columns = ["policy", "ranks", "launches", "estimate_s", *MEASURES, "complete"]
    if replays.empty or calls.empty:
        return pd.DataFrame(columns=columns)
    times = calls["call_index"].map(counts).fillna(0) * calls["median_s"]
    estimates = calls.assign(estimate_s=times).groupby(["policy", "ranks"])["estimate_s"].sum()
    priced = set(calls["ranks"])
    rows = []
    for policy, group in replays.groupby("policy", sort=False):
        found = [estimates.get((policy, r)) for r in group["ranks"]]
        rows.append(
            {
                "policy": policy,
                "ranks": ", ".join(str(int(r)) for r in group["ranks"]),
                "launches": int(group["launches"].min()),
                "estimate_s": sum(e for e in found if e is not None),
                **{m: float(group[m].sum()) for m in MEASURES},
                "complete": set(group["ranks"]) >= priced and None not in found,
            }
        )
    table = pd.DataFrame(rows, columns=columns)
    return table.assign(
        replay_ratio=table["replayed_s"] / table["estimate_s"],
        machine_ratio=table["isolated_s"] / table["estimate_s"],
        order_ratio=table["sequenced_s"] / table["isolated_s"],
        barrier_ratio=table["replayed_s"] / table["sequenced_s"],
    )
