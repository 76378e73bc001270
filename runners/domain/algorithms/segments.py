"""A pipeline's segments: the segment size parameter and how a vector is cut by it (pure).

A pipelined schedule cuts the vector into segments of a fixed size in bytes and moves them
one behind another, so its rounds depend on the count (descriptor.by_count) and its schedule
on the element size (descriptor.AlgorithmSpec.schedule_at). The size is written in a member's
name (`bcast.chain(segment=64KiB)`); a segment smaller than one element is one element.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from runners.domain.algorithms.parameters import BYTES, Parameter
from runners.domain.collectives.descriptor import AlgorithmSpec, by_count
from runners.domain.collectives.schedule import Range, Schedule
from runners.domain.units import format_bytes

# MPICH's MPIR_CVAR_BCAST_TREE_PIPELINE_CHUNK_SIZE default: the size a member leaves out
SEGMENT = Parameter("segment", default="8KiB", unit=BYTES, auto=True)


def segment_elements(segment_bytes: int, itemsize: int) -> int:
    """Elements of `itemsize` bytes in one segment (at least one)."""
    return max(1, segment_bytes // itemsize)


def segment_ranges(count: int, elements: int) -> tuple[Range, ...]:
    """The segments of a `count`-element vector, `elements` each but the first, which holds
    the remainder (as MPICH cuts its pipeline's chunks); one empty segment for an empty
    vector."""
    first = count % elements or min(count, elements)
    starts = range(first, count, elements)
    return ((0, first), *((start, start + elements) for start in starts))


@cache
def by_itemsize(make: Callable[[int], Schedule], segment_bytes: int) -> Callable[[int], Schedule]:
    """itemsize -> the schedule `make(elements a segment)`: a member's schedule_by_itemsize
    (one object per segment size, so two builds of a member are equal)."""

    def at(itemsize: int) -> Schedule:
        return make(segment_elements(segment_bytes, itemsize))

    return at


def pipeline_member(
    name: str,
    values: Mapping[str, str],
    schedule_for: Callable[[int], Schedule],
    description: str,
    **fields: Any,
) -> AlgorithmSpec:
    """A pipelined family member's descriptor (its Family.build): the schedule of its segment
    for 1-byte elements and for every element size, priced at its own count (by_count), any
    p; `description` may name the segment as {segment}."""
    segment = SEGMENT.number(values["segment"])
    return AlgorithmSpec(
        name,
        description.format(segment=format_bytes(segment)),
        short=fields.pop("short") + values["segment"],
        schedule=schedule_for(segment),
        schedule_by_itemsize=by_itemsize(schedule_for, segment),
        parts=by_count,
        any_p=True,
        **fields,
    )
