"""`benchmarks/run.py --smoke`: every figure still runs (tiny sizes, one round, the fewest ranks),
and a figure that breaks fails the run instead of only printing ERROR in its report.

One smoke test per figure, so that a failure names the figure; they launch ranks and sweeps.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT))  # benchmarks/ is a folder of the repository, not installed
from benchmarks import run
from benchmarks.common import Check, Figure
from benchmarks.mode import Mode


@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.parametrize("number", sorted(run.FIGURES), ids=lambda n: f"figure-{n}")
def test_the_figure_runs_in_smoke_mode(number: int) -> None:
    """The figure ends without an error, with its table, and judges none of its checks."""
    figure, _ = run.run_figure(number, Mode.SMOKE, settle_s=0)
    assert not figure.error, f"figure {number}: {figure.error}"
    assert figure.table, f"figure {number} printed no table"
    assert [c.verdict for c in figure.checks] == ["INFO"] * len(figure.checks)


def _broken(mode: Mode) -> Figure:
    raise KeyError("busbw_gbps")


def _missing(mode: Mode) -> Figure:
    """A figure that runs but misses its one target."""
    return Figure(2, "Missing", "none", table=["a table"], checks=[Check("c", "2", "<= 1", False)])


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Figure 1 raises, figure 2 misses its target; no waiting for an idle machine."""
    monkeypatch.setattr(run, "FIGURES", {1: ("Broken", _broken), 2: ("Missing", _missing)})
    monkeypatch.setattr(run.load, "sample", lambda: 0.0)


@pytest.mark.parametrize("options", [[], ["--quick"], ["--smoke"], ["--strict"]])
def test_a_figure_in_error_fails_the_run_and_is_named(
    figures: None, options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit status 1 in every mode, with or without --strict; stderr names the figure."""
    assert run.main(["--settle", "0", *options]) == 1
    err = capsys.readouterr().err
    assert "ERROR in figure 1: KeyError: 'busbw_gbps'" in err
    assert "in figure 2" not in err


@pytest.mark.parametrize(
    ("options", "status"),
    [([], 0), (["--strict"], 1), (["--quick", "--strict"], 1), (["--smoke", "--strict"], 0)],
)
def test_a_missed_target_fails_only_a_strict_run_that_judges(
    figures: None, options: list[str], status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """--strict fails on a MISS; a smoke run judges nothing, so it has none to fail on."""
    assert run.main(["--only", "2", "--settle", "0", *options]) == status
    report = capsys.readouterr().out
    assert ("INFO  c" if "--smoke" in options else "MISS  c") in report
