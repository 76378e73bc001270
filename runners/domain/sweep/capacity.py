"""How large a payload the ranks can hold: sizes checked against memory before any rank starts.

Each rank of a sweep holds about BUFFERS_PER_POINT payload-sized buffers at once (send and
receive buffers, its own input kept for checking, the expected result, and up to two scratch
buffers of the algorithm), and every rank started on this machine shares its memory. A size that
cannot fit is refused with the limit named, instead of ranks failing minutes later. Pure: the
memory available and the core count come from runners.host. No MPI here.
"""

from __future__ import annotations

from collections.abc import Sequence

from runners.domain.units import format_bytes

BUFFERS_PER_POINT = 6
USABLE_SHARE = 0.8  # of the memory available now; the rest is for Python, MPI and the system
# The oversubscription a group started on this machine may ask: ranks per usable core. Beyond it
# the ranks (busy-polling MPI) starve each other and the parent, and the machine stops answering.
RANKS_PER_CORE = 8


def largest_payload(ranks_here: int, free: int, buffers: int = BUFFERS_PER_POINT) -> int:
    """The largest bytes per rank that ``ranks_here`` ranks on a machine with ``free`` bytes
    available (runners.host.memory) can each hold."""
    return int(free * USABLE_SHARE) // (max(ranks_here, 1) * buffers)


def payload_problem(
    sizes: Sequence[int],
    ranks_here: int,
    free: int,
    what: str = "sizes",
    buffers: int = BUFFERS_PER_POINT,
) -> str | None:
    """Why the largest of ``sizes`` cannot be held by the ranks on a machine with ``free``
    bytes available, or None."""
    limit = largest_payload(ranks_here, free, buffers)
    too_big = [n for n in sizes if n > limit]
    if not too_big:
        return None
    return (
        f"{what} up to {max(too_big)} bytes need about {buffers} buffers of that size on each "
        f"of {ranks_here} rank(s) here, more than {USABLE_SHARE:.0%} of the "
        f"{format_bytes(free)} available: the largest size here is {limit} bytes"
    )


def ranks_problem(ranks: Sequence[int], cores: int, per_core: int = RANKS_PER_CORE) -> str | None:
    """Why a group of max(ranks) cannot be started on `cores` cores here, or None."""
    limit = max(cores, 1) * per_core
    if max(ranks, default=0) <= limit:
        return None
    return (
        f"a group of {max(ranks)} ranks on this machine's {cores} core(s) is more than "
        f"{per_core} ranks a core (at most {limit} here); run larger groups through a launcher "
        "that places ranks on other nodes (srun, collsweep submit)"
    )


def dedicated_ranks(ranks: Sequence[int], cores: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(kept, dropped): the group sizes with a core per rank here, and the others; on a machine
    with fewer cores than any group, the smallest group is kept (oversubscribed, as it must)."""
    kept = tuple(p for p in ranks if p <= cores) or tuple(sorted(ranks)[:1])
    return kept, tuple(p for p in ranks if p not in kept)
