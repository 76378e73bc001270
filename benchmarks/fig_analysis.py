"""Figure 8: the analysis of a stored run, against a plain read of the same run.

Two synthetic runs (tests/helpers/synthetic.py, the demo store's generator) in a temporary store
with
a ping-pong calibration that has a gamma for every dtype/op they use: one the size of a
quick-preset run (the demo grid, 196 points) and one the size of a standard-preset run
(data/standard.toml's grid, 2,592 points). Each is analysed in this process as `collsweep
analyze` does (analysis.analyze_run: predictions, crossovers, winners, accuracy, assumptions,
all stored), timed against reading the run's points and raw samples from the same store, what
any command pays to look at the run. Targets (issue 28): the quick-sized run in at most 1 s,
the standard-sized one in at most 10 s. A smoke run analyses two small grids once, unjudged.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from benchmarks.common import ROOT, Check, Figure, log, median_time, table
from benchmarks.mode import Mode
from runners import store
from runners.analysis.run_analysis import analyze_run
from runners.domain.model.calibration_id import GammaKey
from runners.domain.sweep.spec import load_spec
from runners.store import run_reads

sys.path.insert(0, str(ROOT / "tests"))  # the synthetic store is a test fixture
from helpers import synthetic

TARGETS_S = {"quick-sized": 1.0, "standard-sized": 10.0}
SMOKE_GRID = {"ranks": (2, 3), "sizes": (8, 4096), "algorithms": ("ring", "mpi", "rabenseifner")}


def specs(mode: Mode) -> dict[str, synthetic.RunSpec]:
    """The two runs by label: the demo grid and the standard preset's grid (small in smoke)."""
    standard = load_spec(ROOT / "data" / "standard.toml")
    quick = synthetic.RunSpec(run_id="r20261203-080000-aaaa", samples=12)
    big = replace(
        quick,
        run_id="r20261203-090000-bbbb",
        ranks=standard.ranks,
        sizes=standard.sizes,
        dtypes=standard.dtypes,
        ops=standard.ops,
        algorithms=standard.algorithms,
        launches=standard.timing.launches,
    )
    if mode is Mode.SMOKE:
        quick, big = replace(quick, **SMOKE_GRID), replace(big, **SMOKE_GRID, dtypes=("int32",))
    return {"quick-sized": quick, "standard-sized": big}


def calibration(runs: dict[str, synthetic.RunSpec]) -> dict:
    """The synthetic ping-pong calibration, with a gamma for each dtype/op of the runs."""
    cal = synthetic.pingpong_calibration(synthetic.RunSpec().host)
    gamma = synthetic.GAMMA_S_PER_BYTE
    keys = {str(GammaKey(d, o)) for spec in runs.values() for d in spec.dtypes for o in spec.ops}
    return cal | {"gammas": {key: cal["gammas"].get(key, gamma) for key in sorted(keys)}}


def plain_read(path: Path, run_id: str) -> None:
    """What any command pays to look at a run: its points and raw samples."""
    run_reads.points_of(path, run_id)
    run_reads.samples_of(path, run_id)


def _quiet(line: str) -> None:
    """The analysis' progress lines are not part of the report."""


def measure(path: Path, label: str, spec: synthetic.RunSpec, mode: Mode) -> tuple[list, Check]:
    """Write one run, then time its plain read and its analysis: a table row and a check."""
    repeats = mode.pick(3, 1, 1)
    log(f"figure 8: writing the {label} run")
    synthetic.write_run(path, spec)
    points = len(run_reads.points_of(path, spec.run_id))
    read_s = median_time(lambda: plain_read(path, spec.run_id), repeats, warmup=False)
    log(f"figure 8: analysing the {label} run ({points} points)")
    analysis_s = median_time(lambda: analyze_run(path, spec.run_id, _quiet), repeats, warmup=False)
    ratio = f"{analysis_s / read_s:.0f}x"
    row = [label, points, f"{read_s:.2f}", f"{analysis_s:.2f}", ratio]
    target = TARGETS_S[label]
    ok = analysis_s <= target if mode.judged else None
    name = f"analysis of the {label} run ({points} points)"
    return row, Check(name, f"{analysis_s:.2f} s", f"<= {target:g} s", ok)


def run(mode: Mode) -> Figure:
    """Write both runs, then time each one's analysis against its plain read."""
    figure = Figure(8, "Analysis time", "reading the same run's points and samples")
    runs = specs(mode)
    with tempfile.TemporaryDirectory(prefix="collsweep-bench-") as folder:
        path = Path(folder) / "analysis.duckdb"
        store.add_calibration(path, calibration(runs))
        measured = [measure(path, label, spec, mode) for label, spec in runs.items()]
    figure.table = table(
        ["run", "points", "read (s)", "analysis (s)", "ratio"], [r for r, _ in measured]
    )
    figure.checks = [c for _, c in measured]
    figure.notes.append(
        f"median of {mode.pick(3, 1, 1)} analyses each, in this process (imports excluded); "
        "synthetic runs (tests/helpers/synthetic.py) on the demo grid and on "
        "data/standard.toml's grid"
    )
    return figure
