"""A private network namespace for one launch: `python -P -m runners.process.network_namespace
[--check] [QDISC...] -- COMMAND...` (no MPI).

The process leaves this host's network for a namespace of its own (unshare(CLONE_NEWNET)),
brings that namespace's loopback up, shapes it with `tc` (the words runners.domain.nodes.network
gives) and replaces itself with COMMAND, the launcher: every rank it starts shares the
namespace, and its loopback is the only network they have, so nothing else is reachable and no
other address is used. The namespace has no name and no mount: it ends when its last process
does, its qdisc with it, however the launch ends (a SIGKILL included). `--check` does all of
it and exits, to learn before any rank starts whether this machine allows it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from runners.domain.nodes.network import NAMESPACE_ENV
from runners.domain.sweep.launcher import PARENT_ENV
from runners.process.children import python
from runners.process.lifetime import die_with_parent

CLONE_NEWNET = 0x40000000  # linux/sched.h
CHECK_TIMEOUT_S = 30.0


class NamespaceRefused(Exception):
    """This machine will not make the namespace or shape its loopback; one line says why."""


def enter_private_network() -> None:
    """Move this process into a new network namespace (needs CAP_SYS_ADMIN)."""
    if not sys.platform.startswith("linux"):
        raise NamespaceRefused("emulated nodes need Linux network namespaces")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        error = os.strerror(ctypes.get_errno())
        raise NamespaceRefused(
            f"cannot make a private network namespace here (unshare: {error}): emulated "
            "nodes need root or CAP_SYS_ADMIN"
        )


def _tool(words: Sequence[str], what: str) -> None:
    try:
        done = subprocess.run(list(words), capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise NamespaceRefused(f"{words[0]} (iproute2) is not installed: {what}") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[0]
        raise NamespaceRefused(f"cannot {what} ({' '.join(words)}: {said})")


def shape_loopback(qdisc: Sequence[str]) -> None:
    """Bring the namespace's loopback up and give it `qdisc` (none: unshaped)."""
    _tool(["ip", "link", "set", "lo", "up"], "bring the namespace's loopback up")
    if qdisc:
        what = "shape the loopback"
        if qdisc[0] == "netem":
            what += " with a delay: this kernel may have no netem qdisc; leave latency out"
        _tool(["tc", "qdisc", "add", "dev", "lo", "root", *qdisc], what)


def wrapper(qdisc: Sequence[str]) -> list[str]:
    """The words that run a command in a new namespace whose loopback has `qdisc`."""
    return python("-m", "runners.process.network_namespace", *qdisc, "--")


def namespace_problem(qdisc: Sequence[str]) -> str | None:
    """Why a launch cannot run in such a namespace here (one line), or None: tried for real,
    in a child that makes one and exits."""
    words = python("-m", "runners.process.network_namespace", "--check", *qdisc, "--")
    try:
        done = subprocess.run(words, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"making a network namespace took over {CHECK_TIMEOUT_S:g} s"
    if done.returncode == 0:
        return None
    return (done.stderr.strip().splitlines() or ["making a network namespace failed"])[-1]


def _launching_pid() -> int:
    """The collsweep process that started this one (PARENT_ENV, set before the fork: the
    parent's pid read now could already be whoever adopted this process)."""
    pid = os.environ.get(PARENT_ENV, "").rpartition(":")[2]
    return int(pid) if pid.isdigit() else os.getppid()


def main(argv: list[str]) -> int:
    """Enter the namespace, shape its loopback, then become the command (or exit: --check)."""
    check = "--check" in argv[:1]
    words = argv[1:] if check else argv
    if "--" not in words:
        print("usage: network_namespace [--check] [QDISC...] -- COMMAND...", file=sys.stderr)
        return 2
    split = words.index("--")
    qdisc, command = words[:split], words[split + 1 :]
    try:
        enter_private_network()
        shape_loopback(qdisc)
    except NamespaceRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    if check or not command:
        return 0
    # SIGKILL when collsweep dies, kept across the exec: the launcher killed so ends its
    # proxies and ranks, as a launch collsweep kills does, even while the ranks are still in
    # MPI_Init (before their own watch of collsweep runs)
    if not die_with_parent(_launching_pid(), signal.SIGKILL):
        return 128 + signal.SIGKILL
    os.environ[NAMESPACE_ENV] = "1"  # the ranks count the loopback's bytes as the network's
    os.execvp(command[0], command)
    return 127  # not reached: execvp raises when it fails


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
