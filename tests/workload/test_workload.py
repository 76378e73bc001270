"""Workloads (issue 31) without ranks: the file, `workload show`, the sweep spec of exactly a
workload's calls, the policies and the whole job's price on a synthetic run of known times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import synthetic

from runners.analysis.workload_report import SAME, report_workload, workload_report
from runners.cli.main import main
from runners.domain.sweep.plan import all_point_ids, plan_groups
from runners.domain.sweep.replay import plan_replay
from runners.domain.sweep.spec import SpecError, parse_spec
from runners.domain.sweep.workload_spec import workload_overrides
from runners.domain.workload.file import (
    CALL_KEYS,
    Call,
    WorkloadError,
    load_workload,
    merged,
    workload_from_json,
)
from runners.domain.workload.policy import policies
from runners.store.workloads import stored_workloads

DECADE_RUN = synthetic.decade_spec().run_id


def workload_json(calls: list[dict], **extra) -> dict:
    """A workload file's JSON with these calls."""
    return {"collsweep_workload": 1, "name": "job", "calls": calls} | extra


def call(nbytes: int, calls: int, collective: str = "allreduce", **extra) -> dict:
    op = "none" if collective in ("bcast", "allgather") else "sum"
    found = {"collective": collective, "bytes": nbytes, "dtype": "float32", "op": op}
    return found | {"ranks": 2, "calls": calls} | extra


DECADE_CALLS = [call(1000, 10), call(10000, 5), call(102400, 1), call(64, 1)]


@pytest.fixture(scope="module")
def decade_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic run whose every sample is an exact time (synthetic.decade_spec)."""
    path = tmp_path_factory.mktemp("decade") / "s.duckdb"
    synthetic.build_store(path, [synthetic.decade_spec()])
    return path


def test_a_workload_file_round_trips_and_show_prints_its_stable_keys(tmp_path, capsys) -> None:
    data = workload_json([call(4096, 10), call(2**20, 1, "bcast", root=1)], order=[[1, 1], [0, 10]])
    workload = workload_from_json(data)
    assert workload_from_json(json.loads(workload.to_text())) == workload
    assert workload.sequence() == [1] + [0] * 10 and workload.total_calls == 11
    path = tmp_path / "w.json"
    path.write_text(workload.to_text())
    assert main(["workload", "show", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [set(CALL_KEYS) <= set(entry) for entry in shown] == [True, True]
    assert shown[1]["root"] == 1 and shown[0]["calls"] == 10
    assert main(["workload", "show", str(path)]) == 0
    text = capsys.readouterr().out
    assert "2 distinct calls, 11 calls in all" in text and "1 MiB" in text


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"calls": []}, "not a collsweep workload"),
        (workload_json([]), "calls must be a non-empty list"),
        (workload_json([call(0, 1)]), "bytes must be an integer from 1 to"),
        (workload_json([call(8, 1, collective="alltoall")]), "collective must be one of"),
        (workload_json([call(8, 1, ranks=2, root=2)]), "root 2 is not a rank of 2"),
        (workload_json([call(8, 1)], order=[[1, 1]]), "order[0] must be"),
        (workload_json([call(8, True)]), "calls must be an integer"),
    ],
)
def test_a_bad_workload_is_one_line_and_exit_2(tmp_path, capsys, data, says) -> None:
    with pytest.raises(WorkloadError, match=says.replace("[", r"\[")):
        workload_from_json(data)
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    assert main(["workload", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_a_file_that_is_not_json_or_not_there_is_refused(tmp_path) -> None:
    (tmp_path / "w.json").write_text("{not json")
    with pytest.raises(WorkloadError, match=": not JSON"):
        load_workload(tmp_path / "w.json")
    with pytest.raises(WorkloadError, match="a folder, not a file"):
        load_workload(tmp_path)


def test_merged_adds_the_counts_of_the_same_call() -> None:
    a = Call("allreduce", 8, "float32", "sum", 2, 3)
    b = Call("allreduce", 16, "float32", "sum", 2, 1)
    assert merged([a, b, a]) == [Call("allreduce", 8, "float32", "sum", 2, 6), b]


def test_a_workload_sweep_plans_exactly_its_calls() -> None:
    data = [call(8, 100), call(4096, 5), call(2**20, 1, "bcast", root=0)]
    data.append(call(8, 1) | {"dtype": "byte"})  # not measurable: left out
    overrides = workload_overrides(workload_from_json(workload_json(data)))
    assert overrides["sizes"] == [8, 4096, 2**20] and overrides["collectives"] == [
        "allreduce",
        "bcast",
    ]
    spec = parse_spec(Path("data/quick.toml").read_text(), overrides)
    assert parse_spec(spec.to_toml()) == spec  # the cells are kept with the run
    cells = {(c.collective, c.nbytes) for g in plan_groups(spec, "r-x", cores=8) for c in g.cells}
    # the grid of these sizes would hold 3 sizes x 2 collectives x 2 group sizes
    assert cells == {("allreduce", 8), ("allreduce", 4096), ("bcast", 2**20)}
    assert {g.ranks for g in plan_groups(spec, "r-x", cores=8)} == {2}
    assert len(all_point_ids(spec, "r-x")) == sum(
        len(g.points("r-x")) for g in plan_groups(spec, "r-x", cores=8)
    ) + sum(1 for _ in ())  # every asked point is planned (none unsupported here)


def test_each_cell_is_checked_against_its_own_datatype() -> None:
    data = [call(52, 1) | {"dtype": "int32"}, call(16, 1) | {"dtype": "int64"}]
    overrides = workload_overrides(workload_from_json(workload_json(data)))
    spec = parse_spec(Path("data/quick.toml").read_text(), overrides)  # 52 B of int64: no cell
    assert {(c.nbytes, c.dtype) for g in plan_groups(spec, "r-x", cores=8) for c in g.cells} == {
        (52, "int32"),
        (16, "int64"),
    }


def test_cells_outside_the_grid_are_refused() -> None:
    raw = Path("data/quick.toml").read_text()
    with pytest.raises(SpecError, match="outside the ranks and sizes"):
        parse_spec(raw, {"cells": [["allreduce", 2, 12345, "float32", "sum"]]})
    with pytest.raises(SpecError, match=r"\[collective, ranks, bytes, dtype, op\]"):
        parse_spec(raw, {"cells": [["allreduce", 2, 8]]})


def test_policies_cover_what_was_measured_and_fall_back_to_the_default() -> None:
    calls = [
        Call("allreduce", 8, "float32", "sum", 2, 1),
        Call("bcast", 64, "float32", "none", 2, 1),
    ]
    measured = {
        calls[0].key: {"mpi", "ring", "mpi:ring"},
        calls[1].key: {"bcast.mpi", "bcast.binomial_tree"},
    }
    found = {p.name: p for p in policies(calls, measured, {calls[0].key: "ring"})}
    assert set(found) == {"default", "ring", "mpi:ring", "binomial_tree", "best"}
    assert found["default"].choices == ("mpi", "bcast.mpi")
    assert found["ring"].choices == ("ring", "bcast.mpi") and found["ring"].own == (True, False)
    assert found["binomial_tree"].choices == ("mpi", "bcast.binomial_tree")
    assert found["best"].choices == ("ring", "bcast.mpi")


def test_replay_plans_one_launch_per_environment_and_refuses_mixed_forcing() -> None:
    calls = [
        Call("allreduce", 8, "float32", "sum", 2, 1),
        Call("allreduce", 64, "float32", "sum", 2, 1),
    ]
    measured = {c.key: {"mpi", "ring", "mpi:ring"} for c in calls}
    winners = {calls[0].key: "mpi:ring", calls[1].key: "mpi"}
    launches, notes = plan_replay(policies(calls, measured, winners), [0, 1], "")
    plain = next(launch for launch in launches if not launch.env)
    assert set(plain.policies) == {"default", "ring"}
    forced = next(launch for launch in launches if launch.env)
    assert set(forced.policies) == {"mpi:ring"} and "RING" in str(forced.env).upper()
    assert len(notes) == 1 and "best runs mpi and mpi:ring for allreduce" in notes[0]
    # where the forced algorithm did not run (the library cannot apply it), its policy's default
    # stands in, as the forced launch falls back on its own: no conflict
    measured[calls[0].key] = {"mpi", "ring"}
    launches, notes = plan_replay(policies(calls, measured, {}), [0, 1], "")
    assert notes == [] and any(set(launch.policies) == {"mpi:ring"} for launch in launches)


def test_a_policy_of_imported_nccl_points_is_not_replayed() -> None:
    """A workload priced on imported nccl-tests points: its policies are NCCL's, which no
    launch here can run, so none is replayed and each note says why."""
    calls = [Call("allreduce", 8, "float32", "sum", 8, 1)]
    measured = {calls[0].key: {"nccl", "nccl:ring"}}
    found = policies(calls, measured, {})
    assert {p.name for p in found} == {"default", "nccl:ring", "best"}
    launches, notes = plan_replay(found, [0], "")
    assert launches == [] and len(notes) == len(found)
    assert all("not replayed, cannot run nccl" in note for note in notes)
    assert all("NCCL results can only be imported" in note for note in notes)


def test_the_job_total_per_policy_is_calls_times_medians(decade_store) -> None:
    workload = workload_from_json(workload_json(DECADE_CALLS))
    report = workload_report(decade_store, DECADE_RUN, workload)
    rows = {p.row["policy"]: p.row for p in report.priced}
    # synthetic.decade_spec's exact times: 10 x 1000 B + 5 x 10000 B + 1 x 102400 B
    expected = {
        "default": 10 * 1e-3 + 5 * 10e-3 + 100e-3,
        "ring": 10 * 100e-6 + 5 * 1e-3 + 100e-3,
        "recursive_doubling": 10 * 1e-3 + 5 * 100e-6 + 10e-3,
        "mpi:ring": 10 * 10e-6 + 5 * 1e-3 + 1.0,
    }
    for name, total in expected.items():
        assert rows[name]["total_s"] == pytest.approx(total)
        assert (
            rows[name]["interval_low_s"] <= rows[name]["total_s"] <= rows[name]["interval_high_s"]
        )
    assert rows["default"]["verdict"] == SAME
    assert rows["recursive_doubling"]["verdict"] == "faster"
    assert rows["mpi:ring"]["verdict"] == "slower"
    assert rows["mpi:ring"]["ratio"] == pytest.approx(expected["mpi:ring"] / expected["default"])
    # mpi:ring improves two calls and worsens the third: "improve one point, worsen the rest"
    assert (rows["mpi:ring"]["faster_calls"], rows["mpi:ring"]["slower_calls"]) == (2, 1)
    assert rows["mpi:ring"]["loss_share"] == pytest.approx(0.9 / expected["default"])
    # best: per call the fastest algorithm decidedly faster than the default there
    best = {c["call_index"]: c["algorithm"] for p in report.priced if p.row["policy"] == "best"
            for c in p.calls}  # fmt: skip
    assert best == {0: "mpi:ring", 1: "recursive_doubling", 2: "recursive_doubling"}
    assert rows["best"]["total_s"] == pytest.approx(10 * 10e-6 + 5 * 100e-6 + 10e-3)
    assert "1 of 4 distinct calls" in report.notes[0]  # 64 B: no point in the run


def test_a_report_is_stored_with_the_run_and_printed(decade_store, tmp_path, capsys) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload_json(DECADE_CALLS)))
    args = ["workload", "report", str(path), "--run", DECADE_RUN, "--store", str(decade_store)]
    assert main([*args, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    row = shown["policies"][0]
    assert {"policy", "total_s", "interval_low_s", "interval_high_s"} <= set(row)
    assert [c["call_index"] for c in row["calls"]] == [0, 1, 2]
    (stored,) = stored_workloads(decade_store, DECADE_RUN)
    assert stored["workload"] == "job" and len(stored["body"]["calls"]) == 4
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "where the job's time goes under default" in text and "recursive_doubling" in text
    report_workload(decade_store, DECADE_RUN, load_workload(path))  # replaces, not adds
    assert len(stored_workloads(decade_store, DECADE_RUN)) == 1


def test_a_report_on_a_run_not_in_the_store_is_refused(decade_store, tmp_path, capsys) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload_json(DECADE_CALLS)))
    args = ["workload", "report", str(path), "--run", "r-nope", "--store", str(decade_store)]
    assert main(args) == 2
    assert "no run r-nope" in capsys.readouterr().err
