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

Run-level checks: single_node (the ranks' own host names, else the allocation or the launcher;
runners.domain.verdict.topology), quiet_machine (load before the sweep), stable_machine (the
machine-state probe's spread over the run), calibration_fit (R^2 of each calibration >= 0.95)
and no_protocol_switch (no ping-pong breakpoint inside the swept sizes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runners.domain.collectives.datatypes import DTYPES, op_spec
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.libraries import LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS, is_autotuned, modelled_spec
from runners.domain.model.calibration_id import CalibrationId, CalibrationKind
from runners.domain.model.closed_form import autotuned_model
from runners.domain.units import (
    counted,
    format_bytes,
    format_rate,
    format_ratio,
    format_seconds,
)
from runners.domain.verdict import topology

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


def summarize(name: str, rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The run-level row of a point-level check: violated if any point is, else unknown if any."""
    mine = [r for r in rows if r["name"] == name]
    states = Counter(r["state"] for r in mine)
    state = next((s for s in (VIOLATED, UNKNOWN) if states[s]), HOLDS)
    if not mine:
        return check(name, UNKNOWN, "no measured points to check")
    counts = ", ".join(f"{states[s]} {s}" for s in (HOLDS, VIOLATED, UNKNOWN) if states[s])
    detail = f"{counted(len(mine), 'point')}: {counts}"
    if state != HOLDS:
        detail += "; e.g. " + next(r["detail"] for r in mine if r["state"] == state)
    return check(name, state, detail)


def single_node(
    launcher: str | None, environment: Mapping[str, str], probes: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """Whether every rank shared one host (runners.domain.verdict.topology.single_node says how)."""
    state, detail = topology.single_node(launcher, environment, probes)
    return check("single_node", state, detail)


def fit_r_squared(cal: Mapping[str, Any]) -> float | None:
    """The R^2 of the fit predictions use: the piecewise one when it has breakpoints."""
    details = cal.get("details") or {}
    if cal.get("breakpoints") and details.get("piecewise_r_squared") is not None:
        return float(details["piecewise_r_squared"])
    return None if cal.get("r_squared") is None else float(cal["r_squared"])


def calibration_fit(cal: Mapping[str, Any]) -> dict[str, Any]:
    """Holds when the calibration's fit explains its timings with R^2 >= 0.95."""
    r2, cal_id = fit_r_squared(cal), cal["calibration_id"]
    source = cal.get("source") or "unknown source"
    what = f"calibration {cal_id}" + ("" if source == cal_id else f" ({source})")
    if r2 is None:
        return check("calibration_fit", UNKNOWN, f"{what} records no R^2", None, cal_id)
    segments = len(cal.get("segments") or []) or 1
    fit = f"{segments} segments" if segments > 1 else "one segment"
    if r2 >= R2_THRESHOLD:
        detail = f"{what} fits its timings with R^2 {r2:.3f} >= {R2_THRESHOLD} ({fit})"
        return check("calibration_fit", HOLDS, detail, None, cal_id)
    detail = (
        f"{what} fits its timings with R^2 {r2:.3f} < {R2_THRESHOLD} ({fit}): alpha, beta "
        "and gamma do not describe them well, so neither do the predictions"
    )
    return check("calibration_fit", VIOLATED, detail, None, cal_id)


def no_protocol_switch(cal: Mapping[str, Any], min_bytes: int, max_bytes: int) -> dict[str, Any]:
    """Holds when no ping-pong breakpoint lies inside the swept sizes (min, max]."""
    cal_id = cal["calibration_id"]
    swept = f"{format_bytes(min_bytes)} .. {format_bytes(max_bytes)}"
    inside = [b for b in cal.get("breakpoints") or [] if min_bytes < b <= max_bytes]
    if inside:
        at = ", ".join(format_bytes(b) for b in inside)
        detail = (
            f"the ping-pong switches protocol at {at}, inside the swept {swept}: no single "
            "alpha/beta describes the range, so predictions use the segment covering each size"
        )
        return check("no_protocol_switch", VIOLATED, detail, None, cal_id)
    low, high = cal.get("min_bytes"), cal.get("max_bytes")
    if low is None or high is None:
        detail = "the calibration does not record which sizes its ping-pong measured"
        return check("no_protocol_switch", UNKNOWN, detail, None, cal_id)
    if low > min_bytes or high < max_bytes:
        measured = f"{format_bytes(low)} .. {format_bytes(high)}"
        detail = f"the ping-pong measured {measured}, not all of the swept {swept}"
        return check("no_protocol_switch", UNKNOWN, detail, None, cal_id)
    detail = f"no protocol switch in the ping-pong between {swept}"
    return check("no_protocol_switch", HOLDS, detail, None, cal_id)


QUIET_LOAD = 1.0  # one core's worth of other runnable work


def quiet_machine(load_average: Sequence[float] | None, cores: int | None) -> dict[str, Any]:
    """Holds when the machine was nearly idle before the sweep started.

    Other runnable processes take the ranks' cores away for whole scheduler slices, which
    shows up as millisecond stalls that no alpha, beta or gamma describes.
    """
    if not load_average:
        return check("quiet_machine", UNKNOWN, "the load average before the sweep is not recorded")
    one_minute = float(load_average[0])
    detail = f"1-minute load average {one_minute:.2f} on {cores} cores before the sweep"
    if one_minute >= QUIET_LOAD:
        detail += ": other processes were running, and their CPU time stalls the ranks"
        return check("quiet_machine", VIOLATED, detail)
    return check("quiet_machine", HOLDS, detail)


def caution_notes(ranks: Sequence[int], load_average: Sequence[float], cores: int) -> list[str]:
    """What a user should know before trusting a sweep's numbers on this machine, in words:
    groups with more ranks than cores, and other work on the cores (empty when neither)."""
    notes = []
    over = [r for r in ranks if r > cores]
    if over:
        groups = ", ".join(f"p={r}" for r in over)
        notes.append(
            f"{groups}: more ranks than the {cores} cores here (oversubscribed): their timings "
            "measure the scheduler as much as the algorithms; reported apart, never a test of "
            "the model"
        )
    if load_average and load_average[0] >= QUIET_LOAD:
        notes.append(
            f"the machine was busy (1-minute load {load_average[0]:.2f} on {cores} cores): other "
            "processes stall the ranks; run again on a quiet machine for numbers to trust"
        )
    return notes


STABLE_SPREAD = 1.5  # the most a probe may vary over a run (slowest / fastest)


def stable_machine(probes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Holds when the machine-state probe (runners.ranks.probe) stayed within STABLE_SPREAD
    over the run, in every job: its 8 B ping-pong time and its 4 MiB copy rate."""
    if not probes:
        return check("stable_machine", UNKNOWN, "the run recorded no machine-state probes")
    worst = max(_probe_spreads(probes), key=lambda spread: spread[0])
    state = HOLDS if worst[0] <= STABLE_SPREAD else VIOLATED
    detail = f"{len(probes)} probes; widest: {worst[1]} (bound {STABLE_SPREAD}x)"
    if state == VIOLATED:
        detail += (
            ": the machine changed state during the run, so launches measured different machines"
        )
    return check("stable_machine", state, detail)


def _gbps_rate(gbps: float) -> str:
    return format_rate(gbps * 1e9)


def _probe_spreads(probes: Sequence[Mapping[str, Any]]) -> list[tuple[float, str]]:
    """(slowest / fastest, in words) of each job's ping-pong times and copy rates."""
    spreads = []
    for job in sorted({p["job"] for p in probes}):
        mine = [p for p in probes if p["job"] == job]
        for key, shown in (("pingpong_s", format_seconds), ("copy_gbps", _gbps_rate)):
            values = [float(p[key]) for p in mine if p.get(key) and float(p[key]) > 0]
            if len(values) >= 2:
                low, high = min(values), max(values)
                what = "8 B ping-pong" if key == "pingpong_s" else "4 MiB copy"
                span = f"{shown(low)} .. {shown(high)} ({format_ratio(high / low)})"
                words = f"{what} {span} in {job}"
                spreads.append((high / low, words))
    return spreads or [(1.0, "fewer than two probes per job")]


def run_checks(
    points: Iterable[PointFacts],
    cores: int | None,
    launcher: str | None,
    environment: Mapping[str, str],
    calibrations: Iterable[Mapping[str, Any]],
    load_average: Sequence[float] | None = None,
    probes: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Every check of a run: point-level rows, their run-level summaries, run-level rows.

    no_protocol_switch is checked for ping-pong calibrations only: a fit to the collectives'
    own timings has a single segment and so cannot show a switch.
    """
    points = list(points)
    rows = [row for point in points for row in point_checks(point, cores)]
    rows += [summarize(name, rows) for name in POINT_CHECKS]
    rows.append(single_node(launcher, environment, probes))
    rows.append(quiet_machine(load_average, cores))
    rows.append(stable_machine(probes))
    sizes = [p.nbytes for p in points]
    for cal in calibrations:
        rows.append(calibration_fit(cal))
        fitted = CalibrationId.parse(cal.get("source") or "").kind is CalibrationKind.FITTED
        if sizes and not fitted:
            rows.append(no_protocol_switch(cal, min(sizes), max(sizes)))
    return rows
