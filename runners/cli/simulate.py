"""`collsweep simulate`: a spec's points run in SimGrid on a modelled platform, every rank an
actor executing its algorithm's schedule, beside the contention-free price and the closed form
on the same platform (runners.cli.simulating), stored as a simulated run."""

from __future__ import annotations

import argparse
from pathlib import Path

from runners.cli.common import UsageError, add_store_option
from runners.cli.simulating import add_simulation_options, simulate_spec
from runners.cli.spec_flags import add_spec_flags, spec_overrides
from runners.domain.libraries.catalog import auto_refused
from runners.domain.sweep.spec import SweepSpec, spec_of


def simulation_spec(args: argparse.Namespace) -> SweepSpec:
    """The spec file and flags, read as `collsweep sweep` reads them (no machine checks: nothing
    runs on this machine but the simulator)."""
    path = Path(args.spec) if args.spec else None
    spec = spec_of(path, spec_overrides(args), example="data/scale.toml")
    if len(spec.ranks_per_node) > 1:
        raise UsageError("simulate takes one ranks_per_node at a time (a platform each)")
    try:
        auto_refused(spec.algorithms, "simulate")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return spec


def run(args: argparse.Namespace) -> int:
    """Simulate every point of the spec, print them (a table, or JSON lines) and store them as
    a simulated run (unless --no-store)."""
    simulate_spec(args, simulation_spec(args))
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "simulate",
        help="run a spec's points in SimGrid on a modelled platform (8 to 4096 ranks)",
        description="Every point of the spec (the same file and flags as `sweep`) run in "
        "SimGrid: each rank an actor executing its algorithm's schedule step by step, a "
        "library's forced algorithm by the schedule that models it. Printed beside the "
        "schedule-exact price and the closed form on the same alpha, beta and gamma. "
        "Simulated numbers are never measurements.",
    )
    parser.add_argument("spec", nargs="?", help="TOML spec file (e.g. data/scale.toml)")
    add_simulation_options(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per point")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="every point's table even for a stored grid of more than 60 points (which "
        "otherwise ends with the run's verdict)",
    )
    parser.add_argument(
        "--no-store",
        action="store_true",
        help="print the points only; by default they are also stored as a simulated run",
    )
    add_store_option(parser)  # the run's store, and where this-host finds the calibration
    add_spec_flags(parser)
    parser.set_defaults(handler=run)
