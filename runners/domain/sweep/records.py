"""Typed records shared by the parent, the ranks and the store: a point's identity, the timing
policy.

No MPI here. The worker and the parent build the same PointKey from the same facts, so the
store's point_id has one definition; a resumed run writes the same ids again.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from runners.domain.sweep.spec_keys import spec_key
from runners.domain.sweep.stats import StopRule


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
    """How every point of a job is timed: the spec keys of the same names (their flags and help
    with them, runners.domain.sweep.spec_keys), in one record that the spec nests, the job file
    carries and the ranks' stop rule reads."""

    warmup: int = spec_key(
        5, flag="--warmup", help="untimed calls before timing each point and pass", most=100_000
    )
    min_iterations: int = spec_key(
        10, flag="--min-iterations", help="timed iterations at least (per launch)", most=10**7
    )
    max_iterations: int = spec_key(
        1000, flag="--max-iterations", help="timed iterations at most (all launches)", most=10**7
    )
    target_rel_ci: float = spec_key(
        0.05,
        flag="--target-rel-ci",
        alias="--target-ci",
        help="stop once the median's 95% CI half-width is within this fraction of the median, "
        "e.g. 0.05",
    )
    budget_s: float = spec_key(
        0.5,
        flag="--budget-s",
        alias="--budget",
        help="seconds of timing per point (all launches and passes)",
        most=3600.0,
    )
    passes: int = spec_key(
        2, flag="--passes", help="interleaved passes over the algorithms (drift control)", most=100
    )
    cache_mode: str = spec_key(
        "hot",
        flag="--cache-mode",
        help="hot: one reused buffer; cold: rotate buffers larger than the last-level cache",
    )
    launches: int = spec_key(
        3,
        flag="--launches",
        help="separate MPI launches per job, visiting the grid in rounds (launch-to-launch "
        "variation)",
        most=1000,
    )

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
