"""The run-level checks of the model's assumptions, and every check of a run together
(pure: no MPI, no store); the rows are runners.domain.verdict.assumptions' (its `check`).

Run-level checks: single_node (the ranks' own host names, else the allocation or the launcher;
runners.domain.verdict.topology), quiet_machine (load before the sweep), stable_machine (the
machine-state probe's spread over the run), calibration_fit (R^2 of each calibration >= 0.95)
and no_protocol_switch (no ping-pong breakpoint inside the swept sizes); and each point-level
check summarized over the run's points (`summarize`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runners.domain.model.calibration_id import CalibrationId, CalibrationKind
from runners.domain.units import (
    counted,
    format_bytes,
    format_rate,
    format_ratio,
    format_seconds,
)
from runners.domain.verdict import topology
from runners.domain.verdict.assumptions import (
    HOLDS,
    POINT_CHECKS,
    R2_THRESHOLD,
    UNKNOWN,
    VIOLATED,
    PointFacts,
    check,
    point_checks,
)


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
