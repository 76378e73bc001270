"""Child processes that end with the process that started them.

A server collsweep starts (the dashboard's) must not outlive collsweep killed outright (SIGKILL,
the OOM killer): nothing would stop it, and it would hold its port. On Linux the kernel sends a
chosen signal to a child when its parent dies (prctl PR_SET_PDEATHSIG), however the parent
dies; the child asks for it between fork and exec. Elsewhere nothing is armed. No MPI here.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _prctl() -> Callable[..., int] | None:
    """libc's prctl, loaded here in the parent (never between fork and exec); None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def dies_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for subprocess.Popen: the child receives ``sig`` when this process dies
    (strictly: when the thread that starts the child ends, so start it from the main thread);
    None where the system offers no such signal."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the line above: no signal comes
            os._exit(128 + int(sig))

    return arm


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """This process receives ``sig`` when its parent dies (kept across an exec); False when
    the parent is gone already. Nothing is armed where the system offers no such signal."""
    parent = os.getppid()
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    return os.getppid() == parent
