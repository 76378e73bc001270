"""The bus (emulated nodes' loopback as a platform): messages in flight at once share its one
link whatever their direction, where the crossbar gives each pair a full-duplex path; alone on
it a message costs what it costs on the crossbar. Real SimGrid, in a child process (one engine
per process)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from helpers.simgrid_here import needs_simgrid

SIMULATE = """
import json
from runners.domain.model.platform import Link, Platform, checked
from runners.domain.sweep.simulation import SimulatedCall
from runners.simulator.engine import ACTORS, point_of, simulate
found = {}
for topology in ("crossbar", "bus"):
    platform = checked(Platform(topology, topology, Link(1e-6, 1e9), 0.0))
    calls = [SimulatedCall(c, a, a, 2, 1 << 20, "float32", "sum")
             for c, a in (("allreduce", "recursive_doubling"), ("bcast", "bcast.binomial_tree"))]
    found[topology] = simulate([point_of(c, platform) for c in calls], platform, ACTORS, ranks=2)
print(json.dumps(found))
"""


@needs_simgrid
def test_an_exchange_takes_twice_as_long_on_the_bus_and_one_message_the_same() -> None:
    done = subprocess.run([sys.executable, "-c", SIMULATE], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=True)  # fmt: skip
    found = json.loads(done.stdout)
    (exchange_crossbar, one_crossbar), (exchange_bus, one_bus) = found["crossbar"], found["bus"]
    assert exchange_bus / exchange_crossbar == pytest.approx(2.0, rel=0.01)  # 1 MiB both ways
    assert one_bus == pytest.approx(one_crossbar, rel=0.01)  # 1 MiB one way
