"""When a run's winners are provisional: the machine was busy before the sweep or changed
state during it, so a winner may flip in the next run. The analysis applies the rule once and
stores it with every winners row; readers read it back (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runners.domain.verdict.assumptions import VIOLATED

UNSTABLE_CHECKS = ("quiet_machine", "stable_machine")


def provisional_reason(checks: Iterable[Mapping[str, Any]]) -> str:
    """Why a run's winners are provisional ('' when they are not): the run-level checks that
    say the machine was busy before the sweep or changed state during it, violated. A winner
    decided on such a machine may flip in the next run; `tune` will not use it unasked."""
    broken = [
        f"{row['name']}: {row['detail']}"
        for row in checks
        if row.get("name") in UNSTABLE_CHECKS
        and row.get("state") == VIOLATED
        and row.get("point_id") is None
    ]
    return "; ".join(broken)


def stored_reason(winners: Iterable[Mapping[str, Any]]) -> str | None:
    """The reason stored with a run's winners rows, None when they are not provisional."""
    return next((w.get("provisional_reason") or "" for w in winners if w.get("provisional")), None)


SHORT_WORDS = {
    "quiet_machine": "was busy before the sweep",
    "stable_machine": "changed state during it",
}


def short_reason(reason: str) -> str:
    """A stored reason in a few words, for a badge or a line: 'the machine was busy before the
    sweep' (the details stay in the reason, for an expander or `collsweep analyze`)."""
    said = [words for name, words in SHORT_WORDS.items() if f"{name}: " in reason]
    return "the machine " + " and ".join(said) if said else reason
