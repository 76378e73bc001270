"""Files people hand to collsweep (specs, workloads, traces, tuning files, imports): read
bounded, and only when they are regular files.

`read_input` opens without blocking and checks the opened file itself, so a FIFO, a device
(/dev/zero) or a socket is refused in one line instead of blocking or reading forever, and a
file past its limit is refused before it is read (and a file that grows while it is read,
after `limit` bytes). JSON nested deeper than `MAX_JSON_DEPTH` is refused once parsed, so no
reader of it can end in a RecursionError. No MPI.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from runners.domain.errors import BadInput

MAX_JSON_DEPTH = 64  # the deepest real input (a PARAM trace, an MPICH table) is under 12


class BadInputFile(BadInput):
    """A file that cannot be read as an input (exit 2): `what` it was to be, its `path`, and
    the `reason`."""

    def __init__(self, what: str, path: Path | str, reason: str) -> None:
        super().__init__(f"{what} {path}: {reason}")
        self.reason = reason


def read_input(path: Path | str, what: str, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; BadInputFile (one
    line naming `what` and the path) for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        raise BadInputFile(what, path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        _check_opened(fd, path, what, limit)
        data = _read_up_to(fd, limit + 1)
    except OSError as exc:
        raise BadInputFile(what, path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise BadInputFile(what, path, f"grew past {_size(limit)} while it was read")
    return data


def _check_opened(fd: int, path: Path | str, what: str, limit: int) -> None:
    """BadInputFile unless the opened file is a regular file of at most `limit` bytes."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise BadInputFile(what, path, "a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise BadInputFile(what, path, "not a regular file (a FIFO, device or socket)")
    if info.st_size > limit:
        raise BadInputFile(what, path, f"larger than {_size(limit)}")


def _read_up_to(fd: int, count: int) -> bytes:
    """At most `count` bytes from `fd`, fewer at its end."""
    chunks, left = [], count
    while left > 0:
        chunk = os.read(fd, min(left, 2**20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_text_input(path: Path | str, what: str, limit: int) -> str:
    """read_input's bytes as UTF-8 text; BadInputFile when they are not."""
    return _text(read_input(path, what, limit), what, path)


def _text(data: bytes, what: str, path: Path | str) -> str:
    """`data` as UTF-8 text; BadInputFile when it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputFile(what, path, f"not UTF-8 text (byte {exc.start})") from None


def load_json_bytes(data: bytes, what: str, path: Path | str) -> Any:
    """load_json_text of UTF-8 bytes already read; BadInputFile when they are not text."""
    return load_json_text(_text(data, what, path), what, path)


def load_json_text(text: str, what: str, path: Path | str) -> Any:
    """The JSON value of `text` (the input `what` at `path`); BadInputFile (one line) when it
    is not JSON or nests deeper than MAX_JSON_DEPTH (so no reader of it can recurse past
    Python's limit)."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else "nested too deep"
        raise BadInputFile(what, path, f"not JSON ({first})") from None
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise BadInputFile(what, path, f"not JSON collsweep reads (nested deeper than "
                           f"{MAX_JSON_DEPTH} levels)")  # fmt: skip
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and objects nest deeper than `limit` in `value` (walked without
    recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit} bytes"
