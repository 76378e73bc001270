"""Bruck's allgather, k-port (radix k): ceil(log_k p) rounds for any p, in a buffer rotated by
the rank; radix 2, the default, is Bruck's original (MPICH's k_brucks with
MPIR_CVAR_ALLGATHER_BRUCKS_KVAL = k is the same exchange pattern)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.bcast.knomial import RADIX
from runners.domain.algorithms.parameters import Family
from runners.domain.collectives.descriptor import AlgorithmSpec, per_rank
from runners.domain.collectives.schedule import CORE, Schedule, Step, block_bounds

SHADES = ("#ff7f0e", "#d62728", "#bcbd22", "#8c564b", "#e377c2", "#7f7f7f")  # by radix


def relative_bounds(rank: int, size: int, count: int) -> tuple[int, ...]:
    """Block boundaries in the rotated buffer: block j there is rank (rank + j) % p's."""
    bounds = block_bounds(count, size)
    out = [0]
    for j in range(size):
        owner = (rank + j) % size
        out.append(out[-1] + bounds[owner + 1] - bounds[owner])
    return tuple(out)


def bruck_steps(rank: int, size: int, count: int, radix: int) -> list[Step]:
    """The buffer is rotated so a rank's own block comes first (the descriptor says `rotated`;
    the ranks rotate it back after the last round). In round r, with d = radix^r blocks held,
    a rank sends its first min(d, p - j d) blocks to rank - j d and appends as many from
    rank + j d at block j d, for j = 1 .. radix-1 one after another (each port's exchange
    touches only blocks held before the round and lands beyond them)."""
    steps: list[Step] = []
    mine = relative_bounds(rank, size, count)
    rounds, dist = 0, 1
    while dist < size:
        for port in range(1, radix):
            offset = port * dist
            if offset >= size:
                break
            n = min(dist, size - offset)
            theirs = relative_bounds((rank + offset) % size, size, count)
            sent = (0, mine[n])
            got = (mine[offset], mine[offset] + theirs[n])
            to, frm = (rank - offset) % size, (rank + offset) % size
            steps.append(Step((CORE, rounds), "allgather", to, sent, frm, got))
        rounds, dist = rounds + 1, dist * radix
    return steps


@lru_cache(maxsize=64)
def schedule_for(radix: int) -> Schedule:
    """Bruck's allgather of one radix as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        return tuple(bruck_steps(rank, size, count, radix))

    schedule.__doc__ = f"Bruck's allgather, radix {radix}"
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    radix = int(values["radix"])
    ports = "" if radix == 2 else f", up to {radix - 1} exchanges a round"
    return AlgorithmSpec(
        name,
        f"Bruck: ceil(log{'2' if radix == 2 else '_' + str(radix)} p) rounds for any p{ports}, "
        "then a local rotation",
        collective="allgather",
        color=SHADES[(radix - 2) % len(SHADES)],
        short="bruck" if radix == 2 else f"bruck{radix}",
        schedule=schedule_for(radix),
        parts=per_rank,
        rotated=True,
        other_p=f"Bruck takes ceil(log{radix} p) rounds for any p (the last one shorter)",
        any_p=True,
    )


DESCRIPTOR = build("allgather.bruck", {"radix": RADIX.default})

FAMILY = Family(
    "allgather.bruck",
    (RADIX,),
    build,
    help="Bruck's allgather, k-port (radix k: ceil(log_k p) rounds of up to k-1 exchanges)",
    example_values=(("radix", "4"),),
)
