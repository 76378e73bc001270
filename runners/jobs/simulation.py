"""Running a spec's simulated points on every core: a `python -P -m runners.simulator` child per
share (SimGrid's engine runs once per process), their lines gathered back in grid order."""

from __future__ import annotations

import json
import queue
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from runners.domain.errors import CollsweepError
from runners.domain.model.platform import Platform, platform_json
from runners.domain.sweep.simulation import SimulatedCall
from runners.process.children import python
from runners.process.lifetime import dies_with_parent

Told = Callable[[int, dict[str, Any]], None]


class SimulationFailed(CollsweepError):
    """A simulator child ended badly: its last words."""


def shares(count: int, workers: int) -> list[list[int]]:
    """Point indices dealt round-robin to ``workers`` (the grid's sizes and group sizes mix, so
    every share costs about the same)."""
    return [list(range(start, count, workers)) for start in range(min(workers, count))]


def run_simulation(
    calls: Sequence[SimulatedCall], platform: Platform, mode: str, workers: int, told: Told
) -> None:
    """Simulate every call on ``workers`` children; ``told(index, line)`` for each point in
    grid order, as soon as every point before it has ended."""
    with tempfile.TemporaryDirectory(prefix="collsweep-simulate-") as folder:
        children = [
            _start(Path(folder) / f"share-{n}.json", calls, share, platform, mode)
            for n, share in enumerate(shares(len(calls), workers))
        ]
        lines: queue.Queue[tuple[int, dict[str, Any]] | None] = queue.Queue()
        readers = [threading.Thread(target=_read, args=(c, lines), daemon=True) for c in children]
        for reader in readers:
            reader.start()
        try:
            _in_order(len(children), lines, told)
        finally:
            for child in children:
                if child.poll() is None:
                    child.terminate()
                child.wait()
        failed = [c for c in children if c.returncode != 0]
        if failed:
            words = (failed[0].stderr.read() if failed[0].stderr else "").strip()
            raise SimulationFailed(words.splitlines()[-1] if words else "a simulator child died")


def _start(
    path: Path, calls: Sequence[SimulatedCall], share: list[int], platform: Platform, mode: str
) -> subprocess.Popen[str]:
    job = {
        "platform": platform_json(platform),
        "mode": mode,
        "ranks": max(calls[i].ranks for i in share),
        "calls": [[i, asdict(calls[i])] for i in share],
    }
    path.write_text(json.dumps(job), encoding="utf-8")
    return subprocess.Popen(
        python("-m", "runners.simulator", str(path)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=dies_with_parent(),
    )


def _read(child: subprocess.Popen[str], lines: queue.Queue) -> None:
    """Every JSON line of one child, then None when its output ends."""
    assert child.stdout is not None
    for text in child.stdout:
        found = json.loads(text)
        lines.put((int(found.pop("index")), found))
    lines.put(None)


def _in_order(children: int, lines: queue.Queue, told: Told) -> None:
    """Tell each point once every point before it is told; until every child's output ends."""
    waiting: dict[int, dict[str, Any]] = {}
    following, ended = 0, 0
    while ended < children:
        item = lines.get()
        if item is None:
            ended += 1
            continue
        waiting[item[0]] = item[1]
        while following in waiting:
            told(following, waiting.pop(following))
            following += 1
