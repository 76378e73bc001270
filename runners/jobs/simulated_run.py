"""A simulation's points stored as one run of kind simulated, all or nothing.

The run, its platform calibration, points and samples are written into a staging store and
folded into the main store by `store.merge_shards` in one transaction over it (as
`collsweep import` does): a failure leaves the main store as it was. What a simulated run
holds is runners.domain.sweep.simulated_run's. No SimGrid here: the points arrive simulated.
"""

from __future__ import annotations

import hashlib
import inspect
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runners import store
from runners.domain.errors import BadInput
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.status import RunStatus
from runners.domain.sweep.simulated_run import (
    SimulationFacts,
    environment,
    platform_calibration,
    point_rows,
    spec_text,
)
from runners.domain.sweep.simulation import SimulatedCall
from runners.domain.sweep.spec import SweepSpec
from runners.jobs.sweep import code_version, fresh_run_id


def schedule_version(calls: Sequence[SimulatedCall]) -> str:
    """A digest of the code of every schedule the calls ran: two runs of one version simulated
    the same steps."""
    digest = hashlib.sha256()
    for name in sorted({call.schedule_of for call in calls}):
        schedule = ALGORITHMS[name].schedule
        digest.update(name.encode())
        digest.update(inspect.getsource(schedule).encode() if schedule else b"")
    return digest.hexdigest()[:12]


def store_simulated_run(
    path: Path,
    spec: SweepSpec,
    facts: SimulationFacts,
    simulated: Sequence[tuple[SimulatedCall, float]],
    command_line: str,
    started_at: datetime,
) -> str:
    """Store the simulated points as a new run (module docstring) simulated from
    ``started_at`` (UTC) until now; its id."""
    run_id = fresh_run_id(path)
    now = datetime.now(UTC).replace(tzinfo=None)
    calls = [call for call, _ in simulated]
    calibration = platform_calibration(
        run_id,
        facts.platform,
        dict.fromkeys((c.dtype, c.op) for c in calls),
        now,
        (max(c.ranks for c in calls), max(c.bytes for c in calls)),
    )
    run = _run_row(run_id, spec, facts, now, command_line) | {
        "calibration_id": calibration["calibration_id"],
        "started_at": started_at.replace(tzinfo=None),
    }
    rows = [point_rows(run_id, call, seconds, facts.margin) for call, seconds in simulated]
    _store(path, run, calibration, [p for p, _ in rows], [s for _, s in rows])
    return run_id


def _run_row(
    run_id: str, spec: SweepSpec, facts: SimulationFacts, now: datetime, command_line: str
) -> dict[str, Any]:
    """The runs row: the simulator as the library, the platform in the environment."""
    return {
        "run_id": run_id,
        "status": RunStatus.COMPLETE,
        "status_reason": f"simulated in {facts.simulator} on {facts.platform.name}, not measured",
        "started_at": now,
        "finished_at": now,
        "spec_toml": spec_text(spec.to_toml(), facts),
        "command_line": command_line,
        "host": f"platform {facts.platform.name}",
        "mpi_library": f"{facts.simulator} (simulated)",
        "mpi_version": facts.simulator,
        "code_version": code_version(),
        "environment": environment(facts),
    }


def _store(
    path: Path,
    run: Mapping[str, Any],
    calibration: Mapping[str, Any],
    points: list[dict[str, Any]],
    samples: list[dict[str, Any]],
) -> None:
    """The run with its calibration, points and samples into the main store in one
    transaction."""
    with tempfile.TemporaryDirectory(prefix="collsweep-simulated-") as folder:
        staging = Path(folder) / "staging.duckdb"
        store.add_calibration(staging, dict(calibration))
        store.create_run(staging, dict(run))
        store.add_points(staging, points, samples)
        results = store.merge_shards(path, [staging])
    if results[0].left:
        raise BadInput(f"the simulated run was not stored: {results[0].left}")
