"""How much a benchmark run measures: full, quick, or smoke (does every figure still run?)."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from benchmarks.common import ROOT
from runners.domain.sweep.spec import SweepSpec, load_spec

T = TypeVar("T")
PRESET = ROOT / "data" / "quick.toml"
# The quick preset cut to the bone: enough for every figure's code to run, nothing to judge.
SMOKE_PRESET = {
    "ranks": (2,),
    "sizes": (8, 4096),
    "algorithms": ("recursive_doubling", "ring", "mpi", "mpi:ring"),
    "warmup": 1,
    "min_iterations": 5,
    "max_iterations": 50,
    "budget_s": 0.05,
    "passes": 1,
    "launches": 1,
    "launch_calibration": False,
}


class Mode(StrEnum):
    """full: every figure as specified; quick: fewer repeats and smaller grids; smoke: tiny
    sizes, one round, the fewest ranks, and checks reported but not judged."""

    FULL = "full"
    QUICK = "quick"
    SMOKE = "smoke"

    def pick(self, full: T, quick: T, smoke: T) -> T:
        """This mode's value of a setting."""
        return {Mode.FULL: full, Mode.QUICK: quick, Mode.SMOKE: smoke}[self]

    @property
    def judged(self) -> bool:
        """Whether checks are held against their targets (not in a smoke run)."""
        return self is not Mode.SMOKE

    def preset(self) -> SweepSpec:
        """The quick preset as the figures that sweep it (3, 6, 7) run it in this mode."""
        spec = load_spec(PRESET)
        return self.pick(spec, replace(spec, ranks=(2,)), spec.with_values(**SMOKE_PRESET))

    def preset_label(self) -> str:
        """How the preset was run, for a figure's baseline and notes."""
        return PRESET.name + self.pick("", " --ranks 2", " cut down to a smoke test")


def write_spec(spec: SweepSpec, folder: Path) -> Path:
    """`spec` as a TOML file in `folder`, named as the preset, for `collsweep sweep`."""
    path = folder / PRESET.name
    path.write_text(spec.to_toml(), encoding="utf-8")
    return path
