"""Checks of the alpha-beta-gamma model's assumptions, from a run's facts (pure: no MPI, no store).

Every check returns an `assumptions` row (a dict): a stable `name`, a `state` (holds,
violated or unknown), a `detail` sentence with the evidence, and `point_id` (None for a
run-level check) and `calibration_id` (None unless the check is about a calibration).

Point-level checks (one row per measured point, and one run-level summary row each):
- power_of_two: p is a power of two, or the algorithm does not care (ring);
- commutative_op: the reduction op is commutative;
- not_oversubscribed: ranks <= physical cores;
- equal_partitions: the count splits into equal datatype-aligned blocks (rabenseifner:
  pof2 blocks, ring: p blocks; algorithms that send whole buffers hold trivially);
- library_choice_known: the algorithm that ran is the one modelled ('mpi' autotuned: unknown,
  and it is predicted as a lower bound, not as a schedule, so no view's test of the model is
  spoiled by it).

The run-level checks, and every check of a run together (`run_checks`), are in
runners.domain.verdict.run_assumptions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runners.domain.collectives.datatypes import DTYPES, op_spec
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.libraries import LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS, is_autotuned, modelled_spec
from runners.domain.model.closed_form import autotuned_model
from runners.domain.units import (
    counted,
)

HOLDS, VIOLATED, UNKNOWN = "holds", "violated", "unknown"
R2_THRESHOLD = 0.95
POINT_CHECKS = (
    "power_of_two",
    "commutative_op",
    "not_oversubscribed",
    "equal_partitions",
    "library_choice_known",
)
RUN_CHECKS = (
    "single_node",
    "quiet_machine",
    "stable_machine",
    "calibration_fit",
    "no_protocol_switch",
)
# runs on nodes asked for only (verdict.nodes): emulated ones, or a cluster launcher's
NODE_CHECKS = ("emulated_nodes", "shared_network", "placed_nodes")
NAMES = POINT_CHECKS + RUN_CHECKS + NODE_CHECKS
# What each assumption means for the model when it breaks, in one sentence (for the dashboard).
MEANINGS = {
    "power_of_two": "recursive doubling and Rabenseifner fold the extra ranks first: more "
    "rounds than the power-of-two formulas count (the schedule-exact prediction walks them)",
    "commutative_op": "ring and Rabenseifner need a commutative op; they are skipped for others",
    "not_oversubscribed": "more ranks than cores: the scheduler, not the algorithm, sets the "
    "time; no model describes it",
    "equal_partitions": "uneven blocks: the largest block sets each round's time (the "
    "schedule-exact prediction prices the real blocks)",
    "library_choice_known": "the autotuned library picks its algorithm itself: it is predicted "
    "as the fastest of the library's algorithms, not as the one it ran",
    "single_node": "ranks on several nodes: the one-node model of copies and memory is off",
    "quiet_machine": "other processes ran before the sweep: their CPU time stalls the ranks",
    "stable_machine": "the machine changed speed during the run: launches disagree",
    "calibration_fit": "the calibration's fit is poor: alpha, beta and gamma are uncertain",
    "no_protocol_switch": "the library changes protocol inside the swept sizes: one alpha and "
    "beta cannot price both sides (the measured curve can)",
    "emulated_nodes": "the ranks did not sit on the emulated nodes asked for, or no byte crossed "
    "the network: the run measured another placement",
    "shared_network": "one loopback carries every transfer between emulated nodes: messages "
    "sent at once share its rate, where the model gives each its own link",
    "placed_nodes": "the cluster's launcher did not put the ranks on the nodes it was told: "
    "the run measured another placement",
}


@dataclass(frozen=True)
class PointFacts:
    """What the point-level checks need to know about one measured point."""

    point_id: str
    algorithm: str
    ranks: int
    nbytes: int
    dtype: str
    op: str


def check(
    name: str,
    state: str,
    detail: str,
    point_id: str | None = None,
    calibration_id: str | None = None,
) -> dict[str, Any]:
    """One assumptions row (run_id is filled in by the store)."""
    if name not in NAMES or state not in (HOLDS, VIOLATED, UNKNOWN):
        raise ValueError(f"unknown assumption {name!r} or state {state!r}")
    return {
        "point_id": point_id,
        "name": name,
        "state": state,
        "detail": detail,
        "calibration_id": calibration_id,
    }


def modelled_as(algorithm: str) -> str | None:
    """The model a point is predicted with: its own, else library_min ('mpi')."""
    return autotuned_model(algorithm)


def power_of_two(point: PointFacts) -> dict[str, Any]:
    """Holds when p is a power of two or the algorithm's schedule is as good for any p (ring)."""
    p, spec = point.ranks, _modelled(point.algorithm)
    if p & (p - 1) == 0:
        return check("power_of_two", HOLDS, f"p = {p} is a power of two", point.point_id)
    detail = f"p = {p} is not a power of two"
    if spec.any_p:
        return check("power_of_two", HOLDS, f"{detail}, but {spec.other_p}", point.point_id)
    coping = spec.other_p.format(alg=point.algorithm)
    return check("power_of_two", VIOLATED, f"{detail}: {coping}", point.point_id)


def _modelled(algorithm: str) -> AlgorithmSpec:
    """The descriptor that predicts `algorithm`: its own, the forced one's model, or 'mpi'."""
    return modelled_spec(algorithm) or ALGORITHMS[algorithm]


def commutative_op(point: PointFacts) -> dict[str, Any]:
    """Holds for commutative ops; a noncommutative op must keep rank order."""
    if op_spec(point.op).commutative:
        return check("commutative_op", HOLDS, f"{point.op} is commutative", point.point_id)
    detail = (
        f"{point.op} is not commutative: operands must stay in rank order, so partial results "
        "are copied back into place (memory traffic the model does not count) and MPICH "
        "avoids its reduce-scatter algorithms"
    )
    return check("commutative_op", VIOLATED, detail, point.point_id)


def not_oversubscribed(point: PointFacts, cores: int | None) -> dict[str, Any]:
    """Holds when every rank has a physical core of its own; unknown where the machine's cores
    are not known (`cores` None: imported from another tool's file, which does not say)."""
    if cores is None:
        detail = f"{point.ranks} ranks on a machine whose cores the imported file does not say"
        return check("not_oversubscribed", UNKNOWN, detail, point.point_id)
    if point.ranks <= cores:
        detail = f"{point.ranks} ranks on {cores} physical cores"
        return check("not_oversubscribed", HOLDS, detail, point.point_id)
    detail = (
        f"{point.ranks} ranks share {cores} physical cores: ranks wait for CPU time, "
        "which no alpha, beta or gamma describes"
    )
    return check("not_oversubscribed", VIOLATED, detail, point.point_id)


def equal_partitions(point: PointFacts) -> dict[str, Any]:
    """Holds when the count splits into the algorithm's blocks evenly (whole elements)."""
    parts = _modelled(point.algorithm).parts
    blocks = None if parts is None else parts(point.ranks)
    if blocks is None:
        detail = "the library's own algorithm, and so how it splits the buffer, is unknown"
        return check("equal_partitions", UNKNOWN, detail, point.point_id)
    if blocks <= 1:
        what = "segments of a fixed size, each priced" if blocks == 0 else "whole buffers"
        detail = f"{point.algorithm} sends {what}: nothing to partition"
        return check("equal_partitions", HOLDS, detail, point.point_id)
    count = point.nbytes // DTYPES[point.dtype].itemsize
    if count % blocks == 0:
        each = counted(count // blocks, point.dtype)
        detail = f"{counted(count, 'element')} split into {blocks} blocks of {each}"
        return check("equal_partitions", HOLDS, detail, point.point_id)
    largest = -(-count // blocks)
    detail = (
        f"{counted(count, 'element')} do not split into {blocks} equal {point.dtype} blocks: "
        f"blocks of {largest} and {counted(count // blocks, 'element')}, and the prediction "
        "walks the schedule with them"
    )
    return check("equal_partitions", VIOLATED, detail, point.point_id)


def library_choice_known(point: PointFacts) -> dict[str, Any]:
    """Holds for collsweep's code and forced library algorithms; unknown for the library's
    autotuned MPI_Allreduce, which picks its algorithm itself and is predicted as a bound."""
    algorithm = point.algorithm
    if is_autotuned(algorithm):
        detail = (
            "the library's autotuned MPI_Allreduce picks its algorithm itself: which one ran is "
            "unknown, so it is predicted as the fastest of the library's own algorithms "
            "(library_min), not as one schedule"
        )
        return check("library_choice_known", UNKNOWN, detail, point.point_id)
    if not ALGORITHMS[algorithm].library:
        detail = f"collsweep's own {algorithm} runs exactly the modelled schedule"
        return check("library_choice_known", HOLDS, detail, point.point_id)
    if ALGORITHMS[algorithm].own_launch:
        detail = (
            "the run's tuning file names the library algorithm for each size (the run's "
            "environment holds the file's hash and provenance); predicted as the fastest of "
            "the library's algorithms (library_min), which is what the file aims at"
        )
        return check("library_choice_known", HOLDS, detail, point.point_id)
    spec = ALGORITHMS[algorithm]
    forced_by = LIBRARIES[spec.runs_on].forcing_text(spec)
    detail = (
        f"{forced_by} forced it (the sweep skips points where the library falls back to "
        f"another algorithm); modelled as {modelled_as(algorithm) or 'nothing'}"
    )
    if ALGORITHMS[algorithm].model_note:
        detail += ", " + ALGORITHMS[algorithm].model_note
    return check("library_choice_known", HOLDS, detail, point.point_id)


def point_checks(point: PointFacts, cores: int | None) -> list[dict[str, Any]]:
    """Every point-level check of one point."""
    return [
        power_of_two(point),
        commutative_op(point),
        not_oversubscribed(point, cores),
        equal_partitions(point),
        library_choice_known(point),
    ]
