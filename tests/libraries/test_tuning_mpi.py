"""A tuning file is honoured: real MPICH ranks run the algorithm it names on each side of a
boundary (counting user op), and a sweep times mpi:tuned with the file's provenance."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import synthetic
from helpers.fingerprints import mpich_calls

from runners import store
from runners.domain.libraries import mpich_tuning
from runners.domain.libraries.tuning import Band

pytestmark = pytest.mark.mpi

RD, RING = "mpi:recursive_doubling", "mpi:ring"


def reduction_calls(ranks: int, count: int, tuning_file: Path | None) -> dict[int, list[int]]:
    """Per rank, the element counts a counting user op received in one MPI_Allreduce."""
    return mpich_calls(ranks, count, mpich_tuning.tuning_knobs(tuning_file) if tuning_file else {})


def test_the_file_names_the_algorithm_on_each_side_of_a_boundary(tmp_path: Path) -> None:
    """p=4, float64: up to 4 KiB recursive doubling (the full count, log2 p times), above it
    ring (a quarter of the count, p-1 times); both differ from what MPICH picks without it."""
    path = synthetic.write_tuning_file(tmp_path, {4: [Band(4096, RD), Band(None, RING)]})
    below, above = 256, 1024  # 2 KiB and 8 KiB of float64
    assert reduction_calls(4, below, path) == {r: [256, 256] for r in range(4)}
    assert reduction_calls(4, above, path) == {r: [256, 256, 256] for r in range(4)}
    assert reduction_calls(4, above, None) != reduction_calls(4, above, path)
    swapped = synthetic.write_tuning_file(tmp_path, {4: [Band(4096, RING), Band(None, RD)]})
    assert reduction_calls(4, below, swapped) == {r: [64, 64, 64] for r in range(4)}


@pytest.mark.usefixtures("calibrated_store")
def test_a_sweep_times_mpi_tuned_in_its_own_launches_with_the_files_provenance(
    tmp_path: Path,
) -> None:
    path = synthetic.write_tuning_file(tmp_path, {2: [Band(64, RD), Band(None, None)]})
    db, spec = tmp_path / "s.duckdb", tmp_path / "spec.toml"
    spec.write_text(
        'sizes = [8, 8192]\nranks = [2]\nalgorithms = ["mpi", "mpi:recursive_doubling"]\n'
        "budget_s = 0.05\nmin_iterations = 4\nmax_iterations = 100\nlaunches = 2\n"
    )
    result = run_cli("sweep", str(spec), "--store", str(db), "--tuning-file", str(path))
    assert result.returncode == 0, result.stderr
    said = " ".join((result.stdout + result.stderr).split())  # the validation's own verdict
    assert "validation (the tuned entry against the library default, paired by launch):" in said
    verdicts = said.split("p=2 float32 sum: 8 B ", 1)[1].split("; 8 KiB ", 1)
    assert verdicts[0].split()[0] in ("faster", "slower", "within", "unknown")
    points = store.query(db, "SELECT algorithm, status, job, launches FROM points")
    tuned = points[points.algorithm == "mpi:tuned"]
    assert len(tuned) == 2 and set(tuned.status) == {"ok"} and set(tuned.launches) == {2}
    assert set(tuned.job) == {"ranks=2 config=mpi:tuned"}
    assert "mpi:tuned" not in set(points[points.job == "ranks=2 config=default"].algorithm)
    environment = json.loads(store.query(db, "SELECT environment FROM runs").environment[0])
    record = environment["tuning_file"]
    assert record["file_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    knobs = environment["jobs"]["ranks=2 config=mpi:tuned"]
    assert knobs[mpich_tuning.FILE_CVAR] == str(path.resolve())
    assert mpich_tuning.FILE_CVAR not in environment["jobs"]["ranks=2 config=default"]


def test_mpich_accepts_a_file_naming_every_forced_algorithm_of_every_collective(
    tmp_path: Path,
) -> None:
    """MPICH aborts at start-up on a leaf naming a function it does not have ("unrecognized
    key"): a file with a band for each of its forced algorithms of each collective loads, and a
    reduce-scatter under it still computes the right result."""
    from runners.domain.libraries import LIBRARIES
    from runners.domain.libraries.catalog import ALGORITHMS

    per_collective: dict[str, dict[int, list[Band]]] = {}
    for name, spec in ALGORITHMS.items():  # not the compositions: no MPIR leaf names one
        if spec.forced and spec.runs_on == "mpich" and LIBRARIES["mpich"].tunable(spec):
            bands = per_collective.setdefault(spec.collective, {2: []})[2]
            bands.append(Band(8 * (len(bands) + 1), name))
    for groups in per_collective.values():
        groups[2].append(Band(None, None))
    assert set(per_collective) == set(mpich_tuning.MPICH_COLLECTIVES)
    mpir, posix = mpich_tuning.mpich_tables({0: per_collective})
    path = tmp_path / "every.json"
    path.write_text(json.dumps(mpir))
    mpich_tuning.posix_path(path).write_text(json.dumps(posix))
    calls = mpich_calls(2, 64, mpich_tuning.tuning_knobs(path), "reduce_scatter")
    assert set(calls) == {0, 1}


def test_a_reduce_scatter_subtree_names_the_algorithm_on_each_side_of_a_boundary(
    tmp_path: Path,
) -> None:
    """p=4, float64, sized by the whole vector (total_msg_size): up to 4 KiB pairwise (a
    quarter of the count, p-1 times), above it recursive halving (a half, then a quarter);
    without the file MPICH runs recursive halving at 2 KiB."""
    pairwise, halving = "reduce_scatter.mpi:pairwise", "reduce_scatter.mpi:recursive_halving"
    per_ranks = {4: [Band(4096, pairwise), Band(None, halving)]}
    path = synthetic.write_tuning_file(tmp_path, per_ranks, "reduce_scatter")
    knobs = mpich_tuning.tuning_knobs(path)
    below, above = 256, 1024  # 2 KiB and 8 KiB of float64, the whole vector
    assert mpich_calls(4, below, knobs, "reduce_scatter") == {r: [64, 64, 64] for r in range(4)}
    assert mpich_calls(4, above, knobs, "reduce_scatter") == {r: [512, 256] for r in range(4)}
    assert mpich_calls(4, below, {}, "reduce_scatter") == {r: [128, 64] for r in range(4)}


@pytest.mark.parametrize(
    ("forced", "model", "ranks"),
    [
        ("mpi:knomial(radix=3)", "knomial(radix=3)", 5),
        ("mpi:chain(segment=1000)", "chain(segment=1000)", 5),
        ("mpi:recursive_multiplying(radix=4)", "recursive_multiplying(radix=4)", 4),
    ],
)
def test_a_file_naming_a_shape_runs_it(tmp_path: Path, forced: str, model: str, ranks: int) -> None:
    """A band naming mpi:knomial(radix=3) writes MPICH's tree leaf with k=3 and knomial_2, one
    naming mpi:chain(segment=1000) k=1, kary and chunk_size=1000, one naming
    mpi:recursive_multiplying(radix=4) its leaf with k=4: the counting op sees exactly the
    schedule's reductions (the parameter travels in the file, not only in the forced entry's
    environment)."""
    from runners.domain.libraries.catalog import ALGORITHMS

    path = synthetic.write_tuning_file(tmp_path, {ranks: [Band(None, forced)]})
    schedule = ALGORITHMS[model].schedule_at(8)  # float64
    expected = {r: [s.received for s in schedule(r, ranks, 1024) if s.reduce] for r in range(ranks)}
    assert reduction_calls(ranks, 1024, path) == expected
