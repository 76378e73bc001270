"""The prepared script for a lent device machine (16 CPU cores): emulated nodes for real.

`python benchmarks/device_nodes.py` sweeps data/device_nodes.toml with 16 ranks as one host, as
2 nodes x 8 and as 4 nodes x 4 (block), then 4 x 4 in round-robin placement, into a fresh store
under device-results/, each run with its calibration of both levels, analysis (the two_level
model's accuracy: --verbose) and verdict, the placements compared at the end. About 8 minutes
on 16 cores; bring back the store and the log it names.

`--rehearse` runs the same steps at p=2 (one host, then 2 nodes x 1) with a tenth of the
budget: what this 2-core machine can check of the script before a device is lent.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "data" / "device_nodes.toml"
CORES = 16
QUICKLY = ["--budget-s", "0.015", "--launches", "2", "--sizes", "8:4M:64"]


def sweeps(rehearse: bool) -> list[list[str]]:
    """The sweeps to run, each a list of `collsweep sweep` arguments after the spec."""
    if rehearse:
        return [
            ["--ranks", "2", "--ranks-per-node", "0,1", *QUICKLY],
            ["--ranks", "2", "--ranks-per-node", "1", "--placement", "round-robin", *QUICKLY],
        ]
    return [
        ["--name", "device"],
        ["--name", "device-rr", "--ranks-per-node", "4", "--placement", "round-robin"],
    ]


def main(argv: list[str] | None = None) -> int:
    """Run the device's sweeps; 2 when this machine has too few cores for them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rehearse", action="store_true", help="p=2 on this machine")
    parser.add_argument("--out", type=Path, default=ROOT / "device-results")
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    if cores < CORES and not args.rehearse:
        print(f"device_nodes: {cores} cores here, {CORES} needed (or --rehearse)", file=sys.stderr)
        return 2
    out = args.out / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True)
    collsweep = str(Path(sys.executable).with_name("collsweep"))
    with (out / "log.txt").open("w") as log:
        for words in sweeps(args.rehearse):
            command = [collsweep, "sweep", str(SPEC), "--store", str(out / "s.duckdb"),
                       "--verbose", *words]  # fmt: skip
            print("$", " ".join(command), file=log, flush=True)
            done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
            if done.returncode != 0:
                print(f"device_nodes: a sweep failed (exit {done.returncode}): {out}/log.txt")
                return 1
    print(f"device_nodes: done; bring back {out}/s.duckdb and {out}/log.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
