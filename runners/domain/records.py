"""Typed records shared by the parent, the ranks and the store: a point's identity, the timing
policy.

No MPI here. The worker and the parent build the same PointKey from the same facts, so the
store's point_id has one definition; a resumed run writes the same ids again.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from runners.domain.catalog import ALGORITHMS, DTYPES
from runners.domain.launcher import is_oversubscribed
from runners.domain.stats import StopRule


@dataclass(frozen=True)
class PointKey:
    """One point of a run: algorithm x ranks x bytes x dtype x op."""

    run_id: str
    algorithm: str
    ranks: int
    nbytes: int
    dtype: str
    op: str

    def point_id(self) -> str:
        """The store's key of this point; the same facts always give the same id."""
        return f"{self.run_id}/{self.algorithm}/{self.ranks}/{self.nbytes}/{self.dtype}/{self.op}"

    def row(self) -> dict[str, Any]:
        """The identifying columns of this point's row in `points` ("bytes" there)."""
        forced = ALGORITHMS[self.algorithm].forced
        return {
            "point_id": self.point_id(),
            "run_id": self.run_id,
            "algorithm": self.algorithm,
            "library_config": f"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM={forced}" if forced else "",
            "ranks": self.ranks,
            "bytes": self.nbytes,
            "dtype": self.dtype,
            "op": self.op,
            "count": self.nbytes // DTYPES[self.dtype].itemsize,
            "oversubscribed": is_oversubscribed(self.ranks),
        }


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

    def pass_rule(self) -> StopRule:
        """The stop rule of one pass: the limits shared out over the passes."""
        return StopRule(
            min_iterations=max(1, math.ceil(self.min_iterations / self.passes)),
            max_iterations=max(1, math.ceil(self.max_iterations / self.passes)),
            target_rel_ci=self.target_rel_ci,
            budget_s=self.budget_s / self.passes,
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form, for the job file."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TimingPolicy:
        """The policy a job file carries."""
        return cls(**raw)
