"""`collsweep simulate`: a spec's points run in SimGrid on a modelled platform, every rank an
actor executing its algorithm's schedule, beside the contention-free price and the closed form
on the same platform."""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from runners import store
from runners.cli.common import UsageError, add_store_option, store_path
from runners.cli.spec_flags import add_spec_flags, spec_overrides
from runners.domain.collectives.collective import group_title
from runners.domain.model.fitting import PINGPONG_SOURCE
from runners.domain.model.platform import Platform, crossbar, from_calibration, load_platform
from runners.domain.sweep.simulation import SimulatedCall, simulation_calls
from runners.domain.sweep.spec import SweepSpec, spec_of
from runners.domain.units import aligned_lines, format_bytes, format_seconds, wrapped
from runners.host.machine import hostname, physical_cores
from runners.jobs.simulation import run_simulation
from runners.simulator.engine import AUTO, MODES
from runners.simulator.simgrid_module import simgrid, version

BUILT_IN = Path(__file__).resolve().parents[2] / "data" / "platforms"
THIS_HOST = "this-host"
MAX_WORKERS = 256


def simulation_spec(args: argparse.Namespace) -> SweepSpec:
    """The spec file and flags, read as `collsweep sweep` reads them (no machine checks: nothing
    runs on this machine but the simulator)."""
    path = Path(args.spec) if args.spec else None
    return spec_of(path, spec_overrides(args), example="data/scale.toml")


def platform_of(args: argparse.Namespace) -> Platform:
    """The platform --platform names (a built-in's name or a TOML file), its network link's
    alpha and beta and its gamma replaced by those given."""
    name = args.platform
    if name == "crossbar":
        found = crossbar()
    elif name == THIS_HOST:
        found = _this_host(store_path(args))
    elif (BUILT_IN / f"{name}.toml").is_file():
        found = load_platform(BUILT_IN / f"{name}.toml")
    elif name.endswith(".toml"):
        found = load_platform(Path(name))
    else:
        raise UsageError(f"unknown platform {name!r}; built in: {', '.join(built_in_platforms())}")
    return found.with_parameters(args.alpha, args.beta, args.gamma)


def built_in_platforms() -> list[str]:
    """The names --platform takes besides a file's path."""
    return ["crossbar", THIS_HOST, *sorted(p.stem for p in BUILT_IN.glob("*.toml"))]


def _this_host(path: Path) -> Platform:
    """The crossbar of this host's newest ping-pong calibration in the store."""
    with store.Store.open(path) as db:
        found = store.latest_calibration(db, hostname(), source=PINGPONG_SOURCE)
    if found is None:
        raise UsageError(
            f"no ping-pong calibration of {hostname()} in {path}: `collsweep calibrate` first"
        )
    return from_calibration(found)


def run(args: argparse.Namespace) -> int:
    """Simulate every point of the spec and print them (a table, or JSON lines)."""
    spec = simulation_spec(args)
    platform = platform_of(args)
    calls, left_out = simulation_calls(spec)
    if not calls:
        why = "; ".join(left_out.values()) or "no point of the spec can run"
        raise UsageError(f"nothing to simulate: {why}")
    problem = next(filter(None, (platform.room_problem(r) for r in spec.ranks)), None)
    if problem:
        raise UsageError(problem)
    simgrid()  # not installed: one line before anything runs
    started = time.monotonic()
    rows: list[dict] = []

    def told(index: int, line: dict) -> None:
        rows.append(_row(calls[index], platform) | line)
        if args.json:  # as each point ends, in grid order: a long grid shows its progress
            print(json.dumps(rows[-1]), flush=True)

    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise UsageError(f"--workers {args.workers}: give 1 to {MAX_WORKERS}")
    workers = args.workers or max(1, min(physical_cores(), len(calls)))
    run_simulation(calls, platform, args.mode, workers, told)
    elapsed = time.monotonic() - started
    if args.json:
        return 0
    for why in left_out.values():
        print(wrapped(f"not simulated: {why}"))
    print(
        f"simulated {len(calls)} points in SimGrid {version()} ({args.mode}) on "
        f"{platform.name}: {platform.topology}, link {format_seconds(platform.link.latency_s)} "
        f"and {platform.link.bandwidth_Bps / 1e9:.4g} GB/s, gamma "
        f"{platform.gamma_s_per_byte:.3g} s/B; in {format_seconds(elapsed)}"
    )
    for line in _tables(rows):
        print(line)
    return 0


def _row(call: SimulatedCall, platform: Platform) -> dict:
    """One point as printed and as JSON, before the simulator's own figures."""
    return {
        "collective": call.collective,
        "algorithm": call.algorithm,
        "ranks": call.ranks,
        "bytes": call.bytes,
        "dtype": call.dtype,
        "op": call.op,
        "closed_form_s": call.closed_form_s(platform),
        "platform": platform.name,
        "modelled_by": call.modelled_by,
    }


def _tables(rows: list[dict]) -> list[str]:
    """Per group, per size, the algorithms fastest first with simulated against predicted."""
    lines: list[str] = []
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        key = (row["collective"], row["ranks"], row["dtype"], row["op"])
        groups.setdefault(key, []).append(row)
    header = ("size", "algorithm", "simulated", "contention-free", "sim / free", "closed form")
    for (collective, ranks, dtype, op), mine in groups.items():
        body = []
        for row in sorted(mine, key=lambda r: (r["bytes"], r["simulated_s"])):
            ratio = row["simulated_s"] / row["predicted_s"] if row["predicted_s"] else math.nan
            body.append(
                (
                    format_bytes(row["bytes"]),
                    row["algorithm"] + (f" ({row['modelled_by']})" if row["modelled_by"] else ""),
                    format_seconds(row["simulated_s"]),
                    format_seconds(row["predicted_s"]),
                    f"{ratio:.4f}",
                    format_seconds(row["closed_form_s"]),
                )
            )
        lines.append(f"{group_title(ranks, dtype, op, collective)} (simulated, not measured):")
        lines.extend(aligned_lines([header, *body]))
    return lines


def _seconds(text: str) -> float:
    """An argparse type: a non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"give a finite number >= 0, not {text!r}")
    return value


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
    parser.add_argument(
        "--platform",
        default="crossbar",
        help="a built-in platform's name (crossbar, the default: no contention; this-host: "
        "this machine's newest ping-pong calibration in the store; data/platforms/*.toml) or "
        "a platform file (docs/guide/simulation.md)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default=AUTO,
        help="actors: a SimGrid actor per rank; rounds: one actor issues each round's "
        "messages at once (faster at large p; every round ends on its slowest rank); auto "
        "(the default): actors up to 64 ranks, rounds above",
    )
    parser.add_argument("--alpha", type=_seconds, help="the network link's latency, seconds")
    parser.add_argument("--beta", type=_seconds, help="the network link's seconds per byte")
    parser.add_argument("--gamma", type=_seconds, help="seconds per reduced byte")
    parser.add_argument("--json", action="store_true", help="one JSON object per point")
    parser.add_argument(
        "--workers",
        type=int,
        help="simulator processes, each with a share of the points (default: one per "
        "physical core; SimGrid runs one engine per process)",
    )
    add_store_option(parser)  # where --platform this-host finds this machine's calibration
    add_spec_flags(parser)
    parser.set_defaults(handler=run)
