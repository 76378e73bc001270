"""Where a run's ranks ran: one host or several (pure).

Best evidence first: the ranks' own host names, which every launch's machine-state probe
gathers (probes.nodes and ranks_per_node per job and launch); then the batch allocation the
sweep ran in (Slurm's node count); then the launcher's text (plain mpiexec without a host list
starts every rank here). A group whose ranks spanned several hosts talks over the network, so
the one-node contention model is not applied to it (runners.analysis).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

HOLDS, VIOLATED, UNKNOWN = "holds", "violated", "unknown"
_ALLOCATION_NODES = ("SLURM_JOB_NUM_NODES", "SLURM_NNODES")
_LAUNCHERS_ONE_HOST = ("mpiexec", "mpirun", "mpiexec.hydra")
_HOST_FLAGS = {"-f", "-hostfile", "--hostfile", "-machinefile", "--machinefile"}
_HOST_FLAGS |= {"-hosts", "--hosts", "-host", "--host", "-H"}
_HOST_ENV = ("HYDRA_HOST_FILE", "HYDRA_HOSTS")


def allocation_nodes(environment: Mapping[str, str]) -> int | None:
    """How many nodes the batch allocation the sweep ran in has (Slurm), or None outside one."""
    for key in _ALLOCATION_NODES:
        if str(environment.get(key, "")).isdigit():
            return int(environment[key])
    return None


def group_hosts(probes: Sequence[Mapping[str, Any]]) -> dict[int, tuple[int, int]]:
    """Per group size, the most hosts its ranks spanned in any launch and the most ranks that
    shared one host, from probes that recorded them (none before schema 7)."""
    out: dict[int, tuple[int, int]] = {}
    for row in probes:
        nodes, ranks = row.get("nodes"), row.get("ranks")
        if nodes is None or ranks is None or nodes != nodes:  # NaN: an older probe
            continue
        before = out.get(int(ranks), (0, 0))
        out[int(ranks)] = max(before[0], int(nodes)), max(before[1], int(row["ranks_per_node"]))
    return out


def host_names(probes: Sequence[Mapping[str, Any]]) -> str:
    """Every host any launch's ranks ran on, comma-separated."""
    names = {h for row in probes for h in str(row.get("hosts") or "").split(",") if h}
    return ",".join(sorted(names))


def multi_node_ranks(probes: Sequence[Mapping[str, Any]]) -> set[int]:
    """The group sizes whose ranks spanned more than one host in some launch."""
    return {ranks for ranks, (nodes, _) in group_hosts(probes).items() if nodes > 1}


def single_node(
    launcher: str | None, environment: Mapping[str, str], probes: Sequence[Mapping[str, Any]]
) -> tuple[str, str]:
    """(state, detail) of the single_node assumption, from the best evidence there is."""
    hosts = group_hosts(probes)
    if hosts:
        return _from_ranks(hosts, host_names(probes), environment)
    nodes = allocation_nodes(environment)
    if nodes is not None:
        return _from_allocation(nodes, environment)
    return _from_launcher(launcher, environment)


def _from_ranks(
    hosts: dict[int, tuple[int, int]], names: str, environment: Mapping[str, str]
) -> tuple[str, str]:
    spread = {r: h for r, h in sorted(hosts.items()) if h[0] > 1}
    job = environment.get("SLURM_JOB_ID")
    where = f" in Slurm job {job} of {allocation_nodes(environment)} node(s)" if job else ""
    if not spread:
        return HOLDS, (
            f"every launch's ranks shared one host ({names}){where}, by their own host names: "
            "messages are shared-memory copies that compete with the reductions"
        )
    groups = "; ".join(
        f"p={r} on {n} hosts, up to {k} ranks per host" for r, (n, k) in spread.items()
    )
    return VIOLATED, (
        f"{groups} ({names}){where}: those ranks talk over the network, so the one-node "
        "contention model is not applied to those groups"
    )


def _from_allocation(nodes: int, environment: Mapping[str, str]) -> tuple[str, str]:
    where = environment.get("SLURM_JOB_NODELIST") or environment.get("SLURM_NODELIST") or "?"
    job = environment.get("SLURM_JOB_ID", "?")
    if nodes == 1:
        return HOLDS, (
            f"Slurm job {job} has one node ({where}): every rank shares its memory, so "
            "messages are shared-memory copies that compete with the reductions"
        )
    return VIOLATED, (
        f"Slurm job {job} spans {nodes} nodes ({where}): ranks may talk over the network, "
        "so the one-node contention model is not applied"
    )


def _from_launcher(launcher: str | None, environment: Mapping[str, str]) -> tuple[str, str]:
    if not launcher:
        return UNKNOWN, "the run's launcher is not recorded"
    words = shlex.split(launcher.replace("{ranks}", "1"))
    host_flags = sorted(_HOST_FLAGS.intersection(words))
    host_env = [k for k in _HOST_ENV if k in environment]
    if words and os.path.basename(words[0]) in _LAUNCHERS_ONE_HOST and not host_flags + host_env:
        return HOLDS, (
            f"'{launcher}' starts every rank on this host: messages are shared-memory copies "
            "that compete with the reductions for memory bandwidth, which the additive model "
            "ignores"
        )
    because = ", ".join(host_flags + host_env) or "its launcher"
    return UNKNOWN, (
        f"'{launcher}' may place ranks on several nodes ({because}): the ping-pong measured "
        "this host's shared memory, not the network between nodes"
    )
