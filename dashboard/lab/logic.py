"""Pure logic for the modular lab page (no Streamlit import, no mpi4py).

Two separate things live here and must not be confused:

* an additive orbit ``0, a, 2a, ... (mod m)``: ordinary addition modulo ``m``,
  used as an arithmetic exercise about which residues get visited;
* the real recursive-doubling partner protocol for ``p = 2**n`` ranks, where in
  round ``k`` rank ``r`` exchanges with ``r XOR 2**k``, read off the schedule the ranks run
  (runners.domain.algorithms.allreduce.recursive_doubling).

The orbit says nothing about communication cost; the logarithmic round count
comes only from the partner protocol.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

from runners.domain.collectives.schedule import Step, simulate
from runners.domain.libraries.catalog import ALGORITHMS

MAX_MODULUS = 360
"""Largest modulus accepted: one point per degree on the drawn circle.

Beyond this the points overlap and Play (0.3 s per step) would take minutes.
"""

MAX_STEP_MAGNITUDE = 1_000_000
"""Largest |a| accepted; a is reduced modulo m anyway, this only rejects absurd input."""

MAX_RANKS = 64
"""Largest p accepted by :func:`partner_rounds` (the tables stay readable)."""

DEFAULT_PLAY_DELAY = 0.3
"""Seconds between Play frames when nothing overrides it."""

MAX_PLAY_DELAY = 2.0
"""Upper clamp for the Play delay."""

PLAY_DELAY_ENV = "COLLSWEEP_LAB_PLAY_DELAY"
"""Environment variable that overrides the Play delay (tests set it to 0)."""

ORBIT_VS_PROTOCOL_NOTE = (
    "This lab is addition modulo m: it starts at residue 0 and adds a each step. "
    "It is not the XOR partner schedule used by recursive doubling, and it is not a "
    "tree simulation. Arithmetic coverage (which residues appear, and the period "
    "m / gcd(m, a)) can be inspected here, but the logarithmic communication argument "
    "(p ranks finish in log2 p rounds) must come from the actual partner protocol, "
    "where in round k rank r exchanges with r XOR 2^k, as tabulated beside the orbit."
)
"""Statement shown on the page so the two exercises are never conflated."""

PredictionKind = Literal["all", "period"]


class Parsed(NamedTuple):
    """Result of parsing a text field: exactly one of ``value`` and ``error`` is set."""

    value: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        """Whether parsing succeeded."""
        return self.error is None


@dataclass(frozen=True)
class OrbitState:
    """Additive orbit of 0 under ``x -> x + a (mod m)``.

    ``visited`` lists distinct residues in the order they were reached (starting
    with 0); ``steps`` counts additions performed; ``closed`` becomes true when an
    addition returns to 0, at which point ``steps`` equals the period.
    """

    m: int
    a: int
    visited: tuple[int, ...] = (0,)
    steps: int = 0
    closed: bool = False

    @property
    def current(self) -> int:
        """Residue reached by the latest step (0 once the orbit has closed)."""
        return 0 if self.closed else self.visited[-1]


@dataclass(frozen=True)
class Prediction:
    """A learner's prediction: all ``m`` residues appear, or the period equals ``k``."""

    kind: PredictionKind
    k: int | None = None

    def describe(self, m: int | str) -> str:
        """Human-readable form of the prediction for modulus ``m``."""
        if self.kind == "all":
            return f"all {m} residues appear"
        return f"the period is {self.k}"


def new_orbit(m: int, a: int) -> OrbitState:
    """Return a fresh orbit at residue 0 for modulus ``m`` and step ``a``."""
    if m < 1:
        raise ValueError(f"modulus must be >= 1, got {m}")
    return OrbitState(m=m, a=a)


def step(state: OrbitState) -> OrbitState:
    """Add ``a`` once (mod ``m``); a closed orbit is returned unchanged."""
    if state.closed:
        return state
    nxt = (state.visited[-1] + state.a) % state.m
    if nxt == 0:
        return replace(state, steps=state.steps + 1, closed=True)
    return replace(state, visited=(*state.visited, nxt), steps=state.steps + 1)


def run_to_close(state: OrbitState) -> OrbitState:
    """Step until the orbit closes (at most ``m`` steps)."""
    while not state.closed:
        state = step(state)
    return state


def period(m: int, a: int) -> int:
    """Period of the additive orbit: ``m // gcd(m, a)`` (``gcd(m, 0) = m`` gives 1)."""
    if m < 1:
        raise ValueError(f"modulus must be >= 1, got {m}")
    return m // math.gcd(m, a)


def prediction_holds(prediction: Prediction, state: OrbitState) -> bool | None:
    """Whether ``prediction`` matches the closed orbit; ``None`` while it is open."""
    if not state.closed:
        return None
    if prediction.kind == "all":
        return len(state.visited) == state.m
    return prediction.k == state.steps


def judge(prediction: Prediction, state: OrbitState) -> str | None:
    """Verdict sentence for ``prediction`` once the orbit is closed, else ``None``."""
    held = prediction_holds(prediction, state)
    if held is None:
        return None
    m, a, seen = state.m, state.a, len(state.visited)
    facts = f"{seen} of {m} residues appeared; the period is {state.steps} = {m} / gcd({m}, {a})."
    verdict = "held" if held else "did not hold"
    return f"Your prediction ({prediction.describe(m)}) {verdict}: {facts}"


def _parse_int(text: str | None, name: str) -> Parsed:
    """Parse a whole number written in ``text``, naming the field ``name`` in errors."""
    cleaned = (text or "").strip()
    if not cleaned:
        return Parsed(None, f"Enter {name} as a whole number.")
    try:
        return Parsed(int(cleaned), None)
    except ValueError:
        return Parsed(None, f"{name} must be a whole number such as 8; got {cleaned[:40]!r}.")


def parse_modulus(text: str | None) -> Parsed:
    """Parse the modulus ``m``: a whole number from 1 to :data:`MAX_MODULUS`."""
    parsed = _parse_int(text, "The modulus m")
    if not parsed.ok:
        return parsed
    m = parsed.value
    assert m is not None
    if m < 1:
        return Parsed(None, f"The modulus m must be at least 1; got {m}.")
    if m > MAX_MODULUS:
        return Parsed(
            None,
            f"The modulus m must be at most {MAX_MODULUS} (one point per degree on the "
            f"circle; larger circles are unreadable and Play would take minutes); got {m}.",
        )
    return parsed


def parse_step(text: str | None) -> Parsed:
    """Parse the step ``a``: a whole number with ``|a| <= MAX_STEP_MAGNITUDE``."""
    parsed = _parse_int(text, "The step a")
    if not parsed.ok:
        return parsed
    a = parsed.value
    assert a is not None
    if abs(a) > MAX_STEP_MAGNITUDE:
        return Parsed(
            None,
            f"The step a must lie between -{MAX_STEP_MAGNITUDE:,} and {MAX_STEP_MAGNITUDE:,} "
            f"(it is reduced modulo m anyway); got a number with {len(str(abs(a)))} digits.",
        )
    return parsed


def play_delay(raw: str | None) -> float:
    """Play delay in seconds from an env-style string; default 0.3, clamped to [0, 2]."""
    try:
        value = float(raw) if raw is not None and raw.strip() else DEFAULT_PLAY_DELAY
    except ValueError:
        value = DEFAULT_PLAY_DELAY
    if not math.isfinite(value):
        value = DEFAULT_PLAY_DELAY
    return min(max(value, 0.0), MAX_PLAY_DELAY)


def circle_xy(m: int) -> list[tuple[float, float]]:
    """Unit-circle coordinates of residues ``0..m-1``, 0 at the top, clockwise."""
    return [(math.sin(2 * math.pi * j / m), math.cos(2 * math.pi * j / m)) for j in range(m)]


class Exchange(NamedTuple):
    """One rank's exchange in a recursive-doubling round."""

    rank: int
    partner: int
    covered: frozenset[int]


def validate_ranks(p: int) -> None:
    """Raise ``ValueError`` unless ``p`` is a power of two with ``1 <= p <= MAX_RANKS``."""
    if isinstance(p, bool) or not isinstance(p, int):
        raise ValueError(f"p must be an integer power of two; got {p!r}.")
    if p < 1 or p & (p - 1):
        raise ValueError(f"Recursive doubling needs p to be a power of two; got {p}.")
    if p > MAX_RANKS:
        raise ValueError(f"p must be at most {MAX_RANKS}; got {p}.")


def partner_rounds(p: int) -> list[list[Exchange]]:
    """Recursive doubling on ``p`` ranks, read off its schedule (the one the ranks run).

    Round ``k`` pairs rank ``r`` with ``r ^ 2**k``; each rank's covered set becomes
    the union of its own and its partner's, so after round ``k`` every rank covers
    the aligned block of ``2**(k+1)`` ranks, and all ``p`` after ``log2 p`` rounds.
    """
    validate_ranks(p)
    schedule = ALGORITHMS["recursive_doubling"].required_schedule
    _, history = simulate(schedule, p, 1)
    steps = [{s.round: s for s in schedule(r, p, 1)} for r in range(p)]
    return [
        [Exchange(r, _partner(steps[r][key]), frozenset(history[r][key][0])) for r in range(p)]
        for key in sorted(history[0])
    ]


def _partner(step: Step) -> int:
    """The rank a recursive-doubling step exchanges with (it always names one)."""
    if step.send_to is None:
        raise ValueError(f"step {step} names no partner")
    return step.send_to


def format_ranks(ranks: frozenset[int] | set[int]) -> str:
    """Compact set notation, runs of three or more as ranges: ``{0, 1}``, ``{8..15}``."""
    ordered = sorted(ranks)
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{ordered[i]}..{ordered[j]}")
        else:
            parts.extend(str(r) for r in ordered[i : j + 1])
        i = j + 1
    return "{" + ", ".join(parts) + "}"
