"""Simulating a spec's points for the commands that do (`simulate`, `workload report
--simulate`): the platform an option names, the points run in SimGrid on every core, printed,
and stored as a simulated run."""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from runners import store
from runners.analysis.run_analysis import analyze_run
from runners.analysis.verdict import run_verdict
from runners.cli.common import UsageError, store_path
from runners.domain.collectives.collective import group_title
from runners.domain.model.fitting import PINGPONG_SOURCE, network_source
from runners.domain.model.levels import EMULATED_PLATFORM, emulated_platform
from runners.domain.model.platform import Platform, crossbar, from_calibration
from runners.domain.model.platform_file import load_platform
from runners.domain.nodes.placement import BLOCK
from runners.domain.sweep.simulated_run import DEFAULT_MARGIN, SimulationFacts
from runners.domain.sweep.simulation import SimulatedCall, simulation_calls
from runners.domain.sweep.spec import SweepSpec
from runners.domain.units import aligned_lines, format_bytes, format_seconds, wrapped
from runners.host.machine import hostname, physical_cores
from runners.jobs.simulated_run import schedule_version, store_simulated_run
from runners.jobs.simulation import run_simulation
from runners.simulator.engine import AUTO, MODES
from runners.simulator.simgrid_module import simgrid, version

BUILT_IN = Path(__file__).resolve().parents[2] / "data" / "platforms"
THIS_HOST = "this-host"
MAX_WORKERS = 256
TABLE_POINTS = 60  # a stored grid with more points prints its verdict, not every point


def platform_of(args: argparse.Namespace, spec: SweepSpec) -> Platform:
    """The platform --platform names (a built-in's name or a TOML file), its network link's
    alpha and beta and its gamma replaced by those given."""
    name = args.platform
    if name == "crossbar":
        found = crossbar()
    elif name == THIS_HOST:
        found = _this_host(store_path(args))
    elif name == EMULATED_PLATFORM:
        found = _emulated_nodes(store_path(args), spec)
    elif (BUILT_IN / f"{name}.toml").is_file():
        found = load_platform(BUILT_IN / f"{name}.toml")
    elif name.endswith(".toml"):
        found = load_platform(Path(name))
    else:
        raise UsageError(f"unknown platform {name!r}; built in: {', '.join(built_in_platforms())}")
    return found.with_parameters(args.alpha, args.beta, args.gamma)


def built_in_platforms() -> list[str]:
    """The names --platform takes besides a file's path."""
    return [
        "crossbar",
        THIS_HOST,
        EMULATED_PLATFORM,
        *sorted(p.stem for p in BUILT_IN.glob("*.toml")),
    ]


def _this_host(path: Path) -> Platform:
    """The crossbar of this host's newest ping-pong calibration in the store."""
    with store.Store.open(path) as db:
        found = store.latest_calibration(db, hostname(), source=PINGPONG_SOURCE)
    if found is None:
        raise UsageError(
            f"no ping-pong calibration of {hostname()} in {path}: `collsweep calibrate` first"
        )
    return from_calibration(found)


def _emulated_nodes(path: Path, spec: SweepSpec) -> Platform:
    """The emulated nodes of the spec (its ranks_per_node, its network) as this host's newest
    calibration of both levels on that network measured them."""
    if not spec.nodes.emulated:
        raise UsageError(
            f"--platform {EMULATED_PLATFORM} takes the spec's emulated nodes: give --ranks-per-node"
        )
    if spec.placement != BLOCK and len(spec.ranks) > 1:
        raise UsageError(
            f"--platform {EMULATED_PLATFORM} places {spec.placement} for one group size at a "
            f"time: give one of --ranks {','.join(map(str, spec.ranks))}"
        )
    source = network_source(spec.network)
    with store.Store.open(path) as db:
        found = store.latest_calibration(db, hostname(), source=source)
    missing = UsageError(
        f"no calibration of both levels ({source}) of {hostname()} in {path}: sweep on "
        "these emulated nodes first (its calibration measures them)"
    )
    if found is None:
        raise missing
    try:
        platform = emulated_platform(found, spec.nodes.ranks_per_node)
    except ValueError:  # a calibration of that source without its levels
        raise missing from None
    if spec.placement == BLOCK:
        return platform
    return replace(platform, node_map=spec.nodes.node_map(spec.ranks[0]))


def simulate_spec(args: argparse.Namespace, spec: SweepSpec, quiet: bool = False) -> str | None:
    """Simulate the spec's points on --platform, print them (not when ``quiet``) and store them
    as a simulated run unless --no-store: its id (None when not stored). Bad input is a
    UsageError before anything runs."""
    platform = platform_of(args, spec)
    calls, left_out = simulation_calls(spec)
    if not calls:
        why = "; ".join(left_out.values()) or "no point of the spec can run"
        raise UsageError(f"nothing to simulate: {why}")
    problem = next(filter(None, (platform.room_problem(r) for r in spec.ranks)), None)
    if problem:
        raise UsageError(problem)
    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise UsageError(f"--workers {args.workers}: give 1 to {MAX_WORKERS}")
    if not 0 <= args.margin < 1:
        raise UsageError(f"--margin {args.margin}: give a fraction from 0 to below 1 (0.02: 2%)")
    path = None if getattr(args, "no_store", False) else store_path(args)
    if path is not None:
        store.Store.open(path, write=True).close()  # a store that cannot take the run: now
    simgrid()  # not installed: one line before anything runs
    started, started_at = time.monotonic(), datetime.now(UTC)
    rows = _simulated_rows(args, calls, platform, args.json and not quiet)
    elapsed = time.monotonic() - started
    talking = not (args.json or quiet)
    every_point = path is None or getattr(args, "verbose", False) or len(rows) <= TABLE_POINTS
    if talking:
        for why in left_out.values():
            print(wrapped(f"not simulated: {why}"))
        print(_headline(len(calls), args.mode, platform, elapsed))
        for line in _tables(rows) if every_point else []:
            print(line)
    if path is None:
        return None
    done = list(zip(calls, rows, strict=True))
    run_id = _store_run(args, path, spec, platform, done, started_at, quiet)
    if talking and not every_point:  # a large grid: its verdict, as a sweep ends
        with store.Store.open(path) as db:
            for line in run_verdict(db, store.get_run(db, run_id) or {"run_id": run_id}):
                print(wrapped(line))
        print(f"every point's table: --verbose; `collsweep crossovers {run_id}` for the pairs")
    return run_id


def _simulated_rows(
    args: argparse.Namespace, calls: list[SimulatedCall], platform: Platform, as_json: bool
) -> list[dict]:
    """Every point's row, in grid order (printed as JSON as each ends, with ``as_json``)."""
    rows: list[dict] = []

    def told(index: int, line: dict) -> None:
        rows.append(_row(calls[index], platform) | line)
        if as_json:  # as each point ends, in grid order: a long grid shows its progress
            print(json.dumps(rows[-1]), flush=True)

    workers = args.workers or max(1, min(physical_cores(), len(calls)))
    run_simulation(calls, platform, args.mode, workers, told)
    return rows


def _headline(points: int, mode: str, platform: Platform, elapsed: float) -> str:
    return (
        f"simulated {points} points in SimGrid {version()} ({mode}) on "
        f"{platform.name}: {platform.topology}, link {format_seconds(platform.link.latency_s)} "
        f"and {platform.link.bandwidth_Bps / 1e9:.4g} GB/s, gamma "
        f"{platform.gamma_s_per_byte:.3g} s/B; in {format_seconds(elapsed)}"
    )


def _store_run(
    args: argparse.Namespace,
    path: Path,
    spec: SweepSpec,
    platform: Platform,
    done: list[tuple[SimulatedCall, dict]],
    started_at: datetime,
    quiet: bool,
) -> str:
    """Store the points as a simulated run, analyse it and say where to look (on stderr with
    --json, whose stdout is the points, and when ``quiet``); its id."""
    facts = SimulationFacts(
        f"SimGrid {version()}",
        args.mode,
        args.margin,
        platform,
        schedule_version([call for call, _ in done]),
    )
    simulated = [(call, float(row["simulated_s"])) for call, row in done]
    words = shlex.join(sys.argv)
    run_id = store_simulated_run(path, spec, facts, simulated, words, started_at)
    diagnostics: list[str] = []  # the model's, as `collsweep analyze RUN` prints them
    analyze_run(path, run_id, diagnostics.append)
    say = sys.stderr if args.json or quiet else sys.stdout
    print(
        wrapped(
            f"stored as run {run_id} (simulated, not measured; ties within {args.margin:.0%}): "
            f"`collsweep crossovers {run_id}`, or the dashboard's Scale page"
        ),
        file=say,
    )
    return run_id


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
        "chosen": call.chosen,
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
                    _algorithm_words(row),
                    format_seconds(row["simulated_s"]),
                    format_seconds(row["predicted_s"]),
                    f"{ratio:.4f}",
                    format_seconds(row["closed_form_s"]),
                )
            )
        lines.append(f"{group_title(ranks, dtype, op, collective)} (simulated, not measured):")
        lines.extend(aligned_lines([header, *body]))
    return lines


def _algorithm_words(row: dict) -> str:
    """`ring`, `mpi:ring (ring)`: the schedule standing for it; `mpi = mpi:ring`: MPICH's
    selection table's choice for the call."""
    if row["chosen"]:
        return f"{row['algorithm']} = {row['chosen']}"
    return row["algorithm"] + (f" ({row['modelled_by']})" if row["modelled_by"] else "")


def _seconds(text: str) -> float:
    """An argparse type: a non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"give a finite number >= 0, not {text!r}")
    return value


def add_simulation_options(parser: argparse.ArgumentParser) -> None:
    """The options of how points are simulated and stored (simulate, workload report
    --simulate)."""
    parser.add_argument(
        "--platform",
        default="crossbar",
        help="a built-in platform's name (crossbar, the default: no contention; this-host: "
        "this machine's newest ping-pong calibration in the store; emulated-nodes: the spec's "
        "emulated nodes as their calibration of both levels measured them; "
        "data/platforms/*.toml) or a platform file (docs/guide/simulation.md)",
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
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help="the stored run's winners: two algorithms whose simulated times differ by less "
        f"than this fraction are a tie (default {DEFAULT_MARGIN})",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="simulator processes, each with a share of the points (default: one per "
        "physical core; SimGrid runs one engine per process)",
    )
