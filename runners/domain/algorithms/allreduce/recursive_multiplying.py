"""Recursive multiplying (k-ary recursive doubling, radix k): log_k p rounds; in round r a rank
exchanges its whole partial result with the k-1 ranks that differ from it in base-k digit r,
and reduces what they sent in rank order (MPICH's recursive_multiplying with
MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL = k). Its rounds move everything before they
reduce (schedule.exchange_first), so each partner is sent what the rank held when the round
began. Radix 2 is recursive doubling; p must be a power of the radix."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.bcast.knomial import RADIX
from runners.domain.algorithms.parameters import Family
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Schedule, Step

SHADES = ("#1f77b4", "#aec7e8", "#393b79", "#6b6ecf", "#3182bd", "#9ecae1")  # by radix


def exchange_steps(rank: int, size: int, radix: int, count: int) -> list[Step]:
    """Round r: the partners e != d (d this rank's digit r) in the order of their reduction,
    the right ones first (mine on the left: d+1 .. k-1), then the left ones (theirs on the left:
    d-1 .. 0), so the round ends holding P_0 o P_1 o ... o P_(k-1) whatever the op."""
    steps, whole, step, level = [], (0, count), 1, 0
    while step < size:
        digit = rank // step % radix
        base = rank - digit * step
        order = [*range(digit + 1, radix), *range(digit - 1, -1, -1)]
        for other in order:
            partner = base + other * step
            steps.append(Step((CORE, level), "exchange", partner, whole, partner, whole,
                              reduce=True, mine_is_left=digit < other))  # fmt: skip
        step, level = step * radix, level + 1
    return steps


@lru_cache(maxsize=64)
def schedule_for(radix: int) -> Schedule:
    """Recursive multiplying of one radix as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        return tuple(exchange_steps(rank, size, radix, count))

    schedule.__doc__ = f"recursive multiplying, radix {radix}"
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    radix = int(values["radix"])
    return AlgorithmSpec(
        name,
        f"whole-array exchange with the {radix - 1} ranks differing in one base-{radix} digit, "
        f"log_{radix} p rounds, reduced in rank order",
        color=SHADES[(radix - 2) % len(SHADES)],
        short=f"rm{radix}",
        schedule=schedule_for(radix),
        power_of=radix,
        other_p=f"{{alg}} is refused where p is not a power of {radix}",
    )


FAMILY = Family(
    "recursive_multiplying",
    (RADIX,),
    build,
    help="recursive multiplying allreduce (radix k: log_k p rounds of k-1 whole exchanges)",
    example_values=(("radix", "4"),),
)
