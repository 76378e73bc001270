"""runners.host reads this machine; runners.domain takes what it read as arguments."""

from __future__ import annotations

import os
from pathlib import Path

from runners.domain import capacity, launcher
from runners.host import machine, memory


def test_available_memory_is_read_from_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 9000 kB\nMemAvailable:    2048 kB\nCached: 1 kB\n")
    assert memory.available_bytes(meminfo) == 2 * 2**20
    meminfo.write_text("MemTotal: 9000 kB\n")  # an old kernel's: none said
    assert memory.available_bytes(meminfo) == memory.UNKNOWN_BYTES
    assert memory.available_bytes(tmp_path / "missing") == memory.UNKNOWN_BYTES


def test_this_machine_as_read() -> None:
    cores = machine.physical_cores()
    assert 1 <= cores <= len(os.sched_getaffinity(0))
    assert machine.cpu_model() and machine.hostname()


def test_the_domain_decides_from_the_values_read() -> None:
    """The same group is dedicated on a larger host and oversubscribed on a smaller one."""
    assert not launcher.is_oversubscribed(4, cores=4) and launcher.is_oversubscribed(5, cores=4)
    free = 2**30
    assert capacity.payload_problem([capacity.largest_payload(2, free)], 2, free) is None
    assert capacity.payload_problem([capacity.largest_payload(2, free) + 1], 2, free)
