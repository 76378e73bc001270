"""Test hooks of the parent process: COLLSWEEP_FAULT=hold:<stage> parks a command at a named
stage until the file named by COLLSWEEP_FAULT_RELEASE exists, so that a test acts (sends a
signal, say) while the command is surely in that stage, whatever the machine's speed; the
command creates that name + ".held" once parked. Stages: analysis (before the analysis),
write-points (inside DuckDB's execution of a store write with points, before its COMMIT:
runners.store.writes), write-analysis (the same, storing a run's analysis), user-query (the
process of a user's SQL, its limits armed: runners.store.user_query), import-staged (`collsweep
import` with its staging store written, before it is merged: runners.jobs.importing),
sweep-created (a sweep with its run's row written, before its first launch), adaptive-round
(an adaptive sweep with a later round chosen and stored, before its sweep). The
ranks' own hooks (crash, hang, garble, hold at an algorithm) are runners.ranks.sweep_worker's.

Every hook does nothing unless the test suite enables them (COLLSWEEP_TEST_HOOKS=1, set by
tests/conftest.py) and, to park, names a release file: a stray COLLSWEEP_FAULT in a user's
environment never parks a command nor reaches the ranks (the launch drops it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

FAULT_ENV = "COLLSWEEP_FAULT"
RELEASE_ENV = "COLLSWEEP_FAULT_RELEASE"
HOOKS_ENV = "COLLSWEEP_TEST_HOOKS"


def hooks_enabled(env: Mapping[str, str] = os.environ) -> bool:
    """Whether the test suite turned the hooks on."""
    return env.get(HOOKS_ENV, "") == "1"


def without_disabled_hooks(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for a child process: the fault variables dropped unless the hooks are on."""
    if hooks_enabled(env):
        return dict(env)
    return {k: v for k, v in env.items() if k not in (FAULT_ENV, RELEASE_ENV)}


def holding(stage: str) -> bool:
    """Whether COLLSWEEP_FAULT asks to park at ``stage`` (and the hooks are on, with a release
    file named)."""
    return (
        hooks_enabled()
        and os.environ.get(FAULT_ENV, "") == f"hold:{stage}"
        and bool(os.environ.get(RELEASE_ENV, ""))
    )


def hold_at(stage: str) -> None:
    """Wait here while COLLSWEEP_FAULT is hold:<stage> and the release file is absent."""
    if not holding(stage):
        return
    release = os.environ[RELEASE_ENV]
    with open(release + ".held", "w"):
        pass
    while not os.path.exists(release):
        time.sleep(0.05)
