"""Whether an algorithm's schedule keeps its collective's contract, checked symbolically
(pure: no MPI): what the Modular lab, the schedule tests and `collsweep verify`'s serial
reference agree on."""

from __future__ import annotations

from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import Contribution, block_bounds, simulate


def rotation(spec: AlgorithmSpec, rank: int, size: int, count: int) -> int:
    """Where the rank's rotated buffer starts in the whole vector (0 unless `spec.rotated`)."""
    return block_bounds(count, size)[rank] if spec.rotated and size else 0


def final_values(spec: AlgorithmSpec, size: int, count: int) -> list[list[Contribution]]:
    """Each rank's whole vector after `spec`'s schedule, symbolically, in the vector's own
    order (a rotated buffer rotated back)."""
    collective = COLLECTIVES[spec.collective]

    def start(rank: int, p: int, n: int) -> list[Contribution]:
        values, shift = collective.start(rank, p, n), rotation(spec, rank, p, n)
        return values[shift:] + values[:shift]

    final, _ = simulate(spec.required_schedule, size, count, start)
    out = []
    for rank, values in enumerate(final):
        shift = count - rotation(spec, rank, size, count) if count else 0
        out.append(values[shift:] + values[:shift])
    return out


def contract_problems(spec: AlgorithmSpec, size: int, count: int) -> list[str]:
    """What breaks the collective's contract when `spec` runs on `size` ranks and `count`
    elements; [] when every rank ends holding what it must (in rank order, or in any order
    for a commutative-only algorithm)."""
    collective = COLLECTIVES[spec.collective]
    problems = []
    for rank, values in enumerate(final_values(spec, size, count)):
        found = collective.result_range(rank, size, count)
        if found is None:
            continue
        held = values[found[0] : found[1]]
        if spec.commutative_only:
            held = [tuple(sorted(v)) for v in held]
        wrong = sum(
            h != e for h, e in zip(held, collective.expected(rank, size, count), strict=True)
        )
        if wrong:
            problems.append(f"rank {rank}: {wrong} of {len(held)} elements wrong")
    return problems
