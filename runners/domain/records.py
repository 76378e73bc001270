"""Typed records shared by the parent, the ranks and the store: a point's identity, the timing
policy.

No MPI here. The worker and the parent build the same PointKey from the same facts, so the
store's point_id has one definition; a resumed run writes the same ids again.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from runners.domain.stats import StopRule


@dataclass(frozen=True)
class PointKey:
    """One point of a run: algorithm (of its collective) x ranks x bytes x dtype x op."""

    run_id: str
    algorithm: str
    ranks: int
    nbytes: int
    dtype: str
    op: str

    def point_id(self) -> str:
        """The store's key of this point; the same facts always give the same id."""
        return f"{self.run_id}/{self.algorithm}/{self.ranks}/{self.nbytes}/{self.dtype}/{self.op}"


@dataclass(frozen=True)
class TimingPolicy:
    """How every point of a job is timed: the spec keys of the same names, in one record that
    the spec makes, the job file carries and the ranks' stop rule reads."""

    warmup: int = 5
    min_iterations: int = 10
    max_iterations: int = 1000
    target_rel_ci: float = 0.05
    budget_s: float = 0.5
    passes: int = 2
    cache_mode: str = "hot"
    launches: int = 3

    def pass_rule(self) -> StopRule:
        """The stop rule of one pass: the time and iteration limits shared out over the
        launches and passes; at least min_iterations in every launch (each launch is a whole
        measurement of its own)."""
        shares = self.passes * self.launches
        return StopRule(
            min_iterations=max(1, math.ceil(self.min_iterations / self.passes)),
            max_iterations=max(1, math.ceil(self.max_iterations / shares)),
            target_rel_ci=self.target_rel_ci,
            budget_s=self.budget_s / shares,
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form, for the job file."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TimingPolicy:
        """The policy a job file carries."""
        return cls(**raw)
