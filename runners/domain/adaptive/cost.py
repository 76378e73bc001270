"""What measuring costs (no MPI): an adaptive sweep's estimate of a round against its budget
(runners.domain.sweep.adaptive_spec), and the bench's cost of a grid.

A point's cost is the time its timing policy lets it spend (runners.ranks.harness): every
launch and pass runs its warmup and its share of the least iterations whatever the budget, then
more until the precision target, the iteration limit or the budget (a point that meets its
target early spends less: this is what the policy allows, not a forecast of the stop). Every
launch of a group adds its start.
"""

from __future__ import annotations

from runners.domain.sweep.records import TimingPolicy

LAUNCH_START_S = 0.5  # an mpiexec's start and its ranks' set-up, measured on the demo
LAUNCH_CALIBRATION_S = 1.0  # a launch's own calibration (launch_calibration = true)


def launch_cost_s(launch_calibration: bool) -> float:
    """A launch's start, and its own calibration where the spec asks for one."""
    return LAUNCH_START_S + (LAUNCH_CALIBRATION_S if launch_calibration else 0.0)


def point_cost(timing: TimingPolicy, seconds_per_call: float) -> float:
    """The time a point's timing policy lets it spend, at this time per call: its least calls
    in every launch and pass, and beyond them up to its budget or its iteration limit."""
    rule, shares = timing.pass_rule(), timing.launches * timing.passes
    per_call = max(seconds_per_call, 0.0)
    least = shares * (timing.warmup + rule.min_iterations) * per_call
    most = (shares * timing.warmup + timing.max_iterations) * per_call
    return max(least, min(timing.budget_s, most))
