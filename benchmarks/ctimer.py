"""The C baseline of figure 1: allreduce_timer.c, built with the wheel's mpicc at bench time.

Two builds of one source into benchmarks/build/: a shared library whose timing loop a
Python rank calls through ctypes on the harness's own buffers (what figure 1 uses), and a
stand-alone program for checking by hand:
    .venv/bin/mpiexec -n 2 benchmarks/build/allreduce_timer 100 8:1000 65536:1000
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from benchmarks.common import BUILD, ROOT, checked_lines, run_command, venv_tool

SOURCE = ROOT / "benchmarks" / "allreduce_timer.c"
PROGRAM = BUILD / "allreduce_timer"
LIBRARY = BUILD / "liballreduce_timer.so"


def _compile(target: Path, *flags: str) -> None:
    if target.exists() and target.stat().st_mtime >= SOURCE.stat().st_mtime:
        return
    argv = [venv_tool("mpicc"), "-O2", "-Wall", *flags, "-o", str(target), str(SOURCE)]
    checked_lines(run_command(argv, timeout=120), f"mpicc {SOURCE.name} -> {target.name}")


def build() -> Path:
    """Compile the program and the shared library unless they are newer than the source."""
    BUILD.mkdir(parents=True, exist_ok=True)
    _compile(PROGRAM)
    _compile(LIBRARY, "-shared", "-fPIC", "-DCOLLSWEEP_NO_MAIN")
    return LIBRARY


def loop(library: Path = LIBRARY):
    """The C timing loop as a Python callable (in a rank, after MPI is initialised).

    loop(send, recv, iterations, warmup) -> samples, each the max over ranks, in seconds.
    """
    func = ctypes.CDLL(str(library)).collsweep_time_allreduce
    func.restype = None
    func.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int] * 3 + [ctypes.c_void_p]

    def time_c(send: np.ndarray, recv: np.ndarray, iterations: int, warmup: int) -> np.ndarray:
        times = np.empty(iterations)
        func(send.ctypes.data, recv.ctypes.data, send.size, iterations, warmup, times.ctypes.data)
        return times

    return time_c
