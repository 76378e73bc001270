"""What `collsweep simulate` runs: the spec's grid as calls of schedules (pure: no SimGrid).

A hand-written algorithm is simulated by its own schedule; a library's forced algorithm by the
schedule that models it (its descriptor's `modelled_by`), said in the call's note. MPICH's own
choice (`mpi`, the autotuned default) is simulated point by point as the algorithm MPICH's
shipped selection table names for that call (runners.domain.libraries.mpich_selection), said in
`chosen`; the other libraries' own choices and forced algorithms no schedule models are not
simulated, with the reason. A point an algorithm cannot run (its requirements, the collective's
block rule) is left out with its reason, as a sweep skips it.
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.domain.collectives.collective import NO_OP
from runners.domain.collectives.datatypes import DTYPES, op_spec
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import Step
from runners.domain.libraries import DEFAULT
from runners.domain.libraries.catalog import ALGORITHMS, autotuned_of
from runners.domain.libraries.mpich_selection import Call, documented_choice
from runners.domain.model.closed_form import predict
from runners.domain.model.contention_free import contention_free_s
from runners.domain.model.platform import Platform, schedule_exact
from runners.domain.sweep.plan import grid, skip_reason
from runners.domain.sweep.spec import SweepSpec


@dataclass(frozen=True)
class SimulatedCall:
    """One point to simulate: the algorithm asked for and the schedule that stands for it."""

    collective: str
    algorithm: str
    schedule_of: str  # the algorithm whose schedule runs (itself, or what models it)
    ranks: int
    bytes: int
    dtype: str
    op: str
    chosen: str = ""  # for MPICH's `mpi`: the algorithm its selection table names here

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype].itemsize

    @property
    def count(self) -> int:
        return self.bytes // self.itemsize

    @property
    def runs(self) -> AlgorithmSpec:
        return ALGORITHMS[self.schedule_of]

    @property
    def modelled_by(self) -> str:
        """The schedule standing for a library's forced algorithm ('' for a hand-written one)."""
        return "" if self.schedule_of == self.algorithm else self.schedule_of

    def steps(self) -> tuple[tuple[Step, ...], ...]:
        """Every rank's steps (rank i's at index i) in the schedule that runs (a ring's at
        p = 1024 are two million: made when needed, never kept for every point at once)."""
        schedule = self.runs.schedule_at(self.itemsize)
        return tuple(schedule(rank, self.ranks, self.count) for rank in range(self.ranks))

    def gamma(self, platform: Platform) -> float:
        return platform.gamma(self.dtype, self.op)

    def predicted_s(
        self, platform: Platform, steps: tuple[tuple[Step, ...], ...] | None = None
    ) -> float:
        """The schedule's time with the network to itself, each message on its own route
        (contention_free.py; ``steps`` if made already): on the crossbar, the
        alpha-beta-gamma model's schedule-exact price."""
        gamma = self.gamma(platform)
        if platform.uniform:  # the same price, without walking two million steps one by one
            return schedule_exact(self.runs, self.ranks, self.bytes, self.itemsize, platform, gamma)
        found = self.steps() if steps is None else steps
        return contention_free_s(found, self.itemsize, platform, gamma)

    def closed_form_s(self, platform: Platform) -> float:
        """The textbook closed form of the schedule that runs, on the platform's link."""
        found = predict(
            self.schedule_of,
            self.ranks,
            self.bytes,
            platform.link.latency_s,
            platform.link.beta_s_per_byte,
            self.gamma(platform),
            self.itemsize,
            commutative=op_spec(self.op).commutative,
            collective=self.collective,
        )
        return found.total_s


def schedule_for(algorithm: str) -> tuple[str, str]:
    """The algorithm whose schedule simulates ``algorithm``, and '' (or why none does)."""
    spec = ALGORITHMS[algorithm]
    if spec.schedule is not None:
        return algorithm, ""
    if spec.modelled_by and ALGORITHMS[spec.modelled_by].schedule is not None:
        return spec.modelled_by, ""
    if not spec.forced:
        return "", f"{algorithm} is the library's own choice, which no schedule models yet"
    return "", f"no schedule models {algorithm}"


def simulation_calls(spec: SweepSpec) -> tuple[list[SimulatedCall], dict[str, str]]:
    """The calls to simulate in grid order, and what was left out, why (once per reason)."""
    calls: list[SimulatedCall] = []
    left_out: dict[str, str] = {}
    for ranks, algorithm, op, nbytes, dtype in grid(spec):
        if ranks == 1:
            continue
        collective = ALGORITHMS[algorithm].collective
        chosen = ""
        if algorithm == autotuned_of(DEFAULT.name, collective):
            count = nbytes // DTYPES[dtype].itemsize
            found, words = documented_choice(Call(collective, ranks, nbytes, count, _commutes(op)))
            if found is None:
                left_out.setdefault(words, f"{algorithm} at {nbytes} B on {ranks} ranks: {words}")
                continue
            chosen = found
        runs, why = schedule_for(chosen or algorithm)
        if not runs:
            left_out.setdefault(why, why)
            continue
        if skip_reason(runs, ranks, op, nbytes, dtype) is not None:
            continue
        calls.append(SimulatedCall(collective, algorithm, runs, ranks, nbytes, dtype, op, chosen))
    return calls, left_out


def _commutes(op: str) -> bool:
    return op == NO_OP or op_spec(op).commutative
