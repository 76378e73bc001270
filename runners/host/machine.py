"""Facts about the machine collsweep runs on: host name, CPU model, physical cores (read from
/proc/cpuinfo and the CPUs this process may run on)."""

from __future__ import annotations

import os
import platform
import socket
from functools import cache
from pathlib import Path


def _cpuinfo_blocks() -> list[dict[str, str]]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    blocks = []
    for chunk in text.strip().split("\n\n"):
        fields = {}
        for line in chunk.splitlines():
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
        blocks.append(fields)
    return blocks


@cache
def physical_cores() -> int:
    """Physical cores this process may run on (hyperthreads not counted)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    blocks = _cpuinfo_blocks()
    cores = {(b.get("physical id"), b.get("core id")) for b in blocks if "core id" in b}
    threads_per_core = max(len(blocks) // len(cores), 1) if cores else 1
    return max((usable or 1) // threads_per_core, 1)


@cache
def cpu_model() -> str:
    """The CPU's model name, or the platform's processor string."""
    for block in _cpuinfo_blocks():
        if "model name" in block:
            return block["model name"]
    return platform.processor() or "unknown"


def hostname() -> str:
    """This machine's host name."""
    return socket.gethostname()
