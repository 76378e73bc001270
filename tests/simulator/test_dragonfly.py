"""The dragonfly: the contention-free price's routes are SimGrid's own, link for link, and the
simulation never beats that price."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from helpers.simgrid_here import needs_simgrid
from simulator.test_crossbar import calls

from runners.domain.model.platform import Link, Platform, PlatformError, checked
from runners.domain.model.platform_file import parse_platform
from runners.simulator import engine

SHAPES = [((3, 1), (2, 1), (3, 1), 2), ((4, 1), (3, 2), (4, 1), 1)]


def dragonfly(shape) -> Platform:
    return checked(Platform("df", "dragonfly", Link(1e-6, 1e9), 0.25e-9, dragonfly=shape))


ROUTES = """
import itertools, json, sys
from runners.domain.model.platform import Link, Platform, checked
from runners.simulator import engine
from runners.simulator.simgrid_module import simgrid
shape = json.loads(sys.argv[1])
platform = checked(Platform("df", "dragonfly", Link(1e-6, 1e9), dragonfly=(
    tuple(shape[0]), tuple(shape[1]), tuple(shape[2]), shape[3])))
sg = simgrid()
sg.Engine(["routes"])
hosts = engine.build(sg, platform, platform.nodes)
for a, b in itertools.permutations(range(len(hosts)), 2):
    links, latency = hosts[a].route_to(hosts[b])
    print(json.dumps([a, b, platform.route(a, b)[0], latency, len(links)]))
"""


@needs_simgrid
@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_every_route_is_simgrids(shape) -> None:
    """Platform.route's latency (links x the link's latency) equals the latency of SimGrid's
    route between the same two nodes, for every ordered pair (a process of its own: SimGrid
    takes one engine a process)."""
    done = subprocess.run(
        [sys.executable, "-c", ROUTES, json.dumps(shape)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    pairs = [json.loads(line) for line in done.stdout.splitlines()]
    nodes = dragonfly(shape).nodes or 0
    assert len(pairs) == nodes * (nodes - 1)
    for a, b, ours, simgrids, links in pairs:
        assert ours == pytest.approx(simgrids, abs=1e-15), (a, b)
        assert round(simgrids / 1e-6) == links


@needs_simgrid
@pytest.mark.slow
def test_a_dragonfly_never_beats_its_contention_free_price() -> None:
    platform = dragonfly(SHAPES[1])
    chosen = calls((8, 24), (1 << 20,))
    simulated = engine.simulate([engine.point_of(c, platform) for c in chosen], platform, ranks=24)
    ratios = [s / c.predicted_s(platform) for c, s in zip(chosen, simulated, strict=True)]
    assert min(ratios) > 1 - 1e-6
    assert max(ratios) > 1.05  # links are shared somewhere: contention is simulated


def test_a_dragonfly_without_a_router_for_every_group_is_refused() -> None:
    text = (
        "topology = 'dragonfly'\n[link]\nlatency_us = 1\nbandwidth_GBps = 1\n"
        "[dragonfly]\ngroups = [4, 1]\nchassis = [2, 1]\nrouters = [3, 1]\nnodes = 1\n"
    )
    with pytest.raises(PlatformError, match="4 groups need at least 4 routers"):
        parse_platform(text, "mine")
    assert parse_platform(text.replace("[3, 1]", "[4, 1]"), "mine").nodes == 32
