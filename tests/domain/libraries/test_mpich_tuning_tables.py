"""Tuning tables from measured choices: bands, MPICH's table format, the spec and the plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runners.domain.libraries import DEFAULT, mpich_tuning, openmpi, tuning
from runners.domain.libraries.mpich_tuning import ALLREDUCE
from runners.domain.libraries.tuning import Band, bands
from runners.domain.sweep.plan import plan_groups
from runners.domain.sweep.spec import SpecError, parse_spec
from runners.host.tuning_files import tuning_problem

RD, RING, TREE = "mpi:recursive_doubling", "mpi:ring", "mpi:tree"
RSA = "mpi:reduce_scatter_allgather"
MPIR = mpich_tuning.library_table(mpich_tuning.MPIR_TABLE)


def test_bands_merge_equal_choices_and_split_at_geometric_midpoints() -> None:
    got = bands([(8, None), (64, RD), (512, RD), (4096, None), (32768, RING)])
    assert got == [Band(22, None), Band(1448, RD), Band(11585, None), Band(None, RING)]


def test_a_measured_crossover_sets_the_boundary_between_its_two_sizes() -> None:
    got = bands([(4096, RD), (32768, RING)], {(4096, 32768): 20000.0})
    assert got == [Band(20000, RD), Band(None, RING)]
    # a crossover outside its bracket (it cannot be) is clamped inside it
    assert bands([(8, RD), (64, RING)], {(8, 64): 1e6})[0] == Band(63, RD)


def test_one_choice_everywhere_is_one_band() -> None:
    assert bands([(8, RING), (64, RING)]) == [Band(None, RING)]
    assert bands([]) == []


def _one_host(per_ranks: dict) -> dict:
    """Bands per group size as measured with every rank on one host (ranks a node 0)."""
    return {ranks: {0: found} for ranks, found in per_ranks.items()}


def _allreduce(table: dict) -> dict:
    return table[ALLREDUCE]["comm_type=intra"]


def test_the_mpir_table_keeps_every_collective_and_every_other_group_size() -> None:
    generic = mpich_tuning.library_table(mpich_tuning.MPIR_TABLE)
    per_ranks = {2: [Band(64, RD), Band(None, None)], 4: [Band(None, RING)]}
    table = mpich_tuning.mpir_table(_one_host(per_ranks), generic)
    assert set(table) == set(generic)
    assert {k: v for k, v in table.items() if k != ALLREDUCE} == {
        k: v for k, v in generic.items() if k != ALLREDUCE
    }
    default = _allreduce(generic)
    sized = _allreduce(table)
    # first matching sibling wins: exactly p=2 and p=4 take their bands, others the default
    order = ["comm_size<2", "comm_size<=2", "comm_size<4", "comm_size<=4", "comm_size=any"]
    assert list(sized) == order
    assert sized["comm_size<2"] == sized["comm_size<4"] == sized["comm_size=any"] == default
    assert sized["comm_size<=2"] == {
        "avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
        "avg_msg_size=any": default,
    }
    ring = sized["comm_size<=4"]["avg_msg_size=any"]
    assert ring["is_commutative=yes"] == {"algorithm=MPIR_Allreduce_intra_ring": {}}
    assert "algorithm=MPIR_Allreduce_intra_recursive_doubling" in ring["is_commutative=any"]
    assert generic[ALLREDUCE]["comm_type=intra"] == default  # the library's table is untouched


def test_guards_stay_where_mpich_checks_them_itself() -> None:
    """reduce_scatter_allgather needs a built-in op and count >= pow2; the tree needs its
    parameters named (a file's leaf is not filled from the cvars)."""
    table = mpich_tuning.mpir_table(_one_host({2: [Band(None, RSA)], 3: [Band(None, TREE)]}), MPIR)
    rsa = _allreduce(table)["comm_size<=2"]["avg_msg_size=any"]
    assert list(rsa) == ["is_op_built_in=no", "count<pow2", "count=any"]
    assert rsa["count=any"] == {"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather": {}}
    tree = _allreduce(table)["comm_size<=3"]["avg_msg_size=any"]
    assert tree == {"algorithm=MPIR_Allreduce_intra_tree": mpich_tuning.TREE_PARAMETERS}


def test_the_shared_memory_table_hands_tuned_bands_to_the_generic_selection() -> None:
    generic = mpich_tuning.library_table(mpich_tuning.POSIX_TABLE)
    table = mpich_tuning.posix_table({2: [Band(64, RD), Band(None, None)]}, generic)
    sized = _allreduce(table)["comm_size<=2"]
    assert sized["avg_msg_size=any"] == _allreduce(generic)  # release_gather kept
    assert sized["avg_msg_size<=64"] == mpich_tuning.to_generic("allreduce")
    assert "release_gather" not in json.dumps(sized["avg_msg_size<=64"]).replace(
        json.dumps(mpich_tuning.to_generic("allreduce")), ""
    )
    assert set(table) == set(generic)


def _write(folder: Path, mpir: object, posix: object = None) -> Path:
    path = folder / "t.json"
    path.write_text(json.dumps(mpir))
    mpich_tuning.posix_path(path).write_text(json.dumps(posix or {ALLREDUCE: {}}))
    return path


def test_a_tuning_file_must_be_a_whole_table_with_its_companion(tmp_path: Path) -> None:
    whole = mpich_tuning.mpir_table(_one_host({2: [Band(None, RD)]}), MPIR)
    good = _write(tmp_path, whole)
    assert tuning_problem(DEFAULT, good) is None
    assert "does not exist" in tuning_problem(DEFAULT, tmp_path / "nope.json")
    only_allreduce = _write(tmp_path, {ALLREDUCE: {}})
    assert "lacks collective=bcast" in tuning_problem(DEFAULT, only_allreduce)
    only_allreduce.write_text("{not json")
    assert "not readable JSON" in tuning_problem(DEFAULT, only_allreduce)
    _write(tmp_path, whole)
    mpich_tuning.posix_path(good).unlink()
    assert "t.json.posix.json does not exist" in tuning_problem(DEFAULT, good)


def test_a_spec_with_a_tuning_file_times_mpi_tuned_in_a_launch_of_its_own(tmp_path: Path) -> None:
    whole = mpich_tuning.mpir_table(_one_host({2: [Band(None, RD)]}), MPIR)
    path = _write(tmp_path, whole)
    spec = parse_spec(f'sizes = [8]\nranks = [2]\nalgorithms = ["mpi"]\ntuning_file = "{path}"\n')
    assert spec.algorithms == ("mpi", "mpi:tuned")
    for switching in ("runtime", "launch"):
        groups = {g.config: g for g in plan_groups(spec, "r", switching=switching, cores=8)}
        assert set(groups) == {"", "mpi:tuned"}
        knobs = groups["mpi:tuned"].knobs
        assert knobs[mpich_tuning.FILE_CVAR] == str(path.resolve())
        assert knobs[mpich_tuning.POSIX_FILE_CVAR] == str(mpich_tuning.posix_path(path.resolve()))
        assert mpich_tuning.FILE_CVAR not in groups[""].knobs  # the autotuned mpi stays the default


def test_a_spec_refuses_mpi_tuned_without_a_tuning_file() -> None:
    """The file itself is checked when a sweep starts (tests/libraries/test_tune_cli.py): a stored
    spec stays readable after its file is gone."""
    with pytest.raises(SpecError, match="mpi:tuned needs tuning_file"):
        parse_spec('sizes = [8]\nranks = [2]\nalgorithms = ["mpi:tuned"]\n')
    gone = parse_spec('sizes = [8]\nranks = [2]\ntuning_file = "/nonexistent/t.json"\n')
    assert gone.algorithms[-1] == "mpi:tuned"


def test_open_mpi_rules_start_each_band_one_byte_above_the_last() -> None:
    """Open MPI's format: collectives, allreduce's id, sizes, then per size its rules
    `min_bytes algorithm faninout segsize` from 0 bytes; None is the built-in decision (0)."""
    four = [Band(4096, "openmpi:recursive_doubling"), Band(None, "openmpi:ring")]
    text = openmpi.openmpi_rules({"allreduce": {4: four, 2: [Band(None, None)]}})
    numbers = [line.split("#")[0].split() for line in text.splitlines()]
    numbers = [int(v) for words in numbers for v in words]
    assert numbers == [1, 2, 2, 2, 1, 0, 0, 0, 0, 4, 2, 0, 3, 0, 0, 4097, 4, 0, 0]


def test_band_ranges_read_as_size_ranges() -> None:
    """One wording for the CLI's summary and the Tuning page."""
    assert tuning.band_ranges([22, 181, None]) == [
        "up to 22 B",
        "above 22 B up to 181 B",
        "above 181 B and larger",
    ]
    assert tuning.band_ranges([None]) == ["every size"]


def test_each_collective_has_its_own_subtree_size_condition_and_guards() -> None:
    """bcast is sized by avg_msg_size, allgather and reduce_scatter_block by total_msg_size
    (csel.c defines no avg_msg_size for them); MPICH's restrictions guard each leaf."""
    per_collective = {
        "bcast": {2: [Band(4096, None), Band(None, "bcast.mpi:binomial")]},
        "allgather": {4: [Band(None, "allgather.mpi:recursive_doubling")]},
        "reduce_scatter": {2: [Band(None, "reduce_scatter.mpi:pairwise")]},
        "reduce": {2: [Band(None, "reduce.mpi:reduce_scatter_gather")]},
    }
    mpir, posix = mpich_tuning.mpich_tables({0: per_collective})
    generic = mpich_tuning.library_table(mpich_tuning.MPIR_TABLE)
    assert _allreduce(mpir) == _allreduce(generic)  # untouched: not tuned
    bcast = mpir["collective=bcast"]["comm_type=intra"]["comm_size<=2"]
    default = generic["collective=bcast"]["comm_type=intra"]
    assert bcast == {
        "avg_msg_size<=4096": default,
        "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_binomial": {}},
    }
    allgather = mpir["collective=allgather"]["comm_type=intra"]["comm_size<=4"]
    assert allgather == {
        "total_msg_size=any": {
            "comm_size=pow2": {"algorithm=MPIR_Allgather_intra_recursive_doubling": {}},
            "comm_size=any": {"algorithm=MPIR_Allgather_intra_brucks": {}},
        }
    }
    scatter = mpir["collective=reduce_scatter_block"]["comm_type=intra"]["comm_size<=2"]
    assert scatter["total_msg_size=any"] == {
        "is_commutative=yes": {"algorithm=MPIR_Reduce_scatter_block_intra_pairwise": {}},
        "is_commutative=any": {"algorithm=MPIR_Reduce_scatter_block_intra_recursive_doubling": {}},
    }
    reduce = mpir["collective=reduce"]["comm_type=intra"]["comm_size<=2"]["avg_msg_size=any"]
    assert reduce["is_op_built_in=no"] == reduce["count<pow2"]
    assert reduce["is_op_built_in=no"] == {"algorithm=MPIR_Reduce_intra_binomial": {}}
    # the shared-memory layer hands bcast's tuned band to the generic selection, keeps its own
    # default elsewhere; it takes no allgather or reduce_scatter_block at all
    handed = posix["collective=bcast"]["comm_type=intra"]["comm_size<=2"]
    own = mpich_tuning.library_table(mpich_tuning.POSIX_TABLE)["collective=bcast"][
        "comm_type=intra"
    ]
    assert handed == {
        "avg_msg_size<=4096": own,
        "avg_msg_size=any": mpich_tuning.to_generic("bcast"),
    }
    assert "collective=allgather" not in posix


def test_a_run_on_nodes_keys_its_bands_by_ranks_per_node_too() -> None:
    """Tuned on nodes of 2: the size's bands only where comm_avg_ppn is 2, MPICH's own
    subtree for fewer or more ranks a node (and for every other size, as always)."""
    from runners.domain.libraries.tuning import Band

    mpir, _ = mpich_tuning.mpich_tables({2: {"allreduce": {4: [Band(None, "mpi:ring")]}}})
    intra = mpir["collective=allreduce"]["comm_type=intra"]
    default = intra["comm_size=any"]
    assert list(intra["comm_size<=4"]) == ["comm_avg_ppn<2", "comm_avg_ppn<=2", "comm_avg_ppn=any"]
    assert intra["comm_size<=4"]["comm_avg_ppn<2"] == default == intra["comm_size<4"]
    assert intra["comm_size<=4"]["comm_avg_ppn=any"] == default
    ring = intra["comm_size<=4"]["comm_avg_ppn<=2"]["avg_msg_size=any"]
    assert "algorithm=MPIR_Allreduce_intra_ring" in str(ring)
    flat, _ = mpich_tuning.mpich_tables({0: {"allreduce": {4: [Band(None, "mpi:ring")]}}})
    assert "comm_avg_ppn" not in json.dumps(flat["collective=allreduce"])  # one host: as before


def test_a_size_tuned_across_nodes_leaves_the_shared_memory_table_as_mpichs_own() -> None:
    """The shared-memory table is asked only inside one node: a size tuned across nodes
    hands nothing to the generic selection there (on one host that would replace
    release_gather by MPICH's generic default), a size that fit on one node still does."""
    winner = [Band(64, "mpi:ring"), Band(None, None)]
    _, across = mpich_tuning.mpich_tables({1: {"allreduce": {2: winner}}})
    assert across == mpich_tuning.library_table(mpich_tuning.POSIX_TABLE)
    _, inside = mpich_tuning.mpich_tables({2: {"allreduce": {2: winner, 4: winner}}})
    sizes = inside["collective=allreduce"]["comm_type=intra"]
    assert sizes["comm_size<=2"]["avg_msg_size<=64"] == mpich_tuning.to_generic("allreduce")
    assert "comm_size<=4" not in sizes  # 4 ranks on 2 nodes of 2: MPICH's own


def test_one_file_holds_several_placements_each_at_its_ranks_a_node() -> None:
    """Tuned as one host, on nodes of 4 and of 8 (16 ranks): a comm_avg_ppn ladder, fewest
    ranks a node first, each placement's bands exactly at its average (one host: all 16),
    MPICH's own subtree between and beyond; the shared-memory table from the one-host run."""
    host, eight, four = [Band(None, "mpi:ring")], [Band(None, RD)], [Band(None, RSA)]
    mpir, posix = mpich_tuning.mpich_tables(
        {0: {"allreduce": {16: host}}, 8: {"allreduce": {16: eight}}, 4: {"allreduce": {16: four}}}
    )
    intra = _allreduce(mpir)
    default = intra["comm_size=any"]
    ladder = intra["comm_size<=16"]
    assert list(ladder) == [
        "comm_avg_ppn<4", "comm_avg_ppn<=4", "comm_avg_ppn<8", "comm_avg_ppn<=8",
        "comm_avg_ppn<16", "comm_avg_ppn<=16", "comm_avg_ppn=any",
    ]  # fmt: skip
    assert all(ladder[k] == default for k in ladder if "<=" not in k)
    assert "reduce_scatter_allgather" in json.dumps(ladder["comm_avg_ppn<=4"])
    assert "recursive_doubling" in json.dumps(ladder["comm_avg_ppn<=8"]["avg_msg_size=any"])
    assert "intra_ring" in json.dumps(ladder["comm_avg_ppn<=16"])
    handed = posix["collective=allreduce"]["comm_type=intra"]["comm_size<=16"]
    assert handed == {"avg_msg_size=any": mpich_tuning.to_generic("allreduce")}
