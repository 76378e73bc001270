"""The assumption checks of a run, from its points and calibrations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runners.analysis.points import Point
from runners.domain.sweep.spec import SpecError, SweepSpec, parse_spec
from runners.domain.verdict import run_assumptions
from runners.domain.verdict.nodes import node_checks
from runners.host.machine import physical_cores

# --- assumptions -------------------------------------------------------------------------------


def stored_spec(run: Mapping[str, Any]) -> SweepSpec | None:
    """The spec a run stored, None where it cannot be read back (an import's, an old one)."""
    try:
        return parse_spec(run.get("spec_toml") or "")
    except SpecError:
        return None


def assumption_rows(
    run: Mapping[str, Any],
    points: Sequence[Point],
    calibrations: Sequence[Mapping[str, Any]],
    probes: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Every assumption check of the run (runners.domain.verdict.run_assumptions) from its recorded
    facts."""
    environment = run.get("environment") or {}
    if not isinstance(environment, dict):
        environment = {}
    inherited = environment.get("inherited", {})
    cores = run.get("physical_cores")
    if not cores and not environment.get("imported"):  # an imported file's machine: unknown
        cores = physical_cores()
    cores = int(cores) if cores else None
    spec = stored_spec(run)
    rows = run_assumptions.run_checks(
        points,
        cores,
        spec.launcher if spec else None,
        inherited,
        calibrations,
        environment.get("load_average_before"),
        probes,
    )
    return rows + (node_checks(spec.nodes, spec.network, probes) if spec else [])
