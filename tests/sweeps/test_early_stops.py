"""A stop in the first second of a sweep, after its run's row is written and before any rank
starts (parked there: hold:sweep-created): the store never says `running` for a sweep that
is gone."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from conftest import HeldPoint, wait_until
from helpers.sweep_runs import QUICK, only_run, start, write_spec

from runners import store


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_before_the_first_launch_leaves_the_run_interrupted(
    tmp_path: Path, stop: signal.Signals, reliability
) -> None:
    spec = write_spec(tmp_path, "sizes = [8]\n" + QUICK)
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "sweep-created")
    sweep = start(db, spec, env=held.env, log=log)
    assert wait_until(held.held_file.exists, 120), log.read_text()[-2000:]
    sweep.send_signal(stop)
    out, _ = sweep.communicate(timeout=60)
    assert sweep.returncode == 130 and "Traceback" not in log.read_text()
    run = store.get_run(db, only_run(db))
    assert run["status"] == "interrupted"
    assert run["status_reason"] == f"received {stop.name} before any rank started"
    assert f"collsweep sweep --resume {run['run_id']}" in out
    reliability.fault(f"{stop.name} before the first launch", 0, run["status"] == "interrupted")
