"""`auto` parameters: a name such as `bcast.chain(segment=auto)` stands in until `collsweep
sweep` chooses, at each point, the model's best member on the run's calibration and its
neighbours by a factor of 2, and measures them there alone; every other command refuses it in
one line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import run_cli
from helpers.sweep_runs import QUICK

from runners import store
from runners.analysis.auto_parameters import chosen_members
from runners.analysis.libraries import spec_params
from runners.analysis.params import Params
from runners.domain.algorithms.parameters import split_name
from runners.domain.algorithms.segments import SEGMENT
from runners.domain.libraries.catalog import ALGORITHMS, canonical_name
from runners.domain.sweep.plan import grid
from runners.domain.sweep.spec import parse_spec

ALPHA, BETA = 5e-6, 1e-9


def test_an_auto_name_stands_in_with_what_every_member_shares_and_nothing_to_run() -> None:
    spec = ALGORITHMS[canonical_name("mpi:chain(segment=auto)", {})]
    assert spec.auto and spec.library and spec.collective == "allreduce"
    assert spec.schedule is None and spec.settings == () and spec.modelled_by == ""
    with pytest.raises(ValueError, match="node must be an integer"):
        canonical_name("hierarchical(node=auto)", {})  # only where a parameter allows it


def test_the_members_chosen_at_a_point_bracket_the_closed_forms_best_segment() -> None:
    """p=64, 1 MiB, alpha 5 us, beta 1 ns/B: b* = sqrt(n alpha / ((p-2) beta)) = 9.2 KiB; the
    chosen members are the powers of two around it, a factor of 2 apart."""
    params = Params("c1", "pingpong", ALPHA, BETA, gammas={"float32/sum": 1e-10})
    chosen = chosen_members(params, "bcast.chain(segment=auto)", 64, 1 << 20, "float32", ("sum",))
    sizes = [ALGORITHMS[m].description.split("segments of ")[1].split(":")[0] for m in chosen]
    assert len(chosen) == 3 and sizes == ["4 KiB", "8 KiB", "16 KiB"]
    best = math.sqrt((1 << 20) * ALPHA / (62 * BETA))
    assert 8192 <= best <= 16384
    radixes = chosen_members(params, "recursive_multiplying(radix=auto)", 8, 8, "float32", ("sum",))
    assert radixes == ["recursive_multiplying", "recursive_multiplying(radix=4)"]  # 4 folds on 8


def test_a_spec_of_chosen_points_measures_each_member_there_alone() -> None:
    text = (
        "sizes = [4096, 65536]\nranks = [2]\nalgorithms = ['ring', 'chain(segment=4KiB)']\n"
        "auto_points = [['chain(segment=4KiB)', 2, 4096, 'float32']]\n"
    )
    spec = parse_spec(text)
    measured = {(alg, nbytes) for _, alg, _, nbytes, _ in grid(spec)}
    assert measured == {("ring", 4096), ("ring", 65536), ("chain(segment=4KiB)", 4096)}
    assert parse_spec(spec.to_toml()) == spec  # a resumed run plans the same points


@pytest.mark.mpi
def test_a_sweep_chooses_measures_and_keeps_its_choice(
    tmp_path: Path, calibrated_store: Path
) -> None:
    """p=2, 4 KiB and 64 KiB: the sweep says what it chose, measures the chosen members at
    their sizes alone (the model's best on the run's calibration and a neighbour by 2x: at p=2
    a pipeline only adds messages, so one segment, the payload, unless the short calibration
    the suite allows is noisy), keeps the choice in the stored spec (no `auto` left), and a
    resume finds nothing to measure."""
    db, spec_file = calibrated_store, tmp_path / "auto.toml"
    spec_file.write_text(
        QUICK.replace('["recursive_doubling", "ring", "mpi"]', '["bcast.chain(segment=auto)"]')
        + "sizes = [4096, 65536]\nlaunches = 1\n"
    )
    done = run_cli("sweep", str(spec_file), "--store", str(db))
    assert done.returncode == 0, done.stderr
    assert "auto: bcast.chain(segment=auto) measured as" in done.stderr
    points = store.query(db, "SELECT algorithm, bytes, status FROM points")
    measured = {(r.algorithm, r.bytes) for r in points.itertuples()}
    assert set(points.status) == {"ok"}
    [(run_id, spec_toml, calibration_id)] = store.query(
        db, "SELECT run_id, spec_toml, calibration_id FROM runs"
    ).itertuples(index=False)
    spec = parse_spec(spec_toml)
    params = spec_params(db, spec, store.get_calibration(db, calibration_id))
    for nbytes in (4096, 65536):
        chosen = chosen_members(
            params, "bcast.chain(segment=auto)", 2, nbytes, spec.dtypes[0], spec.ops
        )
        assert {m for m, n in measured if n == nbytes} == set(chosen)
        segments = sorted(_segment(m) for m in chosen)
        assert len(segments) == 2 and segments[1] == 2 * segments[0]
    assert "auto_points" in spec_toml and "=auto" not in spec_toml
    again = run_cli("sweep", "--resume", run_id, "--store", str(db))
    assert again.returncode == 0 and "nothing to measure" in again.stdout, again.stderr


def _segment(member: str) -> int:
    return SEGMENT.number(split_name(member)[1].get("segment", SEGMENT.default))


@pytest.mark.parametrize("command", ["verify", "simulate", "predict"])
def test_other_commands_refuse_auto_in_one_line(command: str) -> None:
    argv = {
        "verify": ["verify", "--ranks", "2", "--algorithms", "chain(segment=auto)"],
        "simulate": ["simulate", "--ranks", "8", "--sizes", "1M", "--algorithms",
                     "knomial(radix=auto)", "--no-store"],
        "predict": ["predict", "--algorithm", "bcast.chain(segment=auto)", "--ranks", "8",
                    "--bytes", "1M"],
    }[command]  # fmt: skip
    done = run_cli(*argv)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "auto is chosen by `collsweep sweep`" in done.stderr
