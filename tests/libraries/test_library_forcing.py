"""A forced MPICH algorithm is really the one that runs, and a fallback is never hidden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from helpers.fingerprints import mpich_calls, planned_calls

from runners import store
from runners.domain.libraries import switching
from runners.domain.libraries.catalog import library_knobs
from runners.domain.sweep import launcher
from runners.host.machine import physical_cores
from runners.jobs import launch

pytestmark = pytest.mark.mpi


def reduction_calls(forced: str, ranks: int = 4, count: int = 1024) -> dict[int, list[int]]:
    """Per rank, the element counts MPI_Allreduce passed to a counting user op."""
    return mpich_calls(ranks, count, library_knobs(f"mpi:{forced}"))


def test_forced_recursive_doubling_reduces_the_full_count_log2_p_times() -> None:
    assert reduction_calls("recursive_doubling") == {r: [1024, 1024] for r in range(4)}


def test_forced_ring_reduces_one_block_p_minus_1_times() -> None:
    assert reduction_calls("ring") == {r: [256, 256, 256] for r in range(4)}


def test_forced_tree_reduces_only_on_inner_nodes() -> None:
    calls = reduction_calls("tree")
    assert calls[0] and all(c == 1024 for c in calls[0])
    assert any(not c for c in calls.values())  # leaves reduce nothing


@pytest.mark.parametrize("forced", ["recursive_doubling", "ring"])
def test_fingerprints_differ_from_each_other(forced: str) -> None:
    other = {"recursive_doubling": "ring", "ring": "recursive_doubling"}[forced]
    assert reduction_calls(forced) != reduction_calls(other)


def runtime_calls(*algorithms: str, ranks: int = 4, count: int = 1024) -> tuple[list, str]:
    """Per algorithm switched through MPI_T in one launch, each rank's counting-op calls."""
    knobs = {
        **launcher.default_knobs(ranks, cores=physical_cores()),
        **switching.FALLBACK_KNOB,
        "PYTHONPATH": f"{ROOT / 'tests' / 'mpi_programs'}:{ROOT}",
    }
    args = [str(count), *algorithms]
    result = launch.run(launch.Job(ranks, "runtime_fingerprint", args, knobs), 120)
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("[")]
    rows = json.loads(line)
    assert all(row[a]["ok"] for row in rows for a in algorithms)
    return [{a: row[a]["calls"] for a in algorithms} for row in rows], result.stderr


def test_mpi_t_switches_each_algorithm_within_one_launch_and_back_to_auto() -> None:
    """The enum values runners.domain.libraries.switching uses, proven by their fingerprints: the
    same
    patterns as the environment forcing above, alternating in one launch."""
    order = ("mpi:ring", "mpi", "mpi:recursive_doubling", "mpi:tree", "mpi:ring", "mpi")
    per_rank, _ = runtime_calls(*dict.fromkeys(order))
    env = {a: reduction_calls(a.partition(":")[2]) for a in order if ":" in a}
    for rank, calls in enumerate(per_rank):
        assert calls["mpi:ring"] == [256, 256, 256] == env["mpi:ring"][rank]
        assert calls["mpi:recursive_doubling"] == [1024, 1024]
        assert calls["mpi:tree"] == env["mpi:tree"][rank]
    assert [c["mpi:tree"] for c in per_rank] != [c["mpi:recursive_doubling"] for c in per_rank]


def test_mpi_t_reduce_scatter_allgather_is_named_by_mpich_itself() -> None:
    """A user op cannot run reduce_scatter_allgather (MPICH wants a built-in op), so MPICH
    prints that this algorithm, by name, cannot be applied: the value is that algorithm."""
    _, stderr = runtime_calls("mpi:reduce_scatter_allgather")
    assert "Allreduce reduce_scatter_allgather cannot be applied" in stderr


def sweep(tmp_path: Path, grid: str, timing: str) -> Path:
    """Run a sweep of the spec text to completion; the store it wrote."""
    db, spec = tmp_path / "s.duckdb", tmp_path / "spec.toml"
    spec.write_text(grid + timing)
    result = run_cli("sweep", str(spec), "--store", str(db), timeout=300)
    assert result.returncode == 0, result.stderr
    return db


@pytest.mark.usefixtures("calibrated_store")
@pytest.mark.parametrize("how", ["runtime", "launch"])
def test_a_sweep_records_mpich_falling_back_instead_of_timing_it(tmp_path: Path, how: str) -> None:
    db = sweep(
        tmp_path,
        'sizes = [8, 4096]\nranks = [4]\nalgorithms = ["mpi:reduce_scatter_allgather"]\n',
        "budget_s = 0.05\nmin_iterations = 4\nmax_iterations = 40\nlaunches = 1\n"
        f"library_switching = {how!r}\n",
    )
    rows = store.query(
        db, "SELECT bytes, status, reason, library_config FROM points ORDER BY bytes"
    )
    small, large = rows.to_dict("records")
    assert small["status"] == "skipped" and "fell back" in small["reason"]  # 2 floats < p
    assert large["status"] == "ok"
    label = "MPI_T" if how == "runtime" else "env"
    assert (
        large["library_config"]
        == f"{label} MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=reduce_scatter_allgather"
    )


@pytest.mark.usefixtures("calibrated_store")
@pytest.mark.parametrize(("how", "jobs"), [("runtime", 1), ("launch", 2)])
def test_forced_algorithms_share_the_launches_when_switched_at_run_time(
    tmp_path: Path, how: str, jobs: int
) -> None:
    """runtime: one job per group size, the forced algorithm switched through MPI_T, so every
    comparison is paired within a launch; launch: a job of its own, paired by round."""
    db = sweep(
        tmp_path,
        'sizes = [8, 65536]\nranks = [2]\nalgorithms = ["ring", "mpi", "mpi:ring"]\n',
        "budget_s = 0.1\nmin_iterations = 4\nmax_iterations = 200\nlaunches = 2\n"
        f"library_switching = {how!r}\n",
    )
    points = store.query(db, "SELECT algorithm, job, library_config, launches FROM points")
    assert points.job.nunique() == jobs and set(points.launches) == {2}
    forced = points[points.algorithm == "mpi:ring"].library_config.unique().tolist()
    assert forced == [f"{'MPI_T' if how == 'runtime' else 'env'} {switching.ALGORITHM_CVAR}=ring"]
    environment = json.loads(store.query(db, "SELECT environment FROM runs").environment[0])
    assert environment["library_switching"]["mode"] == how
    pairs = store.query(db, "SELECT winner, runner_up, pairing FROM winners")
    for row in pairs.itertuples(index=False):
        shared = how == "runtime" or "mpi:ring" not in (row.winner, row.runner_up)
        assert row.pairing == ("same launch" if shared else "same round"), row


def collective_calls(algorithm: str, collective: str) -> dict[int, list[int]]:
    """Per rank, the counting op's calls in one MPICH `collective` of 1024 float64 on 4 ranks
    with `algorithm` forced as a sweep forces it (by environment, a launch of its own)."""
    return mpich_calls(4, 1024, library_knobs(algorithm), collective)


def test_forced_reduce_scatter_algorithms_leave_their_own_fingerprints() -> None:
    """Recursive halving reduces half the vector, then a quarter; pairwise exchange reduces
    one block p-1 times (MPICH's reduce-scatter by name, MPIR_CVAR_REDUCE_SCATTER_BLOCK_...)."""
    halving = collective_calls("reduce_scatter.mpi:recursive_halving", "reduce_scatter")
    pairwise = collective_calls("reduce_scatter.mpi:pairwise", "reduce_scatter")
    assert halving == {r: [512, 256] for r in range(4)}
    assert pairwise == {r: [256, 256, 256] for r in range(4)}


def test_forced_binomial_reduce_reduces_on_inner_nodes_only() -> None:
    assert collective_calls("reduce.mpi:binomial", "reduce") == {
        0: [1024, 1024],
        1: [],
        2: [1024],
        3: [],
    }


def test_forced_reduce_scatter_gather_is_named_by_mpich_itself() -> None:
    """As for allreduce's reduce_scatter_allgather: a user op cannot run it, and MPICH says so
    by the name collsweep forced (a built-in op, as a sweep's, runs it)."""
    knobs = {
        **launcher.default_knobs(4, cores=physical_cores()),
        **library_knobs("reduce.mpi:reduce_scatter_gather"),
        "PYTHONPATH": str(ROOT / "tests" / "mpi_programs"),
    }
    result = launch.run(launch.Job(4, "library_fingerprint", ["1024", "reduce"], knobs), 120)
    assert result.returncode == 0, result.stderr
    assert "Reduce reduce_scatter_gather cannot be applied" in result.stderr


def test_other_collectives_forced_algorithms_share_the_launch_when_switched_at_run_time() -> None:
    """MPI_T switches every collective's MPICH algorithm per call: under run-time switching
    they share one launch with allreduce's; under launch switching each forced one has a
    launch of its own, forced by name in its environment."""
    from runners.domain.sweep.plan import plan_groups
    from runners.domain.sweep.spec import parse_spec

    text = "sizes=[4096]\nranks=[2]\ncollectives=['allreduce', 'allgather']\n"
    spec = parse_spec(text + "algorithms=['ring', 'mpi', 'mpi:ring', 'mpi:brucks']")
    [shared] = plan_groups(spec, "x", switching="runtime", cores=8)
    assert {"mpi:ring", "allgather.mpi:ring", "allgather.mpi:brucks"} <= set(shared.switches)
    assert shared.switches["allgather.mpi:brucks"] == {
        "MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM": 1,
        "MPIR_CVAR_ALLGATHER_DEVICE_COLLECTIVE": 0,
    }
    groups = {g.config: g for g in plan_groups(spec, "x", switching="launch", cores=8)}
    own = groups["allgather.brucks"]
    assert own.knobs["MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM"] == "brucks" and not own.switches


def switched_call(collective: str, algorithm: str, ranks: int, count: int) -> tuple[dict, str]:
    """One MPICH call of `collective` with `algorithm` written through MPI_T by the values a
    sweep writes (tests/mpi_programs/switched_call.py): per rank the counting op's calls, and
    MPICH's stderr (its fallback notices)."""
    knobs = {
        **launcher.default_knobs(ranks, cores=physical_cores()),
        **switching.FALLBACK_KNOB,
        "PYTHONPATH": f"{ROOT / 'tests' / 'mpi_programs'}:{ROOT}",
    }
    job = launch.Job(ranks, "switched_call", [collective, algorithm, str(count)], knobs)
    result = launch.run(job, 120)
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("[")]
    return {row["rank"]: row["calls"] for row in json.loads(line)}, result.stderr


def test_mpi_t_values_of_the_other_collectives_run_what_they_name() -> None:
    """Each enum value written at run time, proven: by the counting op (reduce-scatter's
    pairwise and recursive halving, reduce's binomial), or by MPICH naming the algorithm it
    cannot apply (reduce's reduce_scatter_gather for a user op, allgather's recursive_doubling
    on 3 ranks, bcast's smp outside a node hierarchy). Bcast's binomial and
    scatter_ring_allgather and allgather's brucks and ring sit in the same lists, unproven."""
    calls, _ = switched_call("reduce_scatter", "pairwise", 4, 1024)
    assert calls == {r: [256] * 3 for r in range(4)}
    calls, _ = switched_call("reduce_scatter", "recursive_halving", 4, 1024)
    assert calls == {r: [512, 256] for r in range(4)}
    calls, _ = switched_call("reduce", "binomial", 4, 1024)
    assert calls == {0: [1024, 1024], 1: [], 2: [1024], 3: []}
    named = {
        ("reduce", "reduce_scatter_gather", 4, 1024): "Reduce reduce_scatter_gather cannot",
        ("allgather", "recursive_doubling", 3, 12): "Allgather recursive_doubling cannot",
        ("bcast", "smp", 4, 64): "Bcast smp cannot be applied",
    }
    for args, text in named.items():
        assert text in switched_call(*args)[1], args
    _, quiet = switched_call("bcast", "binomial", 4, 64)
    assert "cannot be applied" not in quiet


def test_a_sweeps_run_time_switch_forces_the_other_collectives_in_one_launch() -> None:
    """Through the sweep's own plan and ranks (a shared launch, MPI_T before each call): the
    reduce-scatter algorithms and the binomial reduce leave their fingerprints."""
    scatter = ("reduce_scatter.mpi:recursive_halving", "reduce_scatter.mpi:pairwise")
    found = planned_calls("mpich", 4, 1024, scatter, collective="reduce_scatter")
    assert found["reduce_scatter.mpi:recursive_halving"] == {r: [512, 256] for r in range(4)}
    assert found["reduce_scatter.mpi:pairwise"] == {r: [256] * 3 for r in range(4)}
    found = planned_calls("mpich", 4, 1024, ("reduce.mpi:binomial",), collective="reduce")
    assert found["reduce.mpi:binomial"] == {0: [1024, 1024], 1: [], 2: [1024], 3: []}


def test_forced_allgather_recursive_doubling_is_named_by_mpich_itself() -> None:
    """Allgather takes no op to count with; what proves the name forces that algorithm is
    MPICH refusing it by that name where it cannot run (3 ranks: not a power of two)."""
    knobs = {
        **launcher.default_knobs(3, cores=physical_cores()),
        **library_knobs("allgather.mpi:recursive_doubling"),
        "PYTHONPATH": str(ROOT / "tests" / "mpi_programs"),
    }
    result = launch.run(launch.Job(3, "library_fingerprint", ["12", "allgather"], knobs), 120)
    assert result.returncode == 0, result.stderr
    assert "Allgather recursive_doubling cannot be applied" in result.stderr


def test_a_forced_knomial_tree_is_knomial_radix_k_rank_by_rank() -> None:
    """MPICH's tree with MPIR_CVAR_ALLREDUCE_TREE_TYPE=knomial_2 and TREE_KVAL=3 on 5 ranks:
    the counting op's calls per rank are exactly knomial(radix=3)'s reductions, so that
    schedule models it; MPICH's default type, knomial_1, numbers the tree otherwise."""
    from runners.domain.libraries.catalog import ALGORITHMS

    schedule = ALGORITHMS["knomial(radix=3)"].required_schedule
    expected = {r: [s.received for s in schedule(r, 5, 1024) if s.reduce] for r in range(5)}
    assert reduction_calls("knomial(radix=3)", ranks=5) == expected
    knobs = library_knobs("mpi:knomial(radix=3)") | {"MPIR_CVAR_ALLREDUCE_TREE_TYPE": "knomial_1"}
    assert mpich_calls(5, 1024, knobs) != expected


def test_forced_recursive_multiplying_is_its_schedule_rank_by_rank() -> None:
    """MPICH's recursive multiplying with KVAL 4 on 4 ranks: every rank reduces three whole
    vectors in one round (recursive_multiplying(radix=4)); with KVAL 2, two rounds of one,
    recursive doubling's fingerprint."""
    from runners.domain.libraries.catalog import ALGORITHMS

    for radix, name in ((4, "recursive_multiplying(radix=4)"), (2, "recursive_multiplying")):
        schedule = ALGORITHMS[name].required_schedule
        expected = {r: [s.received for s in schedule(r, 4, 1024) if s.reduce] for r in range(4)}
        assert expected[0] == [1024] * (3 if radix == 4 else 2)
        assert reduction_calls(name) == expected


def test_a_forced_pipelined_chain_is_chain_segment_b_rank_by_rank() -> None:
    """MPICH's tree as a 1-ary tree pipelined in 1000-byte chunks on 5 ranks: the counting op's
    calls per rank are exactly chain(segment=1000)'s reductions (ranks 0..3 each reduce the
    24-element remainder, then eight chunks of 125 float64; the last rank none)."""
    from runners.domain.libraries.catalog import ALGORITHMS

    schedule = ALGORITHMS["chain(segment=1000)"].schedule_at(8)  # float64
    expected = {r: [s.received for s in schedule(r, 5, 1024) if s.reduce] for r in range(5)}
    assert expected[0] == [24] + [125] * 8 and expected[4] == []
    assert reduction_calls("chain(segment=1000)", ranks=5) == expected
