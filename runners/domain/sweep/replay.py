"""Replaying a workload: which policies share a launch, and the job the ranks run (no MPI).

A replay runs the workload's calls in recorded order on real ranks, the whole sequence timed
as one job (a Barrier before it, none between its calls, as in the job), max over ranks. A
launch's environment decides what a library call runs, so policies are grouped by it:
- the library's plain launch: `default`, every policy of hand-written algorithms (their
  uncovered calls on the default), and `best` where it forces nothing;
- a launch forced by environment per policy of forced library algorithms (`mpi:ring`: MPICH's
  allreduce forced to ring for the whole launch, other collectives on their defaults);
- a launch following the tuning file per tuned policy (`mpi:tuned`).
A policy that runs two different library algorithms of one collective (best choosing
`mpi:ring` at one size and `mpi` at another) has no launch that does both: it is not replayed,
and the note says to write its choices as a tuning file (`collsweep tune`) and replay that. A
forced algorithm's policy keeps the default only where the algorithm cannot run, where the
forced launch falls back on its own: that is no conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from runners.domain.libraries import LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS, is_tuned, not_runnable_problem
from runners.domain.sweep.job_file import ReplayCall, ReplayJob
from runners.domain.workload.file import Call
from runners.domain.workload.policy import BEST_KIND, Policy

REPLAY_BUDGET_S = 1.0  # timed replays per launch and policy, about
MAX_REPETITIONS = 50


@dataclass
class ReplayLaunch:
    """The policies one launch replays: its library and the environment they need."""

    library: str
    env: dict[str, str]
    policies: dict[str, list[str]] = field(default_factory=dict)  # name -> algorithm per call


def _launch_env(policy: Policy, calls: Sequence[int], tuning_file: str) -> dict[str, str] | str:
    """The environment a policy's launch needs, or why no launch can run it.

    An algorithm policy's default stands in only where its algorithm did not run (the library
    cannot apply it there, and falls back on its own in a forced launch too), so only its own
    choices must agree per collective; best's defaults are choices like any other."""
    env: dict[str, str] = {}
    by_collective: dict[str, set[str]] = {}
    for i in calls:
        spec = ALGORITHMS[policy.choice(i)]
        if spec.library and (policy.own[i] or policy.kind == BEST_KIND):
            by_collective.setdefault(spec.collective, set()).add(spec.name)
        if is_tuned(spec.name):
            env |= LIBRARIES[spec.runs_on].tuning_env(tuning_file)
        elif spec.forced:
            env |= LIBRARIES[spec.runs_on].forcing_env(spec)
    mixed = [(c, names) for c, names in by_collective.items() if len(names) > 1]
    if mixed:
        collective, names = mixed[0]
        return (
            f"{policy.name} runs {' and '.join(sorted(names))} for {collective}: no one launch "
            f"does both; write its choices as a tuning file (collsweep tune) and replay that"
        )
    return env


def plan_replay(
    policies: Sequence[Policy], calls: Sequence[int], tuning_file: str
) -> tuple[list[ReplayLaunch], list[str]]:
    """The launches that replay every replayable policy over the call indices `calls`, and a
    note for each policy that cannot be replayed."""
    launches: dict[tuple[str, tuple], ReplayLaunch] = {}
    notes = []
    for policy in policies:
        if any(policy.choices[i] is None for i in calls):
            notes.append(f"{policy.name}: not replayed, some calls have no measured algorithm")
            continue
        imported_only = not_runnable_problem(str(policy.choices[i]) for i in calls)
        if imported_only:  # measured by another tool (NCCL's): no launch here can run it
            notes.append(f"{policy.name}: not replayed, {imported_only}")
            continue
        env = _launch_env(policy, calls, tuning_file)
        if isinstance(env, str):
            notes.append(env)
            continue
        key = (policy.library, tuple(sorted(env.items())))
        launch = launches.setdefault(key, ReplayLaunch(policy.library, env))
        launch.policies[policy.name] = [policy.choice(i) for i in calls]
    return list(launches.values()), notes


def repetitions(estimate_s: float) -> int:
    """Timed replays per launch for a job the points estimate at `estimate_s`."""
    if estimate_s <= 0:
        return MAX_REPETITIONS
    return max(1, min(MAX_REPETITIONS, int(REPLAY_BUDGET_S / estimate_s)))


def replay_job(
    calls: Sequence[Call], sequence: Sequence[int], launch: ReplayLaunch, index: int, reps: int
) -> ReplayJob:
    """The job file the ranks read (runners.ranks.replay_worker)."""
    return ReplayJob(
        calls=tuple(ReplayCall(c.collective, c.nbytes, c.dtype, c.op) for c in calls),
        sequence=tuple(sequence),
        policies={name: tuple(algorithms) for name, algorithms in launch.policies.items()},
        repetitions=reps,
        launch=index,
        library=launch.library,
    )
