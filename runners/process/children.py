"""How our own Python children start: this interpreter with -P, so a child never imports from
the working directory (a `json.py` beside a user's files must not run inside collsweep)."""

from __future__ import annotations

import sys


def python(*args: str) -> list[str]:
    """The command line of a Python child of ours: `python -P ARGS` (no cwd on sys.path)."""
    return [sys.executable, "-P", *args]
