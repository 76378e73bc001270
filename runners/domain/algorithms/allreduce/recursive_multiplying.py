"""Recursive multiplying (k-ary recursive doubling, radix k): log_k p rounds; in round r a rank
exchanges its whole partial result with the k-1 ranks that differ from it in base-k digit r,
and reduces what they sent in rank order (MPICH's recursive_multiplying with
MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL = k). Its rounds move everything before they
reduce (schedule.exchange_first), so each partner is sent what the rank held when the round
began. Radix 2 is recursive doubling. Where p is not a power of k, the ranks are cut into c
runs of consecutive ranks (c the largest power of k <= p, so a run holds at most k ranks),
each run's first rank takes the others' buffers and reduces them in rank order, those c run
the exchanges, and each sends the result back to its run: one round of up to k - 1 messages
before and one after (MPICH folds otherwise: its forced member keeps to powers of k)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

from runners.domain.algorithms.bcast.knomial import RADIX
from runners.domain.algorithms.parameters import Family
from runners.domain.collectives.descriptor import AlgorithmSpec, is_power
from runners.domain.collectives.schedule import (
    CORE,
    FOLD_IN,
    FOLD_OUT,
    Schedule,
    Step,
    block_bounds,
)

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


def core_size(size: int, radix: int) -> int:
    """The largest power of `radix` <= size."""
    core = 1
    while core * radix <= size:
        core *= radix
    return core


def folded_steps(rank: int, size: int, radix: int, count: int) -> list[Step]:
    """A rank's steps where p is not a power of the radix: its run's fold in, the exchanges
    among the runs' first ranks (exchange_steps on core ranks), the result sent back."""
    runs = block_bounds(size, core_size(size, radix))
    run = next(i for i in range(len(runs) - 1) if runs[i] <= rank < runs[i + 1])
    first, members = runs[run], range(runs[run] + 1, runs[run + 1])
    whole = (0, count)
    if rank != first:
        return [
            Step((FOLD_IN, 0), "fold in", send_to=first, send=whole),
            Step((FOLD_OUT, 0), "send back", recv_from=first, recv=whole),
        ]
    fold_in = [
        Step((FOLD_IN, 0), "fold in", recv_from=m, recv=whole, reduce=True, mine_is_left=True)
        for m in members
    ]
    core = [
        replace(s, send_to=runs[s.send_to], recv_from=runs[s.recv_from])  # core -> real rank
        for s in exchange_steps(run, len(runs) - 1, radix, count)
        if s.send_to is not None and s.recv_from is not None
    ]
    back = [Step((FOLD_OUT, 0), "send back", send_to=m, send=whole) for m in members]
    return [*fold_in, *core, *back]


@lru_cache(maxsize=64)
def schedule_for(radix: int) -> Schedule:
    """Recursive multiplying of one radix as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        if is_power(size, radix):
            return tuple(exchange_steps(rank, size, radix, count))
        return tuple(folded_steps(rank, size, radix, count))

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
        other_p=f"{{alg}} folds runs of up to {radix} consecutive ranks into a power-of-{radix} "
        "core first (a round of up to k - 1 whole messages before, one after)",
    )


FAMILY = Family(
    "recursive_multiplying",
    (RADIX,),
    build,
    help="recursive multiplying allreduce (radix k: log_k p rounds of k-1 whole exchanges)",
    example_values=(("radix", "4"),),
)
