"""A real one-node Slurm cluster for the tests, started from a generated configuration in a
temporary folder: munged with its own key and socket, slurmctld and slurmd, no systemd.

It installs nothing (`.ci/run` installs Debian's slurm-wlm and munge); where slurmctld is not
installed the tests that need it are skipped with that reason. It stops exactly the daemons it
started (their pid files), never any other Slurm or munge on the machine. Clients (srun,
sbatch, sinfo) find the cluster through SLURM_CONF in the environment `env()` gives.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from conftest import processes_with

DAEMONS = ("slurmd", "slurmctld", "munged")  # stopped in this order
READY_S = 60


def installed() -> bool:
    """Whether the Slurm and munge daemons are on this machine."""
    return all(shutil.which(d) or Path(f"/usr/sbin/{d}").exists() for d in DAEMONS)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _daemon(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


class SlurmCluster:
    """One node (this host, its cores), one partition `debug`, state under `folder`."""

    def __init__(self, folder: Path, cpus: int | None = None) -> None:
        self.folder = folder
        self.host = socket.gethostname().split(".")[0]
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = folder / "slurm.conf"

    def env(self) -> dict[str, str]:
        """The environment a client command needs to reach this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def _config(self) -> str:
        f = self.folder
        lines = {
            "ClusterName": "collsweep",
            "SlurmctldHost": self.host,
            "AuthType": "auth/munge",
            "AuthInfo": f"socket={f / 'munge.sock'}",
            "CredType": "cred/munge",
            "ProctrackType": "proctrack/linuxproc",
            "TaskPlugin": "task/none",
            "SelectType": "select/cons_tres",
            "SelectTypeParameters": "CR_Core",
            "SlurmUser": "root",
            "SlurmdUser": "root",
            "StateSaveLocation": f / "state",
            "SlurmdSpoolDir": f / "spool",
            "SlurmctldPidFile": f / "slurmctld.pid",
            "SlurmdPidFile": f / "slurmd.pid",
            "SlurmctldPort": _free_port(),
            "SlurmdPort": _free_port(),
            "SlurmctldLogFile": f / "slurmctld.log",
            "SlurmdLogFile": f / "slurmd.log",
            "ReturnToService": 2,
            "MpiDefault": "none",
        }
        text = "".join(f"{k}={v}\n" for k, v in lines.items())
        text += f"NodeName={self.host} CPUs={self.cpus} State=UNKNOWN\n"
        text += f"PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP\n"
        return text

    def start(self) -> None:
        """Write the key and configuration, start munged, slurmctld and slurmd, and wait until
        the node is idle."""
        f = self.folder
        for sub in ("state", "spool"):
            (f / sub).mkdir(parents=True, exist_ok=True)
        key = f / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.conf.write_text(self._config())
        munge = [f"--key-file={key}", f"--socket={f / 'munge.sock'}", "--force"]
        munge += [f"--pid-file={f / 'munged.pid'}", f"--log-file={f / 'munged.log'}"]
        munge += [f"--seed-file={f / 'munge.seed'}"]
        subprocess.run([_daemon("munged"), *munge], check=True, timeout=30)
        subprocess.run([_daemon("slurmctld"), "-f", str(self.conf)], check=True, timeout=30)
        subprocess.run([_daemon("slurmd"), "-f", str(self.conf)], check=True, timeout=30)
        self._wait_idle()

    def _wait_idle(self) -> None:
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            out = subprocess.run(
                ["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=self.env()
            )
            if out.returncode == 0 and out.stdout.strip() == "idle":
                return
            time.sleep(0.5)
        raise RuntimeError(f"the Slurm node did not become idle:\n{self.log_tail()}")

    def log_tail(self) -> str:
        """The end of every daemon's log, for a failure message."""
        parts = []
        for name in ("slurmctld.log", "slurmd.log", "munged.log"):
            path = self.folder / name
            if path.exists():
                parts.append(f"--- {name}\n" + "\n".join(path.read_text().splitlines()[-15:]))
        return "\n".join(parts)

    def stop(self) -> None:
        """Stop the daemons this cluster started (their pid files), then any process still
        running with this cluster's SLURM_CONF in its environment (a job step's tasks outlive
        a stopped slurmd), and nothing else."""
        for pid in self.job_processes():
            _terminate(pid, grace_s=2.0)
        for name in DAEMONS:
            pid_file = self.folder / f"{name}.pid"
            try:
                pid = int(pid_file.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            _terminate(pid)

    def job_processes(self) -> list[int]:
        """Processes (not this one) whose environment names this cluster's configuration."""
        return processes_with("SLURM_CONF", str(self.conf))


def _terminate(pid: int, grace_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after `grace_s` if the process is still there."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):  # it may leave between the check and here
        os.kill(pid, signal.SIGKILL)
