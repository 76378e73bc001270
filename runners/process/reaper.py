"""A watcher that cleans up after collsweep however it ends: `python -P -m runners.process.reaper
FOLDER` (no MPI).

A command that runs a program it did not write (`collsweep record`'s `mpiexec ...`) or fills a
staging folder (`collsweep import`) cannot clean up when it is killed outright (SIGKILL, the
OOM killer): its `finally` never runs, and the program's ranks and the folder stay behind. The
reaper is a small process of its own session that reads its standard input, where the command
writes the process groups it starts; when that pipe ends (the command closed it, or died: the
kernel closes it either way) the reaper kills those groups and removes the folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from runners.process.children import python


class Reaper:
    """The command's end of the pipe: the process groups to kill when the command ends."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc

    def watch(self, group: int) -> None:
        """Kill process group ``group`` when the command ends, however it ends."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{group}\n")
        self.proc.stdin.flush()


@contextlib.contextmanager
def reaped(folder: Path) -> Iterator[Reaper]:
    """A reaper for the block: ``folder`` and every group it is told to watch are gone once
    the block ends, or once this process dies inside it."""
    proc = subprocess.Popen(
        python("-m", "runners.process.reaper", str(folder)),
        stdin=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a terminal's Ctrl-C or hang-up reaches collsweep, not it
    )
    try:
        yield Reaper(proc)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait()


def main(argv: list[str]) -> int:
    """Read process groups until the pipe ends, then kill them and remove the folder."""
    folder = Path(argv[1])
    groups = [int(line) for line in sys.stdin if line.strip().isdigit()]
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
