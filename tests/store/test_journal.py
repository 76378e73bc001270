"""The run journal, the run lock, the run writer's replay and the final-status rule (no MPI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runners import store
from runners.jobs import run_writer
from runners.jobs.sweep import final_status
from runners.store.journal import (
    Journal,
    RunBusy,
    RunLock,
    abandoned_runs,
    batch,
    calibration_record,
    is_live,
    point_record,
    probe_record,
    run_record,
)

RUN = "r20260101-000000-abcd"


def _point(pid: str, status: str = "ok") -> dict:
    return {
        "point_id": pid,
        "run_id": RUN,
        "algorithm": "ring",
        "ranks": 2,
        "bytes": int(pid.rsplit("/", 1)[-1]),
        "dtype": "float32",
        "op": "sum",
        "status": status,
    }


def test_journal_keeps_complete_records_and_skips_a_line_cut_by_a_crash(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "s.duckdb", RUN)
    journal.append(point_record(_point(f"{RUN}/8"), [{"point_id": f"{RUN}/8", "iteration": 0}]))
    journal.append(run_record(RUN, {"status": "complete"}))
    with open(journal.path, "a") as handle:
        handle.write('{"kind": "point", "point": {"point_id"')  # killed mid-write
    records = journal.records()
    assert [r["kind"] for r in records] == ["point", "run"]
    journal.remove()
    assert not journal.exists() and journal.records() == []


def test_batch_folds_records_later_wins() -> None:
    first, again = _point(f"{RUN}/8", "failed"), _point(f"{RUN}/8", "ok")
    samples = [{"point_id": f"{RUN}/8", "iteration": 0, "seconds": 1.0}]
    probe = {"run_id": RUN, "job": "ranks=2 config=default", "launch": 0, "moment": "start"}
    probe |= {"pingpong_s": 2e-6}
    records = [
        point_record(first, []),
        run_record(RUN, {"status": "running", "host": "a"}),
        point_record(again, samples),
        run_record(RUN, {"status": "complete"}),
        probe_record(probe | {"pingpong_s": 9e-6}),
        probe_record(probe),
        probe_record(probe | {"moment": "end"}),
        calibration_record({"calibration_id": "launch:a", "alpha_s": 1.0}),
        calibration_record({"calibration_id": "launch:b", "alpha_s": 1.0}),
        calibration_record({"calibration_id": "launch:a", "alpha_s": 2.0}),
    ]
    points, kept_samples, runs, probes, calibrations = batch(records)
    assert points == [again] and kept_samples == samples
    assert runs == {RUN: {"status": "complete", "host": "a"}}
    assert probes == [probe, probe | {"moment": "end"}]  # one per (job, launch, moment)
    assert calibrations == [
        {"calibration_id": "launch:a", "alpha_s": 2.0},
        {"calibration_id": "launch:b", "alpha_s": 1.0},
    ]


def test_run_lock_refuses_a_live_holder_and_takes_over_a_dead_one(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pathlib import Path\n"
            "from runners.store.journal import RunLock\n"
            f"lock = RunLock(Path({str(path)!r}), {RUN!r}); lock.acquire()\n"
            "print('locked', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert is_live(path, RUN) and abandoned_runs(path) == []
        with pytest.raises(RunBusy, match=f"pid {holder.pid}"):
            RunLock(path, RUN).acquire()
    finally:
        holder.kill()
        holder.wait()
    assert not is_live(path, RUN) and abandoned_runs(path) == [RUN]
    with RunLock(path, RUN) as lock:
        assert lock.previous.startswith(f"pid {holder.pid} on ")
        assert is_live(path, RUN)
    assert not (tmp_path / "s.duckdb.journal").exists()  # emptied and removed


def test_a_live_run_stays_locked_after_its_lock_file_is_deleted(tmp_path: Path) -> None:
    """Deleting a live run's .lock let a second --resume run beside it; the run's claim (an
    abstract socket) still refuses it, and is free again once the holder lets go."""
    path = tmp_path / "s.duckdb"
    holder = RunLock(path, RUN)
    holder.acquire()
    try:
        holder.path.unlink()
        with pytest.raises(RunBusy, match=r"lock file .* was removed"):
            RunLock(path, RUN).acquire()
        other = RunLock(path, RUN + "x")  # another run of the same store is not affected
        other.acquire()
        other.release()
    finally:
        holder.release()
    with RunLock(path, RUN):
        pass


def test_replay_stores_a_dead_sweeps_journal_and_marks_its_run(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    store.create_run(path, {"run_id": RUN, "status": "running"})
    journal = Journal(path, RUN)
    journal.append(point_record(_point(f"{RUN}/8"), []))
    said: list[str] = []
    run_writer.recover_abandoned(path, said.append)
    run = store.get_run(path, RUN)
    assert run["status"] == "interrupted" and "ended without finishing" in run["status_reason"]
    assert store.point_ids(path, RUN) == {f"{RUN}/8"}
    assert not journal.exists() and "1 points stored" in said[0]
    run_writer.recover_abandoned(path, said.append)  # nothing left: nothing happens
    assert len(said) == 1


def test_writer_keeps_points_queued_while_the_store_is_busy(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    store.create_run(path, {"run_id": RUN, "status": "running"})
    said: list[str] = []
    writer = run_writer.RunWriter(path, RUN, said.append)
    with store.open_readonly(path):  # a reader in this process: the writer cannot open it
        writer.add_point(_point(f"{RUN}/8"), [])
        assert not writer.flush(timeout=0.1)
        assert writer.waiting == 1 and writer.journal.exists()
        assert "the store is busy" in said[0]
    assert writer.flush() and writer.waiting == 0 and not writer.journal.exists()
    assert store.point_ids(path, RUN) == {f"{RUN}/8"}


PLANNED = {"a", "b", "c"}


@pytest.mark.parametrize(
    ("statuses", "interrupted", "error", "failures", "expected"),
    [
        ({"a": "ok", "b": "ok", "c": "skipped"}, "", "", [], "complete"),
        ({"a": "ok", "b": "ok", "c": "skipped"}, "received SIGINT", "", [], "complete"),
        ({"a": "ok", "b": "ok"}, "received SIGTERM", "", [], "interrupted"),
        ({"a": "ok", "b": "ok"}, "", "KeyError: 'x'", [], "failed"),
        ({"a": "ok", "b": "ok", "c": "failed"}, "", "", ["job exited with 1"], "failed"),
        ({"a": "ok", "b": "ok"}, "", "", [], "failed"),  # a point missing, nobody said why
        ({"a": "ok", "b": "ok", "c": "timeout"}, "", "", [], "failed"),  # kept from before
    ],
)
def test_final_status_is_complete_only_with_every_point_ok_or_skipped(
    statuses, interrupted, error, failures, expected
) -> None:
    status, reason = final_status(PLANNED, statuses, interrupted, error, failures)
    assert status == expected
    assert (reason == "") == (status == "complete")


def test_damaged_journal_records_are_set_aside_and_the_rest_is_stored(tmp_path: Path) -> None:
    """A point with a status the store does not know, another run's point, a line that is not
    JSON and a record of no known kind: kept in <run>.rejected with their reasons and said;
    the good point is stored, the run marked interrupted, and the next replay finds nothing."""
    path = tmp_path / "s.duckdb"
    store.create_run(path, {"run_id": RUN, "status": "running"})
    journal = Journal(path, RUN)
    good = f"{RUN}/8"
    journal.append(point_record(_point(good), [{"point_id": good, "iteration": 0, "seconds": 1.0}]))
    journal.append(point_record(_point(f"{RUN}/16", "weird"), []))
    journal.append(point_record(_point(f"{RUN}/32") | {"run_id": "r20990101-000000-zzzz"}, []))
    with open(journal.path, "a") as handle:
        handle.write("not json at all\n")
    journal.append({"kind": "surprise"})
    said: list[str] = []
    run_writer.recover_abandoned(path, said.append)
    assert store.query(path, "SELECT point_id FROM points").point_id.tolist() == [good]
    assert store.get_run(path, RUN)["status"] == "interrupted"
    rejected = [json.loads(line) for line in journal.path.with_suffix(".rejected").open()]
    assert [r["problem"] for r in rejected] == [
        "point status 'weird' is not one of ok, failed, skipped, timeout",
        f"point {RUN}/32 belongs to another run",
        "not JSON",
        "unknown record kind 'surprise'",
    ]
    assert any("set aside 4 damaged journal record(s)" in line for line in said), said
    assert not journal.exists() and abandoned_runs(path) == []


def test_a_record_the_store_refuses_is_set_aside_and_the_run_still_marked(tmp_path: Path) -> None:
    """A point whose median is text passes the record checks but not the store's columns: the
    journal is set aside with the store's reason; the run is still marked interrupted."""
    path = tmp_path / "s.duckdb"
    store.create_run(path, {"run_id": RUN, "status": "running"})
    journal = Journal(path, RUN)
    journal.append(point_record(_point(f"{RUN}/8") | {"median_s": "fast"}, []))
    said: list[str] = []
    run_writer.recover_abandoned(path, said.append)
    assert store.get_run(path, RUN)["status"] == "interrupted"
    assert store.query(path, "SELECT count(*) n FROM points").n.item() == 0
    [rejected] = [json.loads(line) for line in journal.path.with_suffix(".rejected").open()]
    assert rejected["problem"].startswith("the store refused it")
    assert not journal.exists() and abandoned_runs(path) == []
