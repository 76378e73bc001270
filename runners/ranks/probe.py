"""A short fixed probe of the machine's state, timed at the start and end of every launch.

An 8-byte ping-pong between ranks 0 and 1 (one-way time, median of 64) and a 4 MiB numpy copy
on every rank (median of 16, the slowest rank's) take about 10 ms. The same probe in every
launch of a run shows when the machine changed state, which the `stable_machine` assumption
checks (runners.domain.verdict.run_assumptions). It also records the ranks' hosts
(runners.domain.verdict.topology).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from time import perf_counter
from typing import Any

import numpy as np
from mpi4py import MPI

from runners.domain.nodes.network import NAMESPACE_ENV

PINGPONGS = 64
COPIES = 16
COPY_BYTES = 4 * 2**20


def pingpong_s(comm: MPI.Comm) -> float:
    """Median one-way time of an 8-byte message between ranks 0 and 1 (0.0 on one rank)."""
    rank, buf, times = comm.Get_rank(), np.zeros(1), np.empty(PINGPONGS)
    comm.Barrier()
    for i in range(PINGPONGS):
        start = perf_counter()
        if rank == 0 and comm.Get_size() > 1:
            comm.Send(buf, 1, 7)
            comm.Recv(buf, 1, 7)
        elif rank == 1:
            comm.Recv(buf, 0, 7)
            comm.Send(buf, 0, 7)
        times[i] = (perf_counter() - start) / 2
    return float(np.median(times)) if comm.Get_size() > 1 else 0.0


def copy_gbps(comm: MPI.Comm) -> float:
    """The slowest rank's median rate of a 4 MiB copy, GB/s (all ranks copy at once)."""
    src, dst = np.ones(COPY_BYTES // 8), np.empty(COPY_BYTES // 8)
    times = np.empty(COPIES)
    comm.Barrier()
    for i in range(COPIES):
        start = perf_counter()
        np.copyto(dst, src)
        times[i] = perf_counter() - start
    return COPY_BYTES / comm.allreduce(float(np.median(times)), op=MPI.MAX) / 1e9


def placement(comm: MPI.Comm) -> dict[str, Any]:
    """Where the ranks run as the library sees it: a rank's node is its host and the ranks it
    shares memory with (MPI_Comm_split_type SHARED), so an emulated node (MPICH's cliques) is
    a node of its own. How many nodes, the most ranks on one, the hosts' names (sorted,
    comma-separated) and every rank's node, numbered in order of first rank."""
    shared = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        leader = comm.allgather(
            (MPI.Get_processor_name(), shared.allreduce(comm.Get_rank(), MPI.MIN))
        )
    finally:
        shared.Free()
    numbered = {node: index for index, node in enumerate(dict.fromkeys(leader))}
    per_node = Counter(leader)
    return {
        "nodes": len(per_node),
        "ranks_per_node": max(per_node.values()),
        "hosts": ",".join(sorted({host for host, _ in leader})),
        "node_map": ",".join(str(numbered[node]) for node in leader),
    }


def network_bytes() -> int | None:
    """Bytes the loopback has carried in this launch's own network namespace (every one
    between emulated nodes), None outside one (the host's loopback is not ours to count)."""
    if not os.environ.get(NAMESPACE_ENV):
        return None
    for line in Path("/proc/self/net/dev").read_text().splitlines():
        name, _, counters = line.partition(":")
        if name.strip() == "lo":
            return int(counters.split()[8])  # transmitted bytes
    return None


def probe(comm: MPI.Comm) -> dict[str, Any]:
    """Both measurements, the ranks' placement and the network's bytes, as rank 0 reports
    them."""
    pingpong = comm.bcast(pingpong_s(comm), root=0)
    found = {"pingpong_s": pingpong, "copy_gbps": copy_gbps(comm), **placement(comm)}
    return found | {"network_bytes": network_bytes()}
