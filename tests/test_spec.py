"""Sweep specs: parsing, presets, overrides and every rejected input."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from runners.domain.plan import plan_groups, skipped_points
from runners.domain.spec import SpecError, expand_sizes, load_spec, parse_spec

BASE = "sizes = [8, 64]\nranks = [2]\n"


@pytest.mark.parametrize("preset", ["quick.toml", "standard.toml"])
def test_presets_load_and_round_trip(preset: str) -> None:
    spec = load_spec(ROOT / "data" / preset)
    assert parse_spec(spec.to_toml()) == spec


def test_size_ranges_expand_geometrically() -> None:
    assert expand_sizes({"min": 8, "max": 4096, "factor": 8}) == (8, 64, 512, 4096)
    assert expand_sizes({"min": 4, "max": 20}) == (4, 8, 16)


def test_overrides_replace_file_values() -> None:
    spec = parse_spec(BASE, {"ranks": [3, 5], "budget_s": 2})
    assert spec.ranks == (3, 5) and spec.budget_s == 2.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BASE + 'algorithms = ["nope"]', "unknown algorithm nope"),
        (BASE + 'dtypes = ["complex64"]', "unknown dtype complex64"),
        (BASE + 'ops = ["xor"]', "unknown op xor"),
        ("sizes = [8]\nranks = [0]", "ranks must all be >= 1"),
        ('sizes = [6]\nranks = [2]\ndtypes = ["float64"]', "not a multiple of float64"),
        (BASE + "budget_s = -1", "budget_s must be >= 0"),
        (BASE + "sizes = [", "malformed TOML"),
        (BASE + "colour = 3", "unknown spec keys colour"),
        ("ranks = [2]", "missing sizes"),
        (BASE + 'cache_mode = "tepid"', "cache_mode"),
        (BASE + 'launcher = "mpiexec -n 4"', "{ranks}"),
        (BASE + 'libraries = ["ompi"]', "unknown library ompi; known: impi, mpich, openmpi"),
        (BASE + 'libraries = ["openmpi"]\nalgorithms = ["mpi:tree"]', "mpi:tree runs on mpich"),
        (BASE + 'libraries = ["mpich"]\nalgorithms = ["openmpi:ring"]', "not among libraries"),
        (BASE + 'libraries = ["openmpi"]\nlauncher = "srun -n {ranks}"', "their own mpiexec"),
    ],
)
def test_bad_specs_are_refused_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("{", r"\{").replace("}", r"\}")):
        parse_spec(text)


def test_plan_groups_one_job_per_ranks_and_library_configuration() -> None:
    spec = parse_spec(
        BASE + 'algorithms = ["ring", "mpi", "mpi:ring", "mpi:tree"]\n'
        'ops = ["sum", "first_nonzero"]'
    )
    groups = plan_groups(spec, "r", cores=8)
    assert [(g.ranks, g.config) for g in groups] == [(2, ""), (2, "ring"), (2, "tree")]
    forced = groups[1]
    assert forced.knobs["MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"] == "ring"
    assert forced.knobs["MPIR_CVAR_DEVICE_COLLECTIVES"] == "none"
    skipped = {(row.key.algorithm, row.key.op) for row in skipped_points(spec, "r", cores=8)}
    assert skipped == {("ring", "first_nonzero"), ("mpi:ring", "first_nonzero")}


def test_resume_plans_only_the_missing_points(tmp_path: Path) -> None:
    spec = parse_spec(BASE + 'algorithms = ["ring", "mpi"]')
    every = {pid for g in plan_groups(spec, "r", cores=8) for pid in g.points("r")}
    done = set(sorted(every)[:2])
    left = {pid for g in plan_groups(spec, "r", done, cores=8) for pid in g.points("r")}
    assert left == every - done


def test_mpich_names_stand_for_every_library_asked_for() -> None:
    """libraries = both: each MPICH name adds its Open MPI counterpart where there is one
    (MPICH's tree has none); Open MPI alone translates them; the spec reads back unchanged;
    Open MPI names alone bring their library; a repeated library counts once."""
    names = 'algorithms = ["ring", "mpi", "mpi:ring", "mpi:reduce_scatter_allgather", "mpi:tree"]'
    both = parse_spec(BASE + names + '\nlibraries = ["mpich", "openmpi", "mpich"]')
    assert both.libraries == ("mpich", "openmpi")
    assert both.algorithms == (
        "ring", "ring@openmpi", "mpi", "openmpi", "mpi:ring", "openmpi:ring",
        "mpi:reduce_scatter_allgather", "openmpi:rabenseifner", "mpi:tree",
    )  # fmt: skip
    assert parse_spec(both.to_toml()) == both
    alone = parse_spec(BASE + 'algorithms = ["ring", "mpi"]\nlibraries = ["openmpi"]')
    assert alone.algorithms == ("ring@openmpi", "openmpi")
    assert parse_spec(BASE + 'algorithms = ["openmpi:segmented_ring"]').libraries == ("openmpi",)
    assert parse_spec(BASE).libraries == ("mpich",)


def test_open_mpi_jobs_force_per_communicator_or_per_launch() -> None:
    """Runtime: one Open MPI job per group size beside MPICH's, its forced algorithms' MPI_T
    values for their communicators, dynamic rules on; launch: a job per forced algorithm with
    OMPI_MCA_ variables; Open MPI's fallbacks become skipped points with their reason."""
    text = BASE + 'algorithms = ["mpi", "mpi:ring"]\nlibraries = ["mpich", "openmpi"]'
    groups = {g.config: g for g in plan_groups(parse_spec(text), "r", switching="runtime", cores=8)}
    assert set(groups) == {"", "openmpi"} and groups["openmpi"].library == "openmpi"
    assert groups["openmpi"].switches == {
        "openmpi:ring": {
            "coll_tuned_allreduce_algorithm": 4,
            "coll_tuned_allreduce_algorithm_segmentsize": 0,
        }
    }
    assert groups["openmpi"].knobs["OMPI_MCA_coll_tuned_use_dynamic_rules"] == "1"
    by_launch = parse_spec(text + '\nlibrary_switching = "launch"')
    groups = {g.config: g for g in plan_groups(by_launch, "r", switching="launch", cores=8)}
    assert groups["openmpi:ring"].knobs["OMPI_MCA_coll_tuned_allreduce_algorithm"] == "4"
    assert groups["openmpi:ring"].switches == {}
    tiny = parse_spec('sizes = [4]\nranks = [3]\nalgorithms = ["openmpi:ring"]')
    [row] = (point.columns() for point in skipped_points(tiny, "r", cores=8))
    assert row["status"] == "skipped" and "recursive doubling" in row["reason"]
    assert row["library"] == "openmpi"
