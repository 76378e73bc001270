"""Stop signals held back while the store is in use, then acted on.

A command that turns stop signals into exceptions (Stopped, raised by its signal handler:
runners.jobs.sweep.signals_as_exceptions) must not have one raised in the middle of a store
operation: DuckDB runs Python's signal handlers while it executes, so the exception lands
inside DuckDB's own calls, the transaction is left aborted ("please ROLLBACK"), the exception
comes out as a DuckDB error or "Query interrupted", and a COMMIT may or may not have happened.
So inside `held()` (every store connection, runners.store) the handlers' Stopped is kept and
raised once the operation has committed or rolled back and closed its connection. Waits inside
a held block (for a busy store's lock) call `act_on_held` between attempts, so a stop still
ends them at once. Other exceptions from handlers (KeyboardInterrupt) pass as before. No MPI.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from runners.domain.errors import Stopped

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

_depth = 0  # how many held() blocks the main thread is in
_kept: Stopped | None = None  # the latest stop raised by a handler while held

Handler = Callable[[int, FrameType | None], object]


def _keeping(handler: Handler) -> Handler:
    """``handler``, with the Stopped it raises kept instead of raised."""

    def keep(signum: int, frame: FrameType | None) -> None:
        global _kept
        try:
            handler(signum, frame)
        except Stopped as stop:
            _kept = stop  # the latest wins: a second signal's ForceQuit over the first's

    return keep


def act_on_held() -> None:
    """Raise the stop kept so far, if any: called inside a held block where no store
    operation is half done (between attempts to open a busy store)."""
    global _kept
    stop, _kept = _kept, None
    if stop is not None:
        raise stop


@contextmanager
def held() -> Iterator[None]:
    """Keep back the Stopped that stop-signal handlers raise inside the block, and raise it
    when the outermost block ends, after whatever the block raised itself (which becomes its
    context). Only the main thread receives signals, so elsewhere this does nothing."""
    global _depth
    if _depth or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    _depth = 1
    try:
        for sig, handler in previous.items():
            if callable(handler):
                signal.signal(sig, _keeping(handler))
        yield
    finally:
        for sig, handler in previous.items():
            if callable(handler):
                signal.signal(sig, handler)
        _depth = 0
        act_on_held()
