"""A real Slurm cluster for the tests, started from a generated configuration in a temporary
folder: munged with its own key and socket, slurmctld and slurmd, no systemd. One node (this
host), or several on this host (a slurmd each, `slurmd -N name` on a port of its own) inside a
private network namespace whose loopback is the only network they and their jobs have
(`prefix()`: the words a client command runs under to reach them).

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
from pathlib import Path

from conftest import processes_with, wait_until

DAEMONS = ("slurmd", "slurmctld", "munged")
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
    """One partition `debug`, state under `folder`: one node (this host, its cores), or `nodes`
    nodes n1..nN of `cpus` each on this host, in a network namespace of their own."""

    def __init__(self, folder: Path, cpus: int | None = None, nodes: int = 1) -> None:
        self.folder = folder
        self.host = socket.gethostname().split(".")[0]
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = folder / "slurm.conf"
        self.names = [self.host] if nodes == 1 else [f"n{i + 1}" for i in range(nodes)]
        self._holder: subprocess.Popen | None = None  # keeps the namespace until stop()

    def env(self) -> dict[str, str]:
        """The environment a client command needs to reach this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def prefix(self) -> tuple[str, ...]:
        """The words a command runs under to reach the cluster: () for one node; for several,
        nsenter into their network namespace."""
        if self._holder is None:
            return ()
        return ("nsenter", f"--net=/proc/{self._holder.pid}/ns/net", "--")

    def _nodes_config(self) -> str:
        """NodeName and PartitionName lines: this host, or n1..nN on ports of their own."""
        if len(self.names) == 1:
            text = f"NodeName={self.host} CPUs={self.cpus} State=UNKNOWN\n"
            return (
                text
                + f"PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP\n"
            )
        text = "".join(
            f"NodeName={name} NodeHostname={self.host} NodeAddr=127.0.0.1 Port={_free_port()} "
            f"CPUs={self.cpus} State=UNKNOWN\n"
            for name in self.names
        )
        nodes = ",".join(self.names)
        return text + f"PartitionName=debug Nodes={nodes} Default=YES MaxTime=INFINITE State=UP\n"

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
        if len(self.names) > 1:  # one file per slurmd (%n: its node name), the loopback's address
            lines |= {
                "SlurmctldHost": f"{self.host}(127.0.0.1)",
                "SlurmdSpoolDir": f / "spool-%n",
                "SlurmdPidFile": f / "slurmd-%n.pid",
                "SlurmdLogFile": f / "slurmd-%n.log",
            }
        text = "".join(f"{k}={v}\n" for k, v in lines.items())
        return text + self._nodes_config()

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
        if len(self.names) > 1:
            self._holder = _namespace_holder()
        inside = self.prefix()
        subprocess.run([*inside, _daemon("munged"), *munge], check=True, timeout=30)
        subprocess.run(
            [*inside, _daemon("slurmctld"), "-f", str(self.conf)], check=True, timeout=30
        )
        for name in self.names:
            node = ["-N", name] if len(self.names) > 1 else []
            daemon = [*inside, _daemon("slurmd"), "-f", str(self.conf), *node]
            subprocess.run(daemon, check=True, timeout=30)
        self._wait_idle()

    def _wait_idle(self) -> None:
        if not wait_until(self._idle, READY_S, 0.5):
            raise RuntimeError(f"the Slurm node did not become idle:\n{self.log_tail()}")

    def _idle(self) -> bool:
        """Whether every node of the cluster reports itself idle."""
        command = [*self.prefix(), "sinfo", "-h", "-o", "%T"]
        out = subprocess.run(command, capture_output=True, text=True, env=self.env())
        return out.returncode == 0 and set(out.stdout.split()) == {"idle"}

    def log_tail(self) -> str:
        """The end of every daemon's log, for a failure message."""
        parts = []
        logs = ["slurmctld.log", "slurmd.log", *(f"slurmd-{n}.log" for n in self.names)]
        for name in [*logs, "munged.log"]:
            path = self.folder / name
            if path.exists():
                parts.append(f"--- {name}\n" + "\n".join(path.read_text().splitlines()[-15:]))
        return "\n".join(parts)

    def stop(self) -> None:
        """Stop the daemons this cluster started (their pid files), then any process still
        running with this cluster's SLURM_CONF in its environment (a job step's tasks outlive
        a stopped slurmd), and nothing else."""
        _terminate(self.job_processes(), grace_s=2.0)
        nodes = [f"slurmd-{n}" for n in self.names] if len(self.names) > 1 else ["slurmd"]
        _terminate(self._pids(nodes))  # the slurmds together (they report to the controller),
        _terminate(self._pids(["slurmctld", "munged"]))  # then the controller with munged
        if self._holder is not None:  # the namespace ends with its last process
            self._holder.kill()
            self._holder.wait(timeout=30)

    def _pids(self, names: list[str]) -> list[int]:
        """The pids in these daemons' pid files (those that have one)."""
        pids = []
        for name in names:
            try:
                pids.append(int((self.folder / f"{name}.pid").read_text().split()[0]))
            except (OSError, ValueError, IndexError):
                continue
        return pids

    def job_processes(self) -> list[int]:
        """Processes (not this one) whose environment names this cluster's configuration."""
        return processes_with("SLURM_CONF", str(self.conf))


def _namespace_holder() -> subprocess.Popen:
    """A process in a new network namespace whose loopback is up (it says so once it is),
    holding the namespace for the daemons nsenter'ed into it. The loopback gets a second
    address, 127.0.0.2: Slurm resolves with AI_ADDRCONFIG, which glibc grants IPv4 only when
    some address other than 127.0.0.1 is configured; it is still the namespace's loopback."""
    setup = "ip link set lo up && ip addr add 127.0.0.2/8 dev lo && echo up && exec sleep infinity"
    holder = subprocess.Popen(
        ["unshare", "-n", "--", "sh", "-c", setup],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    if holder.stdout.readline().strip() != "up":  # an event: the line, or its end at exit
        holder.kill()
        raise RuntimeError("could not make a network namespace for the cluster")
    return holder


def _terminate(pids: list[int], grace_s: float = 10.0) -> None:
    """SIGTERM to each at once, then SIGKILL after `grace_s` to those still there."""
    left = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            left.append(pid)
    wait_until(lambda: not any(map(_alive, left)), grace_s, 0.05)
    for pid in filter(_alive, left):
        with contextlib.suppress(ProcessLookupError):  # it may leave between the check and here
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
