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
        if not _armed(prctl, sig, parent):
            os._exit(128 + int(sig))

    return arm


def _armed(prctl: Callable[..., int], sig: int, parent: int) -> bool:
    """Ask for ``sig`` at the parent's death; False when ``parent`` died before the request
    (no signal comes then: this process was adopted already)."""
    prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    return os.getppid() == parent


def die_with_parent(parent: int, sig: int = signal.SIGKILL) -> bool:
    """This process, a child of ``parent`` (its pid, known from before this process started:
    a pid read here could already be the adopter's), receives ``sig`` when ``parent`` dies,
    kept across an exec; False when it is gone already. Nothing is armed where the system
    offers no such signal."""
    prctl = _prctl()
    return True if prctl is None else _armed(prctl, sig, parent)
