"""Whether the ranks of a recorded job agree about their collective calls (no MPI).

Every member of a communicator must make the same collective calls on it in the same order:
the same collective, size, datatype, op and root. Each communicator's calls (found by its
members' world ranks) are held against those of its lowest member: the first call at which
another member's order differs is reported, with both ranks' calls; where an order was cut
(the recorder keeps at most MAX_ORDER runs), the counts of each call stand in for it. A job
whose ranks disagree still runs on most libraries (an op differs, for instance): the workload
keeps rank 0's view and these sentences go into its notes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from runners.domain.workload.recording import CallKey, RankRecord, comm_text, key_text

Members = tuple[int, ...]
Runs = list[tuple[CallKey, int]]
MAX_NOTES = 10  # disagreements reported one by one; the rest are counted


def comm_orders(record: RankRecord) -> dict[Members, Runs]:
    """The rank's calls on each communicator it used, in order, run-length encoded."""
    orders: dict[Members, Runs] = {comm.members: [] for comm in record.comms}
    for index, times in record.order:
        runs = orders[record.comms[record.calls[index].comm].members]
        key = record.key(index)
        if runs and runs[-1][0] == key:
            runs[-1] = (key, runs[-1][1] + times)
        else:
            runs.append((key, times))
    return orders


def comm_counts(record: RankRecord) -> dict[Members, Counter]:
    """How many times the rank made each call on each communicator (complete even where the
    order was cut)."""
    counts: dict[Members, Counter] = {comm.members: Counter() for comm in record.comms}
    for index, call in enumerate(record.calls):
        counts[record.comms[call.comm].members][record.key(index)] += call.calls
    return counts


def first_difference(a: Runs, b: Runs) -> tuple[int, CallKey | None, CallKey | None] | None:
    """The first call (0-based) at which two run-length encoded orders differ, with each one's
    call there (None: that order has ended); None where they are the same."""
    position, i, j = 0, 0, 0
    left_a = a[0][1] if a else 0
    left_b = b[0][1] if b else 0
    while i < len(a) and j < len(b):
        if a[i][0] != b[j][0]:
            return position, a[i][0], b[j][0]
        step = min(left_a, left_b)
        position, left_a, left_b = position + step, left_a - step, left_b - step
        if not left_a:
            i += 1
            left_a = a[i][1] if i < len(a) else 0
        if not left_b:
            j += 1
            left_b = b[j][1] if j < len(b) else 0
    if i == len(a) and j == len(b):
        return None
    return position, a[i][0] if i < len(a) else None, b[j][0] if j < len(b) else None


def _call_text(key: CallKey | None) -> str:
    return "no further call" if key is None else key_text(key)


class RankCalls:
    """One rank's calls per communicator, worked out once: in order, and counted."""

    def __init__(self, record: RankRecord) -> None:
        self.rank = record.world_rank
        self.cut = bool(record.dropped)
        self.orders = comm_orders(record)
        self.counts = comm_counts(record)


def pair_difference(
    first: RankCalls, other: RankCalls, members: Members, world_size: int
) -> str | None:
    """How `other` disagrees with `first` (the communicator's reference) about their calls on
    the communicator of `members`, or None."""
    where = comm_text(members, world_size)
    a, b = first.rank, other.rank
    found = first_difference(first.orders.get(members, []), other.orders.get(members, []))
    if found is not None and not ((first.cut or other.cut) and None in found[1:]):
        position, mine, theirs = found
        return (
            f"world rank {b} disagrees with world rank {a} about call {position + 1} on "
            f"{where}: rank {a} made {_call_text(mine)}, rank {b} made {_call_text(theirs)}"
        )
    mine_counts = first.counts.get(members, Counter())
    their_counts = other.counts.get(members, Counter())
    differ = [key for key in {*mine_counts, *their_counts} if mine_counts[key] != their_counts[key]]
    if not differ:
        return None
    key = sorted(differ, key=str)[0]
    return (
        f"world ranks {a} and {b} disagree about their calls on {where}: {key_text(key)} "
        f"{mine_counts[key]} times on rank {a}, {their_counts[key]} on rank {b}"
    )


def disagreements(records: Sequence[RankRecord]) -> list[str]:
    """Every communicator's members held against its lowest member: one sentence per member
    that disagrees (MAX_NOTES of them, then how many more)."""
    by_rank = {record.world_rank: RankCalls(record) for record in records}
    world_size = records[0].world_size if records else 0
    communicators = {comm.members for record in records for comm in record.comms}
    notes = []
    for members in sorted(communicators, key=lambda m: (min(m), m)):
        present = [rank for rank in members if rank in by_rank]
        for rank in present[1:]:
            note = pair_difference(by_rank[present[0]], by_rank[rank], members, world_size)
            if note:
                notes.append(note)
    if len(notes) > MAX_NOTES:
        notes[MAX_NOTES:] = [f"... and {len(notes) - MAX_NOTES} more ranks disagree"]
    return notes
