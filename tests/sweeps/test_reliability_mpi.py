"""How a sweep ends, on real ranks: a busy store, every stop signal, killed parents, crashed
and garbled jobs, resume, and live runs. Each case records into the reliability figure how many
finished points were lost and whether the run's status told the truth."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, HeldPoint, run_cli, wait_until
from helpers.sweep_runs import (
    QUICK,
    hold_store,
    lost_points,
    only_run,
    points,
    rank_processes,
    start,
    status_is_true,
    wait_for_text,
    write_spec,
)

from runners import store

# Every sweep here starts from a store that holds a calibration (conftest.calibrated_store).
pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("calibrated_store")]


@pytest.mark.slow
def test_a_store_held_longer_than_any_timeout_delays_points_but_loses_none(
    tmp_path: Path, reliability
) -> None:
    """A reader holds the store for more than twice the lock timeout (the old writer gave up
    after one): the sweep keeps measuring, says who holds the store, and ends complete with
    every point. The timeout is cut to 1.5 s (COLLSWEEP_LOCK_TIMEOUT_S) so that the hold (4 s)
    need not last minutes; the sweep's ring parks in its second cell until the store is held, so
    the held store meets points still to come on any machine."""
    spec = write_spec(tmp_path, "sizes = [4096, 8192, 16384, 32768]\n" + QUICK)
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "ring", 2)
    sweep = start(db, spec, env=held.env | {store.LOCK_TIMEOUT_ENV: "1.5"}, log=log)
    wait_for_text(log, "[   3/36]")
    holder = hold_store(db, 4)
    assert "[   4/36]" not in log.read_text()
    held.release()
    sweep.communicate(timeout=240)
    holder.wait()
    text = log.read_text()
    assert sweep.returncode == 0, text[-3000:]
    assert "the store is busy" in text and f"pid {holder.pid}" in text
    run_id = only_run(db)
    assert len(points(db)) == 12 and store.get_run(db, run_id)["status"] == "complete"
    assert not (tmp_path / "s.duckdb.journal").exists()
    reliability.fault("store held 4 s", lost_points(db, log), status_is_true(db, run_id, 12))


def test_second_signal_leaves_a_busy_store_and_the_journal_finishes_the_run(
    tmp_path: Path, reliability
) -> None:
    """Ctrl-C while the store is busy: the first says it still waits, the second leaves at once
    with the points in the journal; the run is then shown abandoned, and the next sweep on the
    store stores the journal's points and the run's true status."""
    spec = write_spec(tmp_path, "sizes = [16384, 32768]\n" + QUICK)
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "ring", 2)
    sweep = start(db, spec, env=held.env, log=log)
    wait_for_text(log, "[   3/18]")
    holder = hold_store(db, 120)
    assert "[   4/18]" not in log.read_text()  # held while points still come
    held.release()
    try:
        wait_for_text(log, "waiting for the store to take the last")  # the final wait began
        sweep.send_signal(signal.SIGINT)
        wait_for_text(log, "signal again to leave now", 30)
        sweep.send_signal(signal.SIGINT)
        out, _ = sweep.communicate(timeout=20)
    finally:
        holder.kill()
        holder.wait()
    assert sweep.returncode == 130 and "--resume" in out
    run_id = only_run(db)
    listing = run_cli("runs", "--store", str(db))
    assert "abandoned" in listing.stdout and "stored as running" in listing.stdout
    resumed = run_cli("sweep", "--resume", run_id, "--store", str(db), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"recovered run {run_id}" in resumed.stderr
    frame = points(db)
    assert len(frame) == 6 and frame.point_id.is_unique and set(frame.status) == {"ok"}
    assert store.get_run(db, run_id)["status"] == "complete"
    reliability.fault("double Ctrl-C on a busy store", lost_points(db, log), True)


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT], ids=lambda s: s.name
)
def test_every_stop_signal_ends_the_sweep_the_same_way(
    tmp_path: Path, sig: signal.Signals, reliability
) -> None:
    """Points kept, run interrupted with the signal named, no job file and no rank left. The
    signal comes while ring is parked in its second cell, after the first size's points."""
    spec = write_spec(tmp_path, "sizes = [16384, 32768, 65536]\n" + QUICK)
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    temp = tmp_path / "tmp"
    temp.mkdir()
    held = HeldPoint(tmp_path, "ring", 2)
    sweep = start(db, spec, env={"TMPDIR": str(temp), **held.env}, log=log)
    wait_for_text(log, "[   3/27]")
    sweep.send_signal(sig)
    sweep.communicate(timeout=60)
    assert sweep.returncode == 130, log.read_text()[-2000:]
    run_id = only_run(db)
    run = store.get_run(db, run_id)
    assert run["status"] == "interrupted" and sig.name in run["status_reason"]
    assert len(points(db)) == 3
    assert list(temp.iterdir()) == []  # the job file is gone
    assert rank_processes(sweep.pid) == []
    reliability.fault(sig.name, lost_points(db, log), status_is_true(db, run_id, 9))


def test_ranks_leave_when_the_sweep_is_killed_outright(tmp_path: Path, reliability) -> None:
    """SIGKILL to the CLI while a rank is stuck (parked, never released): the ranks notice and
    exit within seconds; the run is listed abandoned, and the next sweep on the store marks it
    interrupted."""
    spec = write_spec(tmp_path, "sizes = [8, 64]\n" + QUICK + "point_timeout_s = 300.0\n")
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    sweep = start(db, spec, env=HeldPoint(tmp_path, "ring", 2).env, log=log)
    wait_for_text(log, "[   3/18]")
    assert len(rank_processes(sweep.pid)) >= 2
    sweep.kill()
    sweep.wait()
    wait_until(lambda: not rank_processes(sweep.pid), 15)
    reliability.stop("sweep killed outright (SIGKILL)", len(rank_processes(sweep.pid)))
    assert rank_processes(sweep.pid) == []
    run_id = only_run(db)
    assert "abandoned" in run_cli("runs", "--store", str(db)).stdout
    again = run_cli("sweep", str(spec), "--store", str(db), "--ranks", "1", timeout=300)
    assert again.returncode == 0, again.stderr
    run = store.get_run(db, run_id)
    assert run["status"] == "interrupted" and "ended without finishing" in run["status_reason"]
    reliability.fault("SIGKILL of the CLI", lost_points(db, log), status_is_true(db, run_id, 6))


def test_a_bug_in_the_parent_fails_the_run_instead_of_completing_it(
    tmp_path: Path, reliability
) -> None:
    """A malformed event (an unexpected exception in the parent) ends the run failed, with the
    error named, exit 1, no traceback."""
    spec = write_spec(tmp_path, "sizes = [8, 64]\n" + QUICK)
    db = tmp_path / "s.duckdb"
    result = run_cli("sweep", str(spec), "--store", str(db), env={"COLLSWEEP_FAULT": "garble:ring"})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    run_id = only_run(db)
    run = store.get_run(db, run_id)
    reason = run["status_reason"]
    assert run["status"] == "failed" and "unexpected error: MalformedEvent: point event" in reason
    reliability.fault("garbled event", 0, status_is_true(db, run_id, 6))


def test_resume_measures_failed_points_again_unless_told_to_keep_them(
    tmp_path: Path, reliability
) -> None:
    """After a crashed ring: --keep-failed keeps the run failed (and says why); a plain
    --resume measures the failed points again and completes the run."""
    spec = write_spec(tmp_path, "sizes = [8, 4096]\n" + QUICK)
    db = tmp_path / "s.duckdb"
    crashed = run_cli("sweep", str(spec), "--store", str(db), env={"COLLSWEEP_FAULT": "crash:ring"})
    assert crashed.returncode == 1
    run_id = only_run(db)
    kept = run_cli("sweep", "--resume", run_id, "--keep-failed", "--store", str(db))
    assert kept.returncode == 1, kept.stderr
    run = store.get_run(db, run_id)
    assert run["status"] == "failed" and "failed or timed out" in run["status_reason"]
    assert status_is_true(db, run_id, 6)
    resumed = run_cli("sweep", "--resume", run_id, "--store", str(db))
    assert resumed.returncode == 0, resumed.stderr
    frame = points(db)
    assert len(frame) == 6 and set(frame.status) == {"ok"} and frame.point_id.is_unique
    assert store.get_run(db, run_id)["status"] == "complete"
    reliability.fault("crashed rank, then resume", 0, status_is_true(db, run_id, 6))


def test_a_live_run_cannot_be_resumed_twice(tmp_path: Path, reliability) -> None:
    """--resume of a run another sweep is measuring is refused, naming that process (the live
    sweep's ring is parked in its second cell until the second command has been answered)."""
    spec = write_spec(tmp_path, "sizes = [16384, 32768]\n" + QUICK)
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "ring", 2)
    sweep = start(db, spec, env=held.env, log=log)
    try:
        wait_for_text(log, "[   3/18]")
        run_id = only_run(db)
        second = run_cli("sweep", "--resume", run_id, "--store", str(db))
        assert second.returncode == 2 and f"pid {sweep.pid}" in second.stderr
        assert "being measured right now" in second.stderr
        reliability.bad_input("resume of a live run", True)
    finally:
        sweep.send_signal(signal.SIGTERM)
        sweep.communicate(timeout=60)


def test_resume_runs_no_launcher_taken_from_the_store(tmp_path: Path, reliability) -> None:
    """A launcher edited into the stored spec is not run on resume unless trusted; a launcher
    given on the command line is."""
    spec = write_spec(tmp_path, "sizes = [8]\n" + QUICK)
    db = tmp_path / "s.duckdb"
    assert run_cli("sweep", str(spec), "--store", str(db)).returncode == 0
    run_id = only_run(db)
    planted = tmp_path / "planted"
    con = store.storefile.connect(db, read_only=False, timeout=10)
    con.execute(
        'UPDATE runs SET spec_toml = regexp_replace(spec_toml, \'launcher = "[^"]*"\', '
        f"'launcher = \"touch {planted}{{ranks}}\"')"
    )
    con.close()
    refused = run_cli("sweep", "--resume", run_id, "--store", str(db))
    assert refused.returncode == 2 and "--trust-stored-launcher" in refused.stderr
    assert not list(tmp_path.glob("planted*"))
    given = run_cli(
        "sweep", "--resume", run_id, "--launcher", "mpiexec -n {ranks}", "--store", str(db)
    )
    assert given.returncode == 0, given.stderr
    assert not list(tmp_path.glob("planted*"))
    reliability.bad_input("launcher planted in the store", True)


def test_a_stop_signal_during_the_analysis_leaves_a_true_status_and_says_how_to_finish(
    tmp_path: Path, reliability
) -> None:
    """SIGTERM while the sweep analyses its stored run (parked there: hold:analysis): exit
    130 with one line naming `collsweep analyze`; the run stays complete with every point, and
    `sweep --resume` (nothing left to measure) then analyses it."""
    spec = write_spec(tmp_path, "sizes = [8, 4096]\n" + QUICK)
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "analysis")
    sweep = start(db, spec, env=held.env, log=log)
    wait_for_text(log, "analysing run")
    sweep.send_signal(signal.SIGTERM)
    sweep.communicate(timeout=60)
    text = log.read_text()
    assert sweep.returncode == 130, text[-2000:]
    said = [line for line in text.splitlines() if "during the analysis" in line]
    assert len(said) == 1 and "collsweep analyze" in said[0] and "Traceback" not in text
    run_id = only_run(db)
    assert store.get_run(db, run_id)["status"] == "complete" and len(points(db)) == 6
    predictions = "SELECT count(*) n FROM predictions"
    assert store.query(db, predictions).n.item() == 0
    resumed = run_cli("sweep", "--resume", run_id, "--store", str(db))  # finishes the analysis
    assert resumed.returncode == 0 and "nothing to measure; analysing it" in resumed.stdout
    assert store.query(db, predictions).n.item() > 0
    assert not rank_processes(sweep.pid)
    reliability.fault("SIGTERM during the analysis", 0, status_is_true(db, run_id, 6))


FULL_DISK = """
set -u
mount -t tmpfs -o size=64k tmpfs "$JOURNAL"
dd if=/dev/zero of="$JOURNAL/filler" bs=4k count=100 2>/dev/null
"$PY" -m runners.cli sweep "$SPEC" --store "$STORE" --run-id full-at-start; echo "rc=$?"
rm "$JOURNAL/filler"; dd if=/dev/zero of="$JOURNAL/filler" bs=4k count=14 2>/dev/null
"$PY" -m runners.cli sweep "$SPEC" --store "$STORE" --run-id full-mid-run; echo "rc=$?"
umount "$JOURNAL"
"""


def test_a_full_disk_beside_the_store_ends_in_one_line_and_a_true_status(tmp_path: Path) -> None:
    """The journal folder on a 64 KiB tmpfs (a private mount namespace): full from the start,
    the sweep refuses in one line before any run exists; with two pages free, the run starts,
    the journal fills, and the run ends `failed` saying so, its rows in the store."""
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no unprivileged mount namespace here (unshare -rm) to make a small disk")
    db = tmp_path / "s.duckdb"
    journal = tmp_path / "s.duckdb.journal"
    journal.mkdir()
    spec = write_spec(tmp_path, "sizes = [8, 64]\n" + QUICK + "launches = 1\n")
    env = {**os.environ, "JOURNAL": str(journal), "SPEC": str(spec), "STORE": str(db)}
    env |= {"PY": sys.executable, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", FULL_DISK],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    out, err = result.stdout, result.stderr
    assert "Traceback" not in err, err[-3000:]
    first = [line for line in err.splitlines() if "full-at-start" in line or "lock" in line]
    assert out.count("rc=2") == 1 and out.count("rc=1") == 1, out + err[-2000:]
    assert any("cannot write the run's lock" in line and "No space left" in line for line in first)
    runs = store.query(db, "SELECT run_id, status, status_reason FROM runs")
    assert runs.run_id.tolist() == ["full-mid-run"]  # nothing of the refused one
    assert runs.status[0] == "failed"
    assert "cannot write the journal" in runs.status_reason[0]
    assert "No space left on device" in runs.status_reason[0]


STORE_ON_A_FULL_DISK = """
set -u
mount -t tmpfs -o size=$DISK_KIB"k" tmpfs "$DISK"
cp "$TEMPLATE" "$DISK/s.duckdb"
left=$(($(df --output=avail -k "$DISK" | tail -1) - FREE_KIB))
dd if=/dev/zero of="$DISK/filler" bs=1k count=$left 2>/dev/null
"$PY" -m runners.cli sweep "$SPEC" --store "$DISK/s.duckdb" --run-id on-a-full-disk
echo "rc=$?"
"$PY" -m runners.cli runs --store "$DISK/s.duckdb" --format json
WHOLE="import json, sys; [json.loads(line) for line in sys.stdin]; print('journal whole')"
cat "$DISK"/s.duckdb.journal/*.jsonl 2>/dev/null | "$PY" -c "$WHOLE"
umount "$DISK"
"""


@pytest.mark.parametrize("free_kib", [4, 30])
def test_a_store_on_a_full_disk_ends_in_one_line_and_a_true_status(
    tmp_path: Path, calibrated_store: Path, free_kib: int, reliability
) -> None:
    """The store itself on a tmpfs with a few KiB left: the sweep is refused before any rank
    (the run's row cannot be written) or ends failed mid-run, in one line each, never a
    traceback; `runs` then never says `running` for it, and the journal has no cut line."""
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no unprivileged mount namespace here (unshare -rm) to make a small disk")
    disk = tmp_path / "disk"
    disk.mkdir()
    spec = write_spec(tmp_path, "sizes = [8, 64, 512, 4096]\n" + QUICK + "launches = 2\n")
    size_kib = calibrated_store.stat().st_size // 1024 + 1024
    env = {**os.environ, "DISK": str(disk), "SPEC": str(spec), "TEMPLATE": str(calibrated_store)}
    env |= {"PY": sys.executable, "PYTHONPATH": str(ROOT), "FREE_KIB": str(free_kib)}
    env |= {"DISK_KIB": str(size_kib)}
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", STORE_ON_A_FULL_DISK],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    out, err = result.stdout, result.stderr
    assert "Traceback" not in err and "No space left on device" in err, err[-3000:]
    assert "rc=2" in out or "rc=1" in out, out
    listed = json.loads(out[out.index("rc=") + 5 : out.rindex("]") + 1] or "[]")
    mine = [r for r in listed if r["run_id"] == "on-a-full-disk"]
    assert all(r["status"] != "running" for r in mine), mine
    print(free_kib, "KiB left:", [(r["status"], r["reason"][:60]) for r in mine])
    assert "journal whole" in out or "rc=2" in out
    reliability.fault(f"the store's disk full ({free_kib} KiB left)", 0, True)
