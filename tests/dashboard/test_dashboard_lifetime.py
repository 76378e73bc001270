"""`collsweep dashboard` killed outright takes its server with it (runners.process.lifetime):
nothing is left holding the port; a port already taken is refused before anything starts."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, processes_with, wait_until

from dashboard import serve
from runners.cli.dashboard import port_in_use
from runners.cli.main import main
from runners.process.lifetime import dies_with_parent

MARK = "COLLSWEEP_TEST_DASHBOARD"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_free(port: int) -> bool:
    """Whether a new server could listen on the port (connections in TIME_WAIT do not count)."""
    return not port_in_use(port)


def test_a_taken_port_is_one_line_exit_2_and_starts_nothing(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv(MARK, tmp_path.name)  # what a started server would inherit
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        status = main(["dashboard", "--port", str(port), "--store", str(tmp_path / "s.duckdb")])
        told = capsys.readouterr()
        assert status == 2 and told.out == "" and "ready" not in told.err
        assert told.err.strip() == (
            f"collsweep dashboard: error: port {port} on 127.0.0.1 is taken by another server: "
            "choose another with --port"
        )
        assert processes_with(MARK, tmp_path.name) == []


@pytest.mark.slow
def test_sigkill_of_collsweep_dashboard_frees_its_port(tmp_path: Path) -> None:
    port, mark = free_port(), f"{os.getpid()}-{time.monotonic_ns()}"
    command = ["dashboard", "--port", str(port), "--store", str(tmp_path / "s.duckdb")]
    cli = subprocess.Popen(
        [sys.executable, "-m", "runners.cli", *command],
        cwd=ROOT, env={**os.environ, MARK: mark},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert serve.wait_until_up(port, cli, timeout=180)
        assert len(processes_with(MARK, mark)) == 3  # collsweep, dashboard.serve, Streamlit
        cli.kill()
        cli.wait()
        killed = time.monotonic()
        assert wait_until(lambda: port_free(port) and not processes_with(MARK, mark), 60)
        print(f"port {port} free and the server gone {time.monotonic() - killed:.2f} s after")
    finally:
        for pid in processes_with(MARK, mark):
            os.kill(pid, signal.SIGKILL)


def test_a_child_started_to_die_with_its_parent_does(tmp_path: Path) -> None:
    """The parent (a process between this test and the child) is SIGKILLed: the child gets
    SIGTERM from the kernel and ends."""
    code = (
        "import subprocess, sys\nfrom runners.process.lifetime import dies_with_parent\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import signal; signal.pause()'],"
        " preexec_fn=dies_with_parent())\nprint(child.pid, flush=True)\nchild.wait()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    assert wait_until(lambda: not _running(child), 30)
    assert dies_with_parent() is not None  # Linux: armed


def _running(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"
