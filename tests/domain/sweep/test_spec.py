"""Sweep specs: parsing, presets, overrides and every rejected input."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT

from runners.domain.sweep.plan import plan_groups, skipped_points
from runners.domain.sweep.spec import (
    SpecError,
    expand_sizes,
    load_spec,
    parse_spec,
    spec_from_mapping,
)

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
    assert spec.ranks == (3, 5) and spec.timing.budget_s == 2.0


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


def _sweep_args(*argv: str):
    from runners.cli.main import build_parser

    return build_parser().parse_args(["sweep", *argv])


def test_one_field_table_gives_the_file_keys_the_flags_and_resume() -> None:
    """SPEC_KEYS is read from SweepSpec's fields and its TimingPolicy's: every key is written
    once by to_toml, in the table's order; the timing policy's keys are flat in the file and
    nested in the spec; every flag (and its older alias) on the command line sets its key."""
    from runners.cli.spec_flags import spec_overrides
    from runners.domain.sweep.records import TimingPolicy
    from runners.domain.sweep.spec import SPEC_KEYS

    spec = parse_spec(BASE + "warmup = 7\npasses = 3\nlauncher_shell = true\n")
    written = [line.split(" = ")[0] for line in spec.to_toml().splitlines()]
    assert written == [key.name for key in SPEC_KEYS] and "timing" not in written
    assert spec.timing == TimingPolicy(warmup=7, passes=3) and spec.launcher_shell
    assert {k.name for k in SPEC_KEYS if k.within == "timing"} == set(TimingPolicy().as_dict())
    flagged = [key for key in SPEC_KEYS if key.flag]
    assert {k.name for k in SPEC_KEYS} - {k.name for k in flagged} == {
        "launch_calibration", "cells", "workload", "auto_points", "adaptive_points"
    }  # fmt: skip
    assert {k.name for k in SPEC_KEYS if k.resumable} == {
        "launcher", "launcher_shell", "point_timeout_s", "adaptive_budget"
    }  # fmt: skip
    old = {
        "--budget": "budget_s",
        "--target-ci": "target_rel_ci",
        "--point-timeout": "point_timeout_s",
    }
    assert {k.alias: k.name for k in SPEC_KEYS if k.alias} == old
    given = _sweep_args("--warmup", "4", "--budget", "0.5", "--sizes", "8:64", "--launcher-shell")
    overrides = spec_overrides(given)
    assert overrides == {
        "sizes": {"min": 8, "max": 64}, "warmup": 4, "budget_s": 0.5, "launcher_shell": True
    }  # fmt: skip
    changed = parse_spec(BASE, overrides)
    assert changed.timing.warmup == 4 and changed.timing.budget_s == 0.5
    assert changed.with_values(launches=1).timing == replace(changed.timing, launches=1)


def test_the_largest_values_come_from_the_table() -> None:
    from runners.domain.sweep.spec import SPEC_KEYS

    most = {k.name: k.most for k in SPEC_KEYS if k.most is not None}
    assert most["ranks"] == 4096 and most["launches"] == 1000
    for name, limit in most.items():
        value = [int(limit) * 2] if name in ("ranks", "sizes") else limit * 2
        with pytest.raises(SpecError, match=f"{name} must be at most"):
            spec_from_mapping({"sizes": [8], "ranks": [2], name: value})


def test_a_family_member_is_named_once_its_parameters_taken_from_the_nodes() -> None:
    nodes = "sizes = [8]\nranks = [4]\nranks_per_node = 2\nplacement = 'round-robin'\n"
    spec = parse_spec(nodes + "algorithms = ['hierarchical', 'hierarchical(leaders=ring)']\n")
    assert spec.algorithms == (
        "hierarchical(node=2,order=round-robin)",
        "hierarchical(node=2,leaders=ring,order=round-robin)",
    )
    assert parse_spec(spec.to_toml()) == spec  # a resumed run reads the same names
    flat = parse_spec(BASE + "algorithms = ['hierarchical(leaders = recursive_doubling,node=2)']")
    assert flat.algorithms == ("hierarchical(node=2)",)  # defaults left out: one name
    with pytest.raises(SpecError, match=r"hierarchical needs node=\.\.\. \(or ranks_per_node"):
        parse_spec(BASE + "algorithms = ['hierarchical']\n")


def test_radixes_make_a_member_of_each_algorithm_with_one() -> None:
    """`radixes` sweeps a member per radix of each algorithm that has one and names none; a
    named radix is kept; radix 2 is the family's default name; without such an algorithm, or
    below radix 2, the spec is refused in words."""
    spec = parse_spec(
        "sizes = [8]\nranks = [2]\nradixes = [2, 4]\n"
        'algorithms = ["knomial", "mpi:knomial", "ring", "knomial(radix=3)"]'
    )
    assert spec.algorithms == (
        "knomial", "knomial(radix=4)", "mpi:knomial", "mpi:knomial(radix=4)", "ring",
        "knomial(radix=3)",
    )  # fmt: skip
    assert parse_spec(spec.to_toml()) == spec
    with pytest.raises(SpecError, match="no algorithm swept has a radix"):
        parse_spec('sizes = [8]\nranks = [2]\nradixes = [4]\nalgorithms = ["ring"]')
    with pytest.raises(SpecError, match="radix must be an integer from 2"):
        parse_spec('sizes = [8]\nranks = [2]\nradixes = [1]\nalgorithms = ["knomial"]')


def test_segment_sizes_make_a_member_of_each_pipeline_and_combine_with_radixes() -> None:
    """`segment_sizes` (bytes or sizes in words) sweeps a member per size of each pipelined
    algorithm that names none, written in one form; it sets no radix and radixes no segment;
    without a pipeline, or below one byte, the spec is refused in words."""
    spec = parse_spec(
        "sizes = [8]\nranks = [2]\ncollectives = ['bcast', 'reduce']\n"
        "segment_sizes = [4096, '64KiB']\nradixes = [4]\n"
        'algorithms = ["bcast.chain", "reduce.chain(segment=1K)", "bcast.knomial"]'
    )
    assert spec.algorithms == (
        "bcast.chain(segment=4KiB)", "bcast.chain(segment=64KiB)", "reduce.chain(segment=1KiB)",
        "bcast.knomial(radix=4)",
    )  # fmt: skip
    assert parse_spec(spec.to_toml()) == spec
    with pytest.raises(SpecError, match="no algorithm swept has a segment"):
        parse_spec('sizes = [8]\nranks = [2]\nsegment_sizes = [4096]\nalgorithms = ["ring"]')
    with pytest.raises(SpecError, match="segment_sizes must be a list of sizes"):
        parse_spec("sizes = [8]\nranks = [2]\nsegment_sizes = [0]\nalgorithms = ['bcast.chain']")
