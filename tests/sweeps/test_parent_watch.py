"""The ranks' watch on the collsweep process that launched them (runners.ranks.parent_watch),
also on a machine loaded far beyond its cores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, HeldPoint, wait_until
from helpers.sweep_runs import QUICK, rank_processes, start, wait_for_text, write_spec

from runners.ranks import parent_watch


def test_a_live_parent_is_alive_and_a_reused_pid_is_not() -> None:
    """A pid that now names another process (another start time) counts as a parent gone."""
    me = os.getpid()
    start = parent_watch.started_at(me)
    assert start is not None and start.isdigit()
    assert parent_watch._parent_alive(me, start)
    assert not parent_watch._parent_alive(me, str(int(start) + 1))


def test_a_finished_parent_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    start = parent_watch.started_at(child.pid)
    child.wait()
    assert not parent_watch._parent_alive(child.pid, start)
    assert parent_watch.started_at(child.pid) is None


def test_a_parent_that_exited_but_was_never_reaped_is_gone() -> None:
    """A zombie still answers kill(pid, 0) with its start time (where orphans are adopted by
    an init that does not reap them): it counts as gone."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    start = parent_watch.started_at(child.pid)
    assert parent_watch._parent_alive(child.pid, start)
    deadline = time.monotonic() + 10
    while not parent_watch._zombie(child.pid):  # exited, not yet waited for
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(child.pid, 0)  # the pid still answers
    assert not parent_watch._parent_alive(child.pid, start)
    child.wait()


LOADERS_PER_CORE = 4  # busy loops per core, beside eight ranks: the machine far beyond its cores


@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.usefixtures("calibrated_store")
def test_ranks_leave_their_killed_parent_on_a_machine_loaded_far_beyond_its_cores(
    tmp_path: Path,
) -> None:
    """Eight ranks (one parked mid-point, the others spinning in MPI) and LOADERS_PER_CORE
    busy loops on every core; once the 1-minute load is past the cores, the sweep is SIGKILLed:
    every rank and the launcher leave within a minute (measured: printed)."""
    spec = write_spec(tmp_path, "sizes = [8, 64]\n" + QUICK.replace("[2]", "[8]"))
    db, log = tmp_path / "s.duckdb", tmp_path / "sweep.err"
    sweep = start(db, spec, env=HeldPoint(tmp_path, "ring", 2).env, log=log)
    cores = os.cpu_count() or 1
    loaders = []
    try:
        wait_for_text(log, "[   3/18]")
        loaders = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(LOADERS_PER_CORE * cores)
        ]
        assert wait_until(lambda: os.getloadavg()[0] > cores, 300)
        assert len(rank_processes(sweep.pid)) > 8  # the ranks and their launcher
        load = os.getloadavg()[0]
        sweep.kill()
        sweep.wait()
        killed = time.monotonic()
        gone = wait_until(lambda: not rank_processes(sweep.pid), 60, every_s=0.05)
        took = time.monotonic() - killed
    finally:
        for loader in loaders:
            loader.kill()
            loader.wait()
        if sweep.poll() is None:
            sweep.kill()
    print(f"ranks gone {took:.2f} s after the SIGKILL ({len(loaders)} busy loops, load {load:.1f})")
    assert gone, rank_processes(sweep.pid)


SPINNING_CHILDREN = """
import os, socket, subprocess, sys
from runners.domain.sweep.launcher import PARENT_ENV
env = {**os.environ, PARENT_ENV: f"{socket.gethostname()}:{os.getpid()}"}
rank = (
    "import sys\\nfrom runners.ranks import parent_watch\\nparent_watch.start()\\n"
    "sys.stdout.write('watching\\\\n'); sys.stdout.flush()\\nwhile True: pass\\n"
)
count = int(sys.argv[1])
children = [subprocess.Popen([sys.executable, "-c", rank], env=env) for _ in range(count)]
print(" ".join(str(c.pid) for c in children), flush=True)
for child in children:
    child.wait()
"""


@pytest.mark.slow
def test_the_watch_ends_spinning_ranks_of_a_killed_parent_on_an_overloaded_machine() -> None:
    """No launcher to notice for them: 4 'ranks' a core whose main thread spins in Python (the
    watch thread must win the GIL and the CPU) and LOADERS_PER_CORE busy loops a core; their
    parent is SIGKILLed once the 1-minute load is past the cores: each leaves within a minute."""
    cores = os.cpu_count() or 1
    loaders: list[subprocess.Popen] = []
    ranks: list[int] = []
    parent = subprocess.Popen(
        [sys.executable, "-c", SPINNING_CHILDREN, str(4 * cores)], stdout=subprocess.PIPE,
        text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        ranks = _watching(parent)
        loaders = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(LOADERS_PER_CORE * cores)
        ]
        assert wait_until(lambda: all(_cpu_s(p.pid) >= 0.2 for p in loaders), 300)  # spinning
        assert wait_until(lambda: os.getloadavg()[0] > cores, 300)
        assert all(map(_running, ranks))
        load = os.getloadavg()[0]
        parent.kill()
        parent.wait()
        killed = time.monotonic()
        gone = wait_until(lambda: not any(map(_running, ranks)), 60, every_s=0.05)
        took = time.monotonic() - killed
    finally:
        for process in [parent, *loaders]:
            process.kill()
            process.wait()
        for pid in filter(_running, ranks):
            os.kill(pid, signal.SIGKILL)
    print(f"{len(ranks)} spinning ranks gone {took:.2f} s after their parent's SIGKILL "
          f"({len(loaders)} busy loops, load {load:.1f})")  # fmt: skip
    assert gone


def _watching(parent: subprocess.Popen) -> list[int]:
    """The pids of the parent's spinning ranks once every one has started its watch."""
    ranks, watching = [], 0
    while not ranks or watching < len(ranks):
        line = parent.stdout.readline()
        assert line, "the spinning ranks' parent ended"
        if "watching" in line:  # ranks write at once into one pipe: count every one
            watching += line.count("watching")
        elif line.strip():
            assert line.replace(" ", "").strip().isdigit(), line
            ranks = [int(pid) for pid in line.split()]
    return ranks


def _cpu_s(pid: int) -> float:
    """CPU seconds the process has used (user and system), 0 where /proc does not say."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _running(pid: int) -> bool:
    """Whether the process exists and has not exited (a zombie has)."""
    return parent_watch.started_at(pid) is not None and not parent_watch._zombie(pid)
