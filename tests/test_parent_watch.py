"""The ranks' watch on the collsweep process that launched them (runners.ranks.parent_watch)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

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
