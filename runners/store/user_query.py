"""A user's SQL in a process of its own, so that its time and memory limits hold.

DuckDB's memory_limit bounds its buffer manager, not every allocation (a string function's
result: `SELECT length(repeat('x', 4000000000))` grew the process to 3.97 GB under a 1 GiB
limit), and it honours an interrupt only between steps (that query ran 48.6 s against a 30 s
limit). So `collsweep query` and the dashboard's SQL page run the statement in a child process:
once the store is open, its address space is capped (RLIMIT_AS) at what it uses then plus the
read memory limit plus HEADROOM_BYTES, so a larger allocation fails at once with the memory
limit's error; and GRACE_S after the time limit it is killed, whatever it is doing (by its own
watchdog and by the parent). The result comes back pickled: the child is collsweep's own code.
No MPI here.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

import pandas as pd

from runners.process.children import python
from runners.process.faults import hold_at
from runners.store.reads import open_readonly
from runners.store.storefile import (
    QueryError,
    QueryLimit,
    StoreBusy,
    StoreError,
    bounded_query,
    lock_timeout,
    read_only_config,
    set_read_memory_limit,
)

HEADROOM_BYTES = 256 * 2**20  # the result frame and its pickling, beside DuckDB's own limit
GRACE_S = 1.0  # after the time limit: DuckDB's interrupt has this long, then the kill
START_S = 120.0  # the child's imports on a slow machine, beside the wait for the store's lock
STARTED = b"started\n"
TIME_EXIT = 124  # the child's watchdog ended it
ERRORS = {cls.__name__: cls for cls in (QueryError, QueryLimit, StoreError)}


def run_user_query(
    path: Path | str, sql: str, *, time_limit: float, max_rows: int, memory_limit: str = ""
) -> pd.DataFrame:
    """Run one user's ``sql`` against the store in a child process bounded in time (killed
    GRACE_S after ``time_limit``), memory (``memory_limit``, DuckDB's syntax, default this
    process's read limit) and rows; as bounded_query, with the same errors."""
    request = {
        "path": str(path),
        "sql": sql,
        "time_limit": time_limit,
        "max_rows": max_rows,
        "memory_limit": memory_limit or read_only_config()["memory_limit"],
    }
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(
            python("-m", "runners.store.user_query"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        reply = None
        try:
            with contextlib.suppress(BrokenPipeError):  # a child that died at once: said below
                _pipe(child.stdin).write(json.dumps(request).encode())
                _pipe(child.stdin).close()
            reply = _reply(child, time_limit)
        finally:
            _end(child, GRACE_S if reply is not None else 0.0)
        return _result(reply, child.returncode, time_limit, str(request["memory_limit"]), errors)


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """One of the child's pipes (every one of them is opened: PIPE)."""
    if stream is None:
        raise QueryError("the query's child process has no pipe")
    return stream


def _end(child: subprocess.Popen, wait_s: float) -> None:
    """Wait up to ``wait_s`` for the child to exit (it does once its reply is out), then kill
    it."""
    try:
        child.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    _pipe(child.stdout).close()


def _reply(child: subprocess.Popen, time_limit: float) -> bytes | None:
    """The child's pickled reply; None when it overran its time limit (then killed)."""
    fd = _pipe(child.stdout).fileno()
    data = b""
    deadline = time.monotonic() + START_S + lock_timeout()
    started = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return data[len(STARTED) :] if started else data
        data += chunk
        if not started and data.startswith(STARTED):
            started = True  # the query runs from now on
            deadline = time.monotonic() + time_limit + GRACE_S


def _result(
    reply: bytes | None, status: int, time_limit: float, memory_limit: str, errors: IO[bytes]
) -> pd.DataFrame:
    """The frame the child sent, or its error raised here."""
    if reply is None or (status == TIME_EXIT and not reply):
        raise QueryLimit(f"the query was stopped after {time_limit:g} s (its time limit)")
    try:
        answer = pickle.loads(reply)
    except (pickle.UnpicklingError, EOFError, ValueError):  # ended before its reply was out
        errors.seek(0)
        said = errors.read()[-300:].decode(errors="replace").strip().splitlines()
        how = f"signal {-status}" if status < 0 else f"status {status}"
        raise QueryLimit(
            f"the query's process ended with {how} (past the read memory limit of "
            f"{memory_limit}?){': ' + said[-1] if said else ''}"
        ) from None
    if "frame" in answer:
        return answer["frame"]
    if answer["error"] == "StoreBusy":
        raise StoreBusy(answer["message"], answer["holder"])
    raise ERRORS[answer["error"]](answer["message"])


# --- the child -------------------------------------------------------------------------------


def _address_space() -> int:
    """This process's virtual memory size in bytes (VmSize), 0 where /proc does not say."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _cap_memory(limit_bytes: int) -> None:
    """Cap the address space at its present size plus the limit and the headroom (Linux)."""
    now = _address_space()
    if now:
        cap = now + limit_bytes + HEADROOM_BYTES
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))


def _limit_bytes(con: Any) -> int:
    """The connection's memory limit in bytes, as DuckDB reads it ('1.0 GiB')."""
    text = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    number, _, unit = text.partition(" ")
    units = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
    return int(float(number) * units.get(unit, 1))


def _answer(request: dict[str, Any], answers: IO[bytes]) -> dict[str, Any]:
    """Open the store, cap this process, say so on ``answers`` and run the query."""
    set_read_memory_limit(request["memory_limit"])
    with open_readonly(request["path"]) as con:
        _cap_memory(_limit_bytes(con))
        watchdog = threading.Timer(request["time_limit"] + GRACE_S, os._exit, [TIME_EXIT])
        watchdog.daemon = True
        watchdog.start()
        answers.write(STARTED)
        answers.flush()
        hold_at("user-query")
        frame = bounded_query(
            con, request["sql"], timeout_s=request["time_limit"], max_rows=request["max_rows"]
        )
    return {"frame": frame}


def main() -> None:
    """Read a request (JSON) on stdin, write the pickled answer on stdout, exit."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the parent's to act on
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what else writes to stdout (DuckDB's progress bar) goes with the errors
    request = json.loads(sys.stdin.read())
    try:
        reply = pickle.dumps(_answer(request, answers))
    except MemoryError:  # Python's own allocation met the cap
        reply = _error(QueryLimit(f"the query needs more than the read memory limit of "
                                  f"{request['memory_limit']}"))  # fmt: skip
    except StoreError as exc:
        reply = _error(exc)
    except Exception as exc:  # one line for the user, never a traceback from the child
        reply = _error(QueryError(f"{type(exc).__name__}: {exc}"))
    answers.write(reply)
    answers.close()
    os._exit(0)  # at once: the parent waits, and tearing down DuckDB and pandas takes a while


def _error(exc: StoreError) -> bytes:
    """The pickled answer that raises ``exc`` in the parent."""
    name = next((n for n in ("StoreBusy", *ERRORS) if type(exc).__name__ == n), "StoreError")
    return pickle.dumps({"error": name, "message": str(exc), "holder": getattr(exc, "holder", "")})


if __name__ == "__main__":
    main()
