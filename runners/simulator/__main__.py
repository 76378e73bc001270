"""`python -P -m runners.simulator JOB.json`: simulate one share of a spec's points (SimGrid's
engine runs once per process, so `collsweep simulate` gives each core a share of its own).

The job file (runners.jobs.simulation writes it): {"platform": platform_json, "mode": ...,
"ranks": the most ranks of any point, "calls": [[index, SimulatedCall fields], ...]}. One JSON
line per point on stdout as it ends: index, simulated_s, predicted_s, mode, wall_s.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from runners.domain.errors import BadInput
from runners.domain.model.platform import platform_of_json
from runners.domain.sweep.simulation import SimulatedCall
from runners.simulator.engine import SimPoint, mode_for, point_of, simulate


def main(argv: list[str]) -> int:
    """Simulate the job file's calls, a line per point."""
    job = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    platform = platform_of_json(job["platform"])
    indices = [index for index, _ in job["calls"]]
    calls = [SimulatedCall(**fields) for _, fields in job["calls"]]
    done: list[int] = []
    last = [time.monotonic()]

    def told(point: SimPoint, seconds: float) -> None:
        call = calls[len(done)]
        line = {
            "index": indices[len(done)],
            "simulated_s": seconds,
            "predicted_s": call.predicted_s(platform, point.steps),
            "mode": mode_for(call.ranks, job["mode"]),
            "wall_s": time.monotonic() - last[0],
        }
        done.append(line["index"])
        print(json.dumps(line), flush=True)
        last[0] = time.monotonic()

    points = (point_of(c, platform) for c in calls)
    simulate(points, platform, job["mode"], ranks=job["ranks"], told=told)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BadInput as exc:
        print(f"collsweep simulate: error: {exc}", file=sys.stderr)
        sys.exit(2)
