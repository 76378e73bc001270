"""The one error type collsweep raises for the person running it, with the exit status it means.

Every module raises a subclass of CollsweepError with a message meant for users; `collsweep`'s
main prints it as one line and exits with its `exit_status`. Bad input (exit 2) is found before
any rank starts and before anything is written; other failures exit 1. No MPI here.
"""

from __future__ import annotations

import signal


class CollsweepError(Exception):
    """A problem worded for the person running collsweep; the CLI exits with `exit_status`."""

    exit_status = 1


class BadInput(CollsweepError):
    """Input that cannot run: refused before any rank starts, nothing written (exit 2)."""

    exit_status = 2


class Stopped(Exception):
    """A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) reached a command that turns signals
    into exceptions (runners.jobs.sweep.signals_as_exceptions); code that catches every
    Exception to carry on must let this one through. Its text is the signal's name."""

    @property
    def signal_status(self) -> int:
        """128 + the signal's number: how a shell reports a command that signal ended."""
        return 128 + int(getattr(signal, str(self), signal.SIGTERM))
