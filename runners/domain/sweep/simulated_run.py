"""A simulated run as the store keeps it (pure: no SimGrid, no I/O).

`collsweep simulate` stores its points as a run like any other, marked as simulated in three
places a reader meets first: its spec_toml ends with a `[simulated]` table (the simulator and its
version, the mode, the margin, the platform's name and the schedules' version), its environment
holds the whole platform (`environment.simulated`), and its calibration is the platform's
(`platform:<run>`, source `platform:<name>`: the network link's alpha and beta and the gammas
the simulation used), so its predictions are the closed form on the very parameters the
simulator ran with.

Each point is one value (the simulator is deterministic: no sampling, no launches); two
algorithms are told apart only when their times differ by more than the run's stated margin
(runners.domain.verdict.comparison.within_margin), a tie otherwise.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from runners.domain.model.calibration_id import CalibrationId, CalibrationKind, GammaKey
from runners.domain.model.platform import Platform, platform_json
from runners.domain.status import PointStatus
from runners.domain.sweep.point_row import PointRow
from runners.domain.sweep.records import PointKey
from runners.domain.sweep.simulation import SimulatedCall
from runners.domain.sweep.spec_keys import toml_value
from runners.domain.sweep.stats import bandwidths

SIMULATED_TABLE = "simulated"  # the table a simulated run's spec_toml ends with
DEFAULT_MARGIN = 0.02
SIMULATED_JOB = "simulated"  # points.job of every simulated point: no launch ran it


def margin_pairing(margin: float) -> str:
    """How a simulated run's points are compared (winners.pairing): by the stated margin."""
    return f"{SIMULATED_JOB}: ties within {margin:.0%}"


def is_simulated_pairing(pairing: object) -> bool:
    """Whether a winners row's pairing is a simulated run's margin (margin_pairing)."""
    return isinstance(pairing, str) and pairing.startswith(f"{SIMULATED_JOB}:")


@dataclass(frozen=True)
class SimulationFacts:
    """How a run was simulated: enough to simulate it again."""

    simulator: str  # e.g. "SimGrid 3.32.0"
    mode: str  # actors, rounds or auto (runners.simulator.engine)
    margin: float  # a fraction: differences within it are ties
    platform: Platform
    schedule_version: str  # a digest of the schedules' code that ran


def simulated_table(spec_toml: str | None) -> dict[str, Any] | None:
    """The `[simulated]` table of a stored run's spec_toml, or None for a run that was not
    simulated (a swept or imported one)."""
    try:
        table = tomllib.loads(spec_toml or "").get(SIMULATED_TABLE)
    except tomllib.TOMLDecodeError:
        return None
    return table if isinstance(table, dict) else None


def spec_text(spec_toml: str, facts: SimulationFacts) -> str:
    """The spec's TOML (as a sweep stores it) followed by the `[simulated]` table."""
    table = "\n".join(
        [
            "",
            "# simulated, not measured: every point is SimGrid's time for its schedule",
            f"[{SIMULATED_TABLE}]",
            f"simulator = {toml_value(facts.simulator)}",
            f"mode = {toml_value(facts.mode)}",
            f"margin = {facts.margin!r}",
            f"platform = {toml_value(facts.platform.name)}",
            f"topology = {toml_value(facts.platform.topology)}",
            f"schedule_version = {toml_value(facts.schedule_version)}",
        ]
    )
    text = spec_toml.rstrip("\n") + "\n" + table + "\n"
    tomllib.loads(text)  # a platform name TOML cannot hold fails here, before anything is stored
    return text


def environment(facts: SimulationFacts) -> dict[str, Any]:
    """runs.environment of a simulated run: the whole platform, the simulator and the margin."""
    return {
        SIMULATED_TABLE: {
            "simulator": facts.simulator,
            "mode": facts.mode,
            "margin": facts.margin,
            "schedule_version": facts.schedule_version,
            "platform": platform_json(facts.platform),
        }
    }


def point_rows(
    run_id: str, call: SimulatedCall, simulated_s: float, margin: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The points row and the one samples row of a simulated point."""
    key = PointKey(run_id, call.algorithm, call.ranks, call.bytes, call.dtype, call.op)
    algbw, busbw = bandwidths(call.bytes, call.ranks, simulated_s, call.collective)
    statistics = {
        "iterations": 1,
        "median_s": simulated_s,
        "mean_s": simulated_s,
        "min_s": simulated_s,
        "max_s": simulated_s,
        "p5_s": simulated_s,
        "p95_s": simulated_s,
        "stddev_s": 0.0,
        "ci_low_s": None,  # deterministic: no confidence interval, a margin (module docstring)
        "ci_high_s": None,
        "ci_rel_halfwidth": math.inf,
        "ci_target_met": None,
        "algbw_gbps": algbw,
        "busbw_gbps": busbw,
        "sync_cadence": f"simulated once (ties within {margin:.0%})",
        "verified": False,
    }
    row = PointRow(
        key,
        PointStatus.OK,
        "",
        cores=call.ranks,  # a simulated rank never shares a core: never oversubscribed
        job=SIMULATED_JOB,
        launches=1,
        statistics=statistics,
    ).columns()
    modelled = f" by the schedule of {call.modelled_by}" if call.modelled_by else ""
    row["library_config"] = f"simulated{modelled}"
    sample = {
        "point_id": key.point_id(),
        "run_id": run_id,
        "iteration": 0,
        "seconds": simulated_s,
        "pass": 0,
        "launch": 0,
    }
    return row, sample


def platform_calibration(
    run_id: str,
    platform: Platform,
    groups: Iterable[tuple[str, str]],
    created_at: datetime,
    largest: tuple[int, int],
) -> dict[str, Any]:
    """The calibrations row of the parameters a simulated run ran with: its platform's network
    link (alpha, beta) and its gamma for each (dtype, op) of ``groups``; ``largest`` is
    (ranks, bytes) of the run's biggest group and size."""
    gammas = {str(GammaKey(dtype, op)): platform.gamma(dtype, op) for dtype, op in groups}
    ranks, nbytes = largest
    return {
        "calibration_id": str(CalibrationId(CalibrationKind.PLATFORM, run_id)),
        "created_at": created_at,
        "host": f"platform {platform.name}",
        "mpi_library": "simulated",
        "ranks": ranks,
        "alpha_s": platform.link.latency_s,
        "beta_s_per_byte": platform.link.beta_s_per_byte,
        "r_squared": None,
        "min_bytes": 0,
        "max_bytes": nbytes,
        "gammas": gammas,
        "source": str(CalibrationId(CalibrationKind.PLATFORM, platform.name)),
        "details": {
            "platform": platform_json(platform),
            "fit": "none: the platform's own parameters (nothing was measured)",
        },
    }


def simulated_words(spec_toml: str | None) -> str:
    """How a stored run was simulated, in words ('simulated in SimGrid 3.32.0 on crossbar,
    not measured'), or '' for a run that was not."""
    table = simulated_table(spec_toml)
    if table is None:
        return ""
    simulator = table.get("simulator") or "a simulator"
    return f"simulated in {simulator} on {table.get('platform') or 'a platform'}, not measured"


def found_by(spec_toml: str | None) -> str:
    """How a stored run's points were found, as its tables say it: 'simulated' or 'measured'."""
    return "simulated" if simulated_table(spec_toml) is not None else "measured"


def not_measured_words(table: dict[str, Any]) -> str:
    """What every surface showing a simulated run says first (from its `[simulated]` table)."""
    return (
        f"Simulated in {table.get('simulator')} on platform {table.get('platform')} "
        f"({table.get('topology')}), not measured: where it says 'measured' it means "
        f"simulated, and two algorithms within {float(table.get('margin', 0)):.0%} of each "
        "other are a tie."
    )
