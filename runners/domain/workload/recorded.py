"""A workload from the ranks' records of one recorded run: rank 0's view, with notes (no MPI).

The workload holds the calls world rank 0 made (on every communicator it is in), with their
counts and its order of calls; `ranks` of each call is its communicator's size. The notes say
where the ranks disagree (runners.domain.workload.rank_agreement), which collectives were counted
but not
recorded, calls on communicators without rank 0 (kept out: they are other ranks' view), ranks
that left no record, and an order cut at MAX_ORDER runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runners.domain.units import counted
from runners.domain.workload.file import (
    MAX_ORDER,
    ORDER_CUT_NOTE,
    Call,
    Workload,
    cut_order,
    merged,
)
from runners.domain.workload.rank_agreement import disagreements
from runners.domain.workload.recording import RankRecord, RecordError, other_note

RECORDED_CALLS = "MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather, MPI_Reduce_scatter_block"


def rank_calls(record: RankRecord) -> list[Call]:
    """The rank's distinct calls as workload calls, in the record's order (not yet merged:
    the same call on two communicators of one size is two entries here)."""
    return [
        Call(c.collective, c.nbytes, c.dtype, c.op, record.comms[c.comm].size, c.calls, c.root)
        for c in record.calls
    ]


def merged_order(
    order: Sequence[tuple[int, int]], to_merged: Sequence[int]
) -> tuple[tuple[tuple[int, int], ...], bool]:
    """A run-length encoded order with its indices mapped, neighbouring runs of one index
    joined, cut to what a workload file holds (cut_order), and whether it was cut."""
    runs: list[list[int]] = []
    for index, times in order:
        target = to_merged[index]
        if runs and runs[-1][0] == target:
            runs[-1][1] += times
        else:
            runs.append([target, times])
    return cut_order(runs)


def _missing_ranks(records: Sequence[RankRecord]) -> list[str]:
    world_size = records[0].world_size
    missing = sorted(set(range(world_size)) - {r.world_rank for r in records})
    if not missing:
        return []
    shown = ", ".join(map(str, missing[:16])) + (", ..." if len(missing) > 16 else "")
    return [
        f"no record from world {counted(len(missing), 'rank')} {shown} of {world_size}: "
        "they made no MPI call the recorder saw"
    ]


def _outside_rank_zero(records: Sequence[RankRecord], zero_calls: list[Call]) -> list[str]:
    """A note on calls made on communicators without rank 0, each counted once (by its lowest
    member), and whether rank 0 made the same calls on its own communicators."""
    seen: set[tuple[int, ...]] = set()
    calls, comms, foreign = 0, 0, 0
    known = {call.key for call in zero_calls}
    for record in records:
        as_calls = rank_calls(record)
        for comm_index, comm in enumerate(record.comms):
            if 0 in comm.members or comm.members in seen or comm.inter:
                continue
            seen.add(comm.members)
            ours = [
                c for c, raw in zip(as_calls, record.calls, strict=True) if raw.comm == comm_index
            ]
            if not ours:
                continue
            comms += 1
            calls += sum(call.calls for call in ours)
            foreign += sum(call.calls for call in ours if call.key not in known)
    if not calls:
        return []
    same = (
        "each a call rank 0 also made"
        if not foreign
        else f"{foreign} of them of a kind rank 0 never made"
    )
    return [
        "calls on communicators without world rank 0 are not in the workload (it is rank 0's "
        f"view): {counted(calls, 'call')} on {counted(comms, 'communicator')}, {same}"
    ]


def recorded_workload(records: Sequence[RankRecord], name: str, source: dict[str, Any]) -> Workload:
    """The workload of a recorded run (records by world rank, as read_records gives them);
    RecordError where rank 0 left no record or made no call collsweep records."""
    if not records or records[0].world_rank != 0:
        raise RecordError("world rank 0 left no record: the workload is rank 0's view")
    zero = records[0]
    raw = rank_calls(zero)
    others = [other_note(other, times) for other, times in sorted(zero.others.items())]
    if not raw:
        seen = "; ".join(others) or "no collective call at all"
        raise RecordError(f"rank 0 made no call of {RECORDED_CALLS} ({seen}): nothing to write")
    calls = merged(raw)
    position = {(*call.key, call.root): index for index, call in enumerate(calls)}
    to_merged = [position[(*call.key, call.root)] for call in raw]
    notes = [*disagreements(records), *_missing_ranks(records), *others]
    notes += _outside_rank_zero(records, raw)
    if zero.dropped:
        notes.append(
            f"order: cut at {MAX_ORDER} runs; rank 0's {counted(zero.dropped, 'later call')} "
            "are counted but not in the order"
        )
    order, cut = merged_order(zero.order, to_merged)
    if cut:
        notes.append(ORDER_CUT_NOTE)
    return Workload(name, tuple(calls), order, source, tuple(notes))
