"""The CLI's output streams, made safe for a terminal: whatever a command prints (a table of
stored names, an error quoting a file) has its control characters made visible
(runners.domain.units.visible). The command's own cursor control (the live progress line) writes
through `raw_stderr()`, the one way around it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from runners.domain.units import visible


class VisibleStream:
    """A text stream that writes `visible(text)` to the stream it wraps; every other attribute
    (buffer, fileno, isatty, flush) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.underlying = stream

    def write(self, text: str) -> int:
        """Write `text` with its control characters made visible."""
        return self.underlying.write(visible(text))

    def writelines(self, lines: Any) -> None:
        """Write each line, made visible."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.underlying, name)


@contextmanager
def visible_output() -> Iterator[None]:
    """sys.stdout and sys.stderr wrapped in VisibleStream for the block."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleStream(saved[0]), VisibleStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def raw_stderr() -> TextIO:
    """stderr for the command's own control sequences (a live line rewritten in place)."""
    stream = sys.stderr
    return stream.underlying if isinstance(stream, VisibleStream) else stream
