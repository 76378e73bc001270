"""A sweep's `auto` parameters chosen before its launches (`collsweep sweep` calls `resolved`
with the run's calibration): a name such as
`bcast.chain(segment=auto)` becomes, at each grid point (ranks, size, datatype), the member the
model prices fastest on the run's calibration and its neighbours by a factor of 2, measured
there alone (the spec's auto_points, runners.domain.sweep.auto_points), so a sweep needs no grid
of every value. What was chosen is said, and kept with the run's spec (a resumed run measures
the same points)."""

from __future__ import annotations

import itertools
from dataclasses import replace

from runners.analysis.params import Params
from runners.analysis.points import predict_with
from runners.domain.algorithms import FAMILIES
from runners.domain.algorithms.parameters import (
    AUTO,
    BYTES,
    Parameter,
    bytes_written,
    split_name,
    written,
)
from runners.domain.collectives.datatypes import ops_of
from runners.domain.libraries.catalog import ALGORITHMS, canonical_name, collective_of
from runners.domain.sweep.auto_points import AutoPoint
from runners.domain.sweep.spec import SweepSpec

SMALLEST_SEGMENT, LARGEST_RADIX = 256, 64


def auto_names(spec: SweepSpec) -> list[str]:
    """The spec's algorithms with an `auto` parameter, still to choose."""
    return [name for name in spec.algorithms if ALGORITHMS[name].auto]


def resolved(spec: SweepSpec, params: Params) -> tuple[SweepSpec, list[str]]:
    """The spec with its `auto` names replaced by the members chosen at each point on these
    parameters (the run's calibration), and a line per name saying what was chosen."""
    points: list[AutoPoint] = []
    members: dict[str, list[str]] = {}
    said = []
    for name in auto_names(spec):
        mine = _points(params, name, spec)
        points += mine
        members[name] = list(dict.fromkeys(member for member, *_ in mine))
        chosen = ", ".join(members[name]) or "nothing (no member runs on these group sizes)"
        said.append(
            f"auto: {name} measured as {chosen} (the model's best at each point on calibration "
            f"{params.calibration_id}, and its neighbours by 2x)"
        )
    algorithms = [m for a in spec.algorithms for m in members.get(a, [a])]
    out = replace(spec, algorithms=tuple(dict.fromkeys(algorithms)), auto_points=tuple(points))
    return out, said


def _points(params: Params, name: str, spec: SweepSpec) -> list[AutoPoint]:
    """Every (member, ranks, bytes, dtype) chosen for `name` over the spec's grid."""
    return [
        (member, ranks, nbytes, dtype)
        for ranks, nbytes, dtype in itertools.product(spec.ranks, spec.sizes, spec.dtypes)
        for member in chosen_members(params, name, ranks, nbytes, dtype, spec.ops)
    ]


def chosen_members(
    params: Params, name: str, ranks: int, nbytes: int, dtype: str, ops: tuple[str, ...]
) -> list[str]:
    """The member of `name`'s family the model prices fastest at this point, and the members
    a factor of 2 either side of it (the candidates: powers of two, those that can run on
    `ranks` ranks; [] where none can)."""
    family, given = split_name(name)
    parameter = next(p for p in FAMILIES[family].parameters if given.get(p.name) == AUTO)
    op = ops_of(collective_of(name), ops)[0]
    values = candidates(parameter, ranks, nbytes)
    named = [canonical_name(written(family, {**given, parameter.name: v}), {}) for v in values]
    named = [m for m in named if ALGORITHMS[m].unsupported_reason(ranks, op, True) is None]
    if not named:
        return []
    times = [_total(params, member, ranks, nbytes, dtype, op) for member in named]
    best = min(range(len(named)), key=times.__getitem__)
    return named[max(0, best - 1) : best + 2]


def candidates(parameter: Parameter, ranks: int, nbytes: int) -> list[str]:
    """Powers of two to choose from: segment sizes from 256 B to the first at or above the
    payload (one segment), radixes from 2 to the first at or above the group size (one
    level), as a member's name writes them."""
    if parameter.unit == BYTES:
        return [bytes_written(v) for v in _doublings(SMALLEST_SEGMENT, nbytes)]
    return [str(v) for v in _doublings(2, min(ranks, LARGEST_RADIX))]


def _doublings(first: int, top: int) -> list[int]:
    """first, 2 first, 4 first, ... up to the first at or above `top`."""
    values = [first]
    while values[-1] < top:
        values.append(values[-1] * 2)
    return values


def _total(params: Params, member: str, ranks: int, nbytes: int, dtype: str, op: str) -> float:
    found = predict_with(params, member, ranks, nbytes, dtype, op)
    return float("inf") if found is None else found.total_s
