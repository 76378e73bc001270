"""Assumption checks computed from a run's facts (runners.domain.verdict.assumptions), stored in a
real store."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from runners import store
from runners.domain.collectives.datatypes import DTYPES
from runners.domain.verdict import assumptions as A
from runners.domain.verdict import run_assumptions as R
from runners.host.machine import physical_cores


def point(algorithm: str = "ring", ranks: int = 4, nbytes: int = 4096, **kw) -> A.PointFacts:
    """Facts of one point, float32 sum unless told otherwise."""
    fields = {"dtype": "float32", "op": "sum"} | kw
    return A.PointFacts(f"r/{algorithm}/{ranks}/{nbytes}", algorithm, ranks, nbytes, **fields)


def pingpong(breakpoints: list[int], r2: float = 0.99, piecewise_r2: float = 0.99, **kw) -> dict:
    """A ping-pong calibrations row over 8 B .. 4 MiB."""
    row = {
        "calibration_id": "c1",
        "source": "pingpong",
        "r_squared": r2,
        "breakpoints": breakpoints,
        "segments": [{}] * (len(breakpoints) + 1),
        "min_bytes": 8,
        "max_bytes": 4 * 2**20,
        "details": {"piecewise_r_squared": piecewise_r2},
    }
    return row | kw


@pytest.mark.parametrize("ranks", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("algorithm", ["recursive_doubling", "rabenseifner", "ring", "mpi"])
def test_power_of_two_holds_for_powers_of_two(algorithm: str, ranks: int) -> None:
    row = A.power_of_two(point(algorithm, ranks))
    assert row["state"] == "holds" and f"p = {ranks}" in row["detail"]


@pytest.mark.parametrize("ranks", [3, 5, 6, 7])
def test_power_of_two_is_violated_unless_the_schedule_takes_any_p(ranks: int) -> None:
    for algorithm in ("recursive_doubling", "rabenseifner", "binomial_tree", "mpi", "mpi:tree"):
        row = A.power_of_two(point(algorithm, ranks))
        assert row["state"] == "violated", algorithm
        assert f"p = {ranks} is not a power of two" in row["detail"]
    assert "fold" in A.power_of_two(point("rabenseifner", ranks))["detail"]
    for algorithm in ("ring", "mpi:ring"):
        assert A.power_of_two(point(algorithm, ranks))["state"] == "holds"


def test_commutative_op_follows_the_catalog() -> None:
    assert A.commutative_op(point(op="max"))["state"] == "holds"
    row = A.commutative_op(point("recursive_doubling", op="first_nonzero"))
    assert row["state"] == "violated" and "first_nonzero" in row["detail"]


def test_oversubscription_compares_ranks_with_physical_cores() -> None:
    cores = physical_cores()
    assert A.not_oversubscribed(point(ranks=cores), cores)["state"] == "holds"
    row = A.not_oversubscribed(point(ranks=cores + 1), cores)
    assert row["state"] == "violated" and f"{cores} physical cores" in row["detail"]
    unknown = A.not_oversubscribed(point(ranks=8), None)  # an imported file's machine
    assert unknown["state"] == "unknown" and "does not say" in unknown["detail"]


@pytest.mark.parametrize(
    ("algorithm", "ranks", "nbytes", "blocks"),
    [
        ("ring", 3, 24, 3),
        ("ring", 3, 8, 3),
        ("ring", 4, 4096, 4),
        ("mpi:ring", 5, 4096, 5),
        ("rabenseifner", 3, 8, 2),
        ("rabenseifner", 6, 12, 4),
        ("mpi:reduce_scatter_allgather", 4, 24, 4),
    ],
)
def test_equal_partitions_checks_the_count_against_the_blocks(
    algorithm: str, ranks: int, nbytes: int, blocks: int
) -> None:
    row = A.equal_partitions(point(algorithm, ranks, nbytes))
    count = nbytes // DTYPES["float32"].itemsize
    if count % blocks == 0:
        assert row["state"] == "holds" and f"{blocks} blocks of {count // blocks}" in row["detail"]
    else:
        assert row["state"] == "violated"
        assert f"blocks of {math.ceil(count / blocks)} and {count // blocks}" in row["detail"]


def test_equal_partitions_without_blocks() -> None:
    for algorithm in ("recursive_doubling", "binomial_tree", "mpi:recursive_doubling"):
        assert A.equal_partitions(point(algorithm, 3, 8))["state"] == "holds"
    assert A.equal_partitions(point("mpi", 3, 8))["state"] == "unknown"


def test_library_choice_is_known_unless_autotuned() -> None:
    autotuned = A.library_choice_known(point("mpi"))
    assert autotuned["state"] == "unknown" and "library_min" in autotuned["detail"]
    forced = A.library_choice_known(point("mpi:ring"))
    assert forced["state"] == "holds" and "=ring" in forced["detail"]
    assert "approximately" in A.library_choice_known(point("mpi:tree"))["detail"]
    assert A.library_choice_known(point("rabenseifner"))["state"] == "holds"
    tuned = A.library_choice_known(point("mpi:tuned"))
    assert tuned["state"] == "holds" and "tuning file" in tuned["detail"]


def test_run_level_summary_takes_the_worst_state() -> None:
    rows = [A.equal_partitions(point("ring", 3, n)) for n in (24, 8)]
    rows.append(A.equal_partitions(point("mpi", 3, 8)))
    summary = R.summarize("equal_partitions", rows)
    assert summary["state"] == "violated" and summary["point_id"] is None
    assert summary["detail"].startswith("3 points: 1 holds, 1 violated, 1 unknown")
    assert R.summarize("equal_partitions", [rows[0], rows[2]])["state"] == "unknown"
    assert R.summarize("equal_partitions", rows[:1])["state"] == "holds"
    assert R.summarize("power_of_two", rows)["state"] == "unknown", "no points checked"


@pytest.mark.parametrize(
    ("launcher", "environment", "state"),
    [
        ("mpiexec -n {ranks}", {}, "holds"),
        ("/opt/mpich/bin/mpirun -np {ranks}", {}, "holds"),
        ("mpiexec -n {ranks}", {"HYDRA_HOST_FILE": "/etc/hosts.mpi"}, "unknown"),
        ("mpiexec -f hosts.txt -n {ranks}", {}, "unknown"),
        ("srun -n {ranks}", {}, "unknown"),
        (None, {}, "unknown"),
        ("srun -n {ranks}", {"SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_NODELIST": "n1"}, "holds"),
        ("srun -n {ranks}", {"SLURM_NNODES": "4", "SLURM_JOB_NODELIST": "n[1-4]"}, "violated"),
        ("mpiexec -n {ranks}", {"SLURM_JOB_NUM_NODES": "2"}, "violated"),
    ],
)
def test_single_node_is_read_from_the_allocation_else_the_launcher(
    launcher: str | None, environment: dict, state: str
) -> None:
    row = R.single_node(launcher, environment)
    assert row["state"] == state and row["point_id"] is None


def probe_row(ranks: int, nodes: int, per_node: int, hosts: str) -> dict:
    """A probes row as a launch stores it (schema 7: with the ranks' placement)."""
    return {"ranks": ranks, "nodes": nodes, "ranks_per_node": per_node, "hosts": hosts}


def test_single_node_comes_from_the_ranks_own_host_names_first() -> None:
    """The probes' placement beats the allocation and the launcher: a 4-node allocation whose
    groups each stayed on one host holds; a group spread over two hosts is named, violated."""
    allocation = {"SLURM_JOB_NUM_NODES": "4", "SLURM_JOB_ID": "7"}
    together = [probe_row(2, 1, 2, "n1"), probe_row(4, 1, 4, "n2")]
    row = R.single_node("srun -n {ranks}", allocation, together)
    assert row["state"] == "holds" and "(n1,n2)" in row["detail"]
    assert "Slurm job 7 of 4 node(s)" in row["detail"]
    spread = [*together, probe_row(8, 2, 4, "n1,n2"), probe_row(8, 1, 8, "n3")]
    row = R.single_node("mpiexec -n {ranks}", {}, spread)
    assert row["state"] == "violated"
    assert row["detail"].startswith("p=8 on 2 hosts, up to 8 ranks per host (n1,n2,n3)")
    older = [{"ranks": 2, "nodes": float("nan"), "ranks_per_node": float("nan"), "hosts": None}]
    assert R.single_node("mpiexec -n {ranks}", {}, older)["state"] == "holds", "the launcher's"


def test_calibration_fit_uses_the_piecewise_r_squared_when_there_are_breakpoints() -> None:
    piecewise = R.calibration_fit(pingpong([8192], r2=0.80, piecewise_r2=0.99))
    assert piecewise["state"] == "holds" and piecewise["calibration_id"] == "c1"
    assert "0.990" in piecewise["detail"]
    assert R.calibration_fit(pingpong([], r2=0.80, piecewise_r2=0.99))["state"] == "violated"
    assert R.calibration_fit(pingpong([], r2=A.R2_THRESHOLD))["state"] == "holds"
    assert R.calibration_fit(pingpong([], r2=None))["state"] == "unknown"


def test_a_breakpoint_inside_the_swept_range_is_a_protocol_switch() -> None:
    cal = pingpong([8192, 2**20])
    inside = R.no_protocol_switch(cal, 8, 65536)
    assert inside["state"] == "violated" and "8 KiB" in inside["detail"]
    assert "1 MiB" not in inside["detail"]
    assert R.no_protocol_switch(cal, 8192, 65536)["state"] == "holds", "all in one segment"
    assert R.no_protocol_switch(cal, 8, 4096)["state"] == "holds"
    assert R.no_protocol_switch(cal, 8, 2**24)["state"] == "violated"
    assert R.no_protocol_switch(pingpong([]), 8, 2**24)["state"] == "unknown", "not measured"


def test_run_checks_cover_every_name_and_store_cleanly(tmp_path: Path) -> None:
    points = [point(alg, p, n) for alg in ("ring", "mpi") for p in (2, 3) for n in (8, 4096)]
    fitted = {"calibration_id": "fitted:r", "source": "fitted:r", "r_squared": 0.5}
    rows = R.run_checks(points, 2, "mpiexec -n {ranks}", {}, [pingpong([8192]), fitted])
    run_level = [r for r in rows if r["point_id"] is None]
    assert {r["name"] for r in run_level} == set(A.NAMES) - set(
        A.NODE_CHECKS
    )  # see test_node_checks
    assert len(rows) - len(run_level) == len(points) * len(A.POINT_CHECKS)
    by_cal = {(r["name"], r["calibration_id"]) for r in run_level if r["calibration_id"]}
    assert by_cal == {
        ("calibration_fit", "c1"),
        ("calibration_fit", "fitted:r"),
        ("no_protocol_switch", "c1"),
    }
    path = tmp_path / "s.duckdb"
    store.replace_assumptions(path, "r", rows)
    counts = store.query(path, "SELECT state, count(*) AS n FROM assumptions GROUP BY state")
    assert counts.n.sum() == len(rows)


def test_unknown_names_and_states_are_refused() -> None:
    with pytest.raises(ValueError):
        A.check("no_such_assumption", "holds", "")
    with pytest.raises(ValueError):
        A.check("power_of_two", "maybe", "")


@pytest.mark.parametrize(
    ("load", "state"),
    [([0.1, 0.2, 0.3], "holds"), ([1.7, 0.9, 0.4], "violated"), ([], "unknown"), (None, "unknown")],
)
def test_quiet_machine_is_read_from_the_load_average_before_the_sweep(load, state) -> None:
    row = R.quiet_machine(load, cores=2)
    assert row["name"] == "quiet_machine" and row["state"] == state
    if load:
        assert f"{load[0]:.2f}" in row["detail"]


def probe_rows(pingpongs: list[float], copies: list[float], job: str = "ranks=2 config=default"):
    return [
        {"job": job, "pingpong_s": p, "copy_gbps": c}
        for p, c in zip(pingpongs, copies, strict=True)
    ]


def test_stable_machine_holds_while_the_probe_stays_within_its_bound() -> None:
    row = R.stable_machine(probe_rows([2.0e-6, 2.2e-6, 2.1e-6], [10.0, 9.5, 10.4]))
    assert row["state"] == "holds" and "8 B ping-pong 2 us .. 2.2 us (1.1x)" in row["detail"]


def test_stable_machine_is_violated_by_a_state_change_with_its_evidence() -> None:
    probes = probe_rows([2.0e-6, 2.1e-6], [10.0, 10.2]) + probe_rows(
        [1.9e-6, 4.4e-6], [10.0, 9.9], job="ranks=4 config=default"
    )
    row = R.stable_machine(probes)
    assert row["state"] == "violated"
    assert "1.9 us .. 4.4 us (2.32x) in ranks=4 config=default" in row["detail"]
    assert R.stable_machine([])["state"] == "unknown"


def test_cautions_name_oversubscribed_groups_and_a_busy_machine() -> None:
    assert R.caution_notes([2], [0.1, 0.1, 0.1], cores=2) == []
    over, busy = R.caution_notes([2, 3, 4], [1.7, 1.0, 0.5], cores=2)
    assert over.startswith("p=3, p=4: more ranks than the 2 cores")
    assert "1-minute load 1.70 on 2 cores" in busy


def test_every_assumption_says_what_its_break_means() -> None:
    assert set(A.MEANINGS) == set(A.NAMES)
    assert all(len(text) > 30 for text in A.MEANINGS.values())
