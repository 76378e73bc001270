"""The memory of this machine available to new processes now (/proc/meminfo)."""

from __future__ import annotations

from pathlib import Path

UNKNOWN_BYTES = 2**34  # assumed when /proc/meminfo cannot say: 16 GiB


def available_bytes(meminfo: Path = Path("/proc/meminfo")) -> int:
    """Memory available to new processes now (MemAvailable), in bytes."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return UNKNOWN_BYTES
