"""Rank side: leave when the collsweep process that launched this job is gone.

The launcher runs in a session of its own (so a terminal's Ctrl-C reaches only the parent,
which then kills the job cleanly). If the parent itself is killed outright (SIGKILL, the OOM
killer), nobody kills the ranks; a hung rank would spin for ever. So every rank started on the
parent's host checks, once a second on a daemon thread, that the parent still lives, and exits
when it does not. Ranks on other hosts cannot see the parent's pid and rely on their launcher.
A pid is reused once its process is gone (a busy machine wraps around its pids within minutes),
so where /proc shows it the parent is also known by its start time.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

from runners.domain.sweep.launcher import PARENT_ENV

CHECK_SECONDS = 1.0
EXIT_STATUS = 75


def started_at(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc), None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]  # field 22; the name before ")" may hold spaces


def _zombie(pid: int) -> bool:
    """Whether the process has exited but not been reaped: where the process that adopts
    orphans does not reap them (some container inits), a dead parent stays a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _parent_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return (start is None or started_at(pid) == start) and not _zombie(pid)


def _watch(pid: int, start: str | None) -> None:
    while _parent_alive(pid, start):
        time.sleep(CHECK_SECONDS)
    os._exit(EXIT_STATUS)  # no clean-up to wait for: the results have nowhere to go


def start() -> bool:
    """Start watching the parent named in the environment; False when there is none to watch."""
    host, _, pid = os.environ.get(PARENT_ENV, "").rpartition(":")
    if not pid.isdigit() or host != socket.gethostname():
        return False
    parent = int(pid)
    watch = threading.Thread(
        target=_watch, args=(parent, started_at(parent)), daemon=True, name="parent-watch"
    )
    watch.start()
    return True
