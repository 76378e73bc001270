"""A stop signal that arrives while the store is being written (runners.process.stops): the
write commits or rolls back whole, then the stop is acted on; no DuckDB error, no traceback,
a true run status. The writers are parked inside their transaction (COLLSWEEP_FAULT=
hold:write-points / hold:write-analysis) while the signal is sent, whatever the machine's
speed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ROOT, HeldPoint, run_cli, wait_until
from helpers.store_rows import point_row, run_row
from helpers.sweep_runs import (
    QUICK,
    SLOW,
    lost_points,
    only_run,
    points,
    rank_processes,
    start,
    status_is_true,
    write_spec,
)

from runners import store
from runners.jobs.sweep import Interrupted, signals_as_exceptions
from runners.process import stops
from runners.store.journal import Journal, batch
from runners.store.schema import _writing


def _kept_stop() -> bool:
    """Whether the stop sent to this process has reached its (holding) handler."""
    return stops._kept is not None


def test_a_stop_inside_a_held_block_is_raised_when_the_block_ends() -> None:
    reached_end = False
    with pytest.raises(Interrupted, match="SIGTERM"), signals_as_exceptions(), stops.held():
        os.kill(os.getpid(), signal.SIGTERM)
        assert wait_until(_kept_stop, 10, 0.01)
        reached_end = True
    assert reached_end and stops._kept is None


def test_a_write_that_fails_after_a_stop_rolls_back_and_the_stop_is_raised(
    tmp_path: Path,
) -> None:
    """The stop comes inside the transaction, then the write itself fails: nothing of it is
    stored, and the stop (with the failure as its context) is what comes out."""
    db = tmp_path / "s.duckdb"
    store.create_run(db, run_row())
    point = point_row("r1", "ring", 8)
    with pytest.raises(Interrupted) as caught, signals_as_exceptions(), _writing(db) as con:
        con.execute("UPDATE runs SET status_reason = 'half' WHERE run_id = 'r1'")
        os.kill(os.getpid(), signal.SIGTERM)
        assert wait_until(_kept_stop, 10, 0.01)
        store.writes._insert(con, "points", [point, point | {"status": None}])
    assert isinstance(caught.value.__context__, ValueError)
    assert store.get_run(db, "r1")["status_reason"] is None
    assert store.query(db, "SELECT count(*) n FROM points").n.item() == 0


WRITER = """
import sys
from pathlib import Path
from runners import store
from runners.jobs.sweep import Interrupted, signals_as_exceptions
from helpers.store_rows import point_row, sample_rows
db = Path(sys.argv[1])
points = [point_row("r1", "ring", 8 * 2**i) for i in range(50)]
samples = [s for p in points for s in sample_rows(p["point_id"], 20)]
with signals_as_exceptions():
    try:
        if sys.argv[2:] == ["busy-first"]:  # show that the store is busy, then wait for it
            try:
                store.write_batch(db, points, samples, {}, timeout=0.2)
            except store.StoreBusy:
                print("busy", flush=True)
        store.write_batch(db, points, samples, {"r1": {"status_reason": "written"}})
    except Interrupted as exc:
        print(f"stopped after the write: {exc}", file=sys.stderr)
        sys.exit(130)
"""


def test_a_stop_signal_inside_a_write_lets_it_commit_whole_then_stops(tmp_path: Path) -> None:
    """A process parked inside write_batch's transaction gets SIGTERM, then is let go: the
    batch is stored whole (50 points, 1000 samples, the run's row), then it stops: exit 130,
    one line, no DuckDB error."""
    db = tmp_path / "s.duckdb"
    store.create_run(db, run_row())
    held = HeldPoint(tmp_path, "write-points")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)],
        cwd=ROOT,
        env={**os.environ, **held.env, "PYTHONPATH": str(ROOT / "tests")},
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until(held.held_file.exists, 60), writer.stderr.read()
    writer.send_signal(signal.SIGTERM)
    held.release()
    _, err = writer.communicate(timeout=60)
    assert writer.returncode == 130, err
    assert err.strip().splitlines() == ["stopped after the write: SIGTERM"]
    assert store.query(db, "SELECT count(*) n FROM points").n.item() == 50
    assert store.query(db, "SELECT count(*) n FROM samples").n.item() == 1000
    assert store.get_run(db, "r1")["status_reason"] == "written"


HOLDER = """
import sys
from runners import store
with store.open_readonly(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_stop_signal_ends_the_wait_for_a_busy_store_at_once(tmp_path: Path) -> None:
    """The writer waits for a store another process holds (a 10-minute lock timeout): a stop
    ends the wait within seconds, nothing written, no StoreBusy."""
    db = tmp_path / "s.duckdb"
    store.create_run(db, run_row())
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], cwd=ROOT, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), "busy-first"],
            cwd=ROOT,
            env={**os.environ, store.LOCK_TIMEOUT_ENV: "600", "PYTHONPATH": str(ROOT / "tests")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout.readline().strip() == "busy"  # now in its 10-minute wait
        sent = time.monotonic()
        writer.send_signal(signal.SIGTERM)
        _, err = writer.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        holder.communicate("")
    print(f"stopped {took:.2f} s after the signal")
    assert writer.returncode == 130 and took < 30
    assert err.strip().splitlines() == ["stopped after the write: SIGTERM"]
    assert store.query(db, "SELECT count(*) n FROM points").n.item() == 0


# --- on real ranks ------------------------------------------------------------------------------


@contextmanager
def parked(sweep: subprocess.Popen, held: HeldPoint, log: Path) -> Iterator[subprocess.Popen]:
    """The sweep once it is parked where ``held`` says; afterwards released and, should the
    test have failed before it ended, killed (a parked sweep defers its stop signals)."""
    try:
        assert wait_until(held.held_file.exists, 300), log.read_text()[-2000:]
        yield sweep
    finally:
        held.release()
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_a_stop_signal_during_a_sweeps_store_write_ends_it_interrupted(
    tmp_path: Path, reliability
) -> None:
    """SIGTERM while the sweep is parked inside a mid-run write of finished points (each point
    takes its whole budget, so a write comes before the last point): the write commits whole
    (every point it carried stored with its samples), then the sweep stops: exit 130, the run
    interrupted with the signal named and the resume command, no traceback, no rank left."""
    spec = write_spec(tmp_path, "sizes = [8, 64]\n" + SLOW)
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "write-points")
    with parked(start(db, spec, env=held.env, log=log), held, log) as sweep:
        run_id = run_of_journal(tmp_path)
        carried = {p["point_id"] for p in batch(Journal(db, run_id).records()).points}
        sweep.send_signal(signal.SIGTERM)
        held.release()
        out, _ = sweep.communicate(timeout=120)
    text = log.read_text()
    assert sweep.returncode == 130, text[-2000:]
    assert "Traceback" not in text + out and "Error" not in text + out
    assert f"finish it with: collsweep sweep --resume {run_id}" in out
    run = store.get_run(db, run_id)
    assert run["status"] == "interrupted" and run["status_reason"] == "received SIGTERM"
    frame = points(db)
    assert carried and carried <= set(frame.point_id) and len(frame) < 6
    counts = store.query(db, "SELECT point_id, count(*) n FROM samples GROUP BY point_id")
    assert dict(zip(counts.point_id, counts.n, strict=True)) == dict(
        zip(frame.point_id, frame.iterations, strict=True)
    )
    assert rank_processes(sweep.pid) == []
    reliability.fault("SIGTERM during a store write", lost_points(db, log), run_ok(db, run_id))


def run_of_journal(folder: Path) -> str:
    """The run's id while its sweep holds the store's transaction open: from its journal."""
    journals = list((folder / "s.duckdb.journal").glob("*.jsonl"))
    assert len(journals) == 1
    return journals[0].stem


def run_ok(db: Path, run_id: str) -> bool:
    return status_is_true(db, run_id, 6)


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_a_stop_signal_while_the_analysis_is_stored_leaves_it_whole(
    tmp_path: Path, reliability
) -> None:
    """SIGTERM while the sweep's analysis is parked inside its one transaction: the analysis
    is stored whole (each table as `collsweep analyze` stores it again), then the sweep stops
    with exit 130 and one line naming `collsweep analyze`; the run stays complete."""
    spec = write_spec(tmp_path, "sizes = [8, 4096]\n" + QUICK)
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "write-analysis")
    with parked(start(db, spec, env=held.env, log=log), held, log) as sweep:
        sweep.send_signal(signal.SIGTERM)
        held.release()
        sweep.communicate(timeout=120)
    text = log.read_text()
    assert sweep.returncode == 130, text[-2000:]
    said = [line for line in text.splitlines() if "during the analysis" in line]
    assert len(said) == 1 and "collsweep analyze" in said[0] and "Traceback" not in text
    run_id = only_run(db)
    assert store.get_run(db, run_id)["status"] == "complete"
    stored = analysis_counts(db)
    assert all(stored.values()), stored
    assert run_cli("analyze", run_id, "--store", str(db)).returncode == 0
    assert analysis_counts(db) == stored
    reliability.fault("SIGTERM while storing the analysis", 0, status_is_true(db, run_id, 6))


def analysis_counts(db: Path) -> dict[str, int]:
    """Rows in each analysis table a run of one library and collective always fills."""
    tables = ("predictions", "winners", "best_choices", "assumptions")
    return {t: store.query(db, f"SELECT count(*) n FROM {t}").n.item() for t in tables}
