"""`collsweep tune` on a stored run: the files it writes, and nothing written on bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from helpers import synthetic

from runners.analysis.tuning import group_tunings
from runners.cli.main import main
from runners.domain.libraries import DEFAULT, mpich_tuning, tuning
from runners.domain.sweep.spec import load_spec
from runners.domain.units import format_bytes
from runners.host.tuning_files import tuning_problem

RUN_A = synthetic.demo_specs()[0].run_id


def tune(demo_store: Path, out: Path, *extra: str) -> int:
    return main(["tune", RUN_A, "--store", str(demo_store), "--out", str(out), *extra])


def test_tune_writes_a_whole_table_its_companions_and_a_validation_spec(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, spec_path = tmp_path / "tuned.json", tmp_path / "validate.toml"
    assert tune(demo_store, out, "--validate-spec", str(spec_path)) == 0
    printed = capsys.readouterr().out
    assert tuning_problem(DEFAULT, out) is None
    expected = group_tunings(demo_store, RUN_A, "float32", "sum")[2]
    assert any(b.algorithm for b in expected.bands)  # the demo_store has a decided library winner
    sized = json.loads(out.read_text())[mpich_tuning.ALLREDUCE]["comm_type=intra"]
    assert list(sized) == ["comm_size<2", "comm_size<=2", "comm_size=any"]  # p=2 only: the
    assert "p=2: " in printed and "p=3" not in printed  # other groups are oversubscribed
    measured = [s.nbytes for s in expected.sizes]
    first, last = expected.bands[0], expected.bands[-1]
    reaches = [
        f"unmeasured: p=2: {first.algorithm} is named below {format_bytes(min(measured))}"
        if first.algorithm
        else "",
        f"unmeasured: p=2: {last.algorithm} is named for every size above "
        f"{format_bytes(max(measured))}"
        if last.algorithm and last.upto is None
        else "",
    ]
    for said in reaches:
        assert (said in printed) if said else True
    assert printed.count("unmeasured:") == sum(map(bool, reaches))
    provenance = json.loads(tuning.provenance_path(out).read_text())
    assert provenance["run_id"] == RUN_A and provenance["library"].startswith("MPICH 5.0.")
    bands = provenance["collectives"]["allreduce"]["groups"]["2"]["bands"]
    assert [b["upto_bytes"] for b in bands] == [b.upto for b in expected.bands]
    for size in provenance["collectives"]["allreduce"]["groups"]["2"]["sizes"]:
        if size["choice"]:
            assert size["fastest_against_default"]["ratio_high"] < 1  # clear of a tie
    assert set(provenance["assumptions"]) >= {"not_oversubscribed", "single_node"}
    spec = load_spec(spec_path)
    assert spec.tuning_file == str(out.resolve()) and spec.ranks == (2,)
    assert set(spec.algorithms) >= {"mpi", "mpi:tuned", "mpi:recursive_doubling"}
    swept = sorted({s.nbytes for s in expected.sizes})
    assert set(swept) < set(spec.sizes) and len(spec.sizes) == 2 * len(swept) - 1


def test_an_oversubscribed_group_is_tuned_only_when_named(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tune(demo_store, tmp_path / "t.json", "--ranks", "3") == 0
    assert "p=3 (oversubscribed" in capsys.readouterr().out


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--ranks", "4"), "no decided winner among the library's algorithms"),
        (("--ranks", "16"), "no float32/sum points of two library algorithms at ranks [16]"),
        (("--dtype", "int64"), "no int64/sum"),
    ],
)
def test_a_run_that_cannot_make_a_file_writes_nothing(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args, message: str
) -> None:
    assert tune(demo_store, tmp_path / "t.json", *args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert _files(tmp_path) == []


def test_an_unwritable_place_or_another_library_writes_nothing(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tune(demo_store, tmp_path / "missing" / "t.json") == 2
    assert "folder" in capsys.readouterr().err and _files(tmp_path) == []
    other = tmp_path / "other.duckdb"
    shutil.copy(demo_store, other)
    for versions, said in (
        ("{'openmpi': {'mpi_version': 'Open MPI 5.0.11'}}", "measured no MPICH"),
        ("{'mpich': {'mpi_version': 'MPICH 4.2.0'}}", "measured MPICH 4.2.0"),
    ):
        with duckdb.connect(str(other)) as con:
            con.execute(f"UPDATE runs SET libraries = {versions}::JSON")
        argv = ["tune", RUN_A, "--store", str(other), "--out", str(tmp_path / "t.json")]
        assert main(argv) == 2
        assert said in capsys.readouterr().err
        assert _files(tmp_path) == ["other.duckdb"]
    assert (
        main(["tune", "nope", "--store", str(demo_store), "--out", str(tmp_path / "t.json")]) == 2
    )


def test_sweep_refuses_a_bad_tuning_file_before_any_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    half = tmp_path / "half.json"
    half.write_text(json.dumps({mpich_tuning.ALLREDUCE: {}}))
    mpich_tuning.posix_path(half).write_text(json.dumps({mpich_tuning.ALLREDUCE: {}}))
    store = tmp_path / "s.duckdb"
    args = ["sweep", "--sizes", "8", "--ranks", "2", "--store", str(store)]
    assert main([*args, "--tuning-file", str(half)]) == 2
    assert "lacks collective=bcast" in capsys.readouterr().err
    assert main([*args, "--tuning-file", str(tmp_path / "none.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not store.exists()


def test_tune_writes_each_collectives_subtree_from_its_own_winners(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run of allreduce and bcast where only bcast's forced binomial tree beats the default
    (from 32 KiB): the file replaces bcast's subtree alone, hands those sizes from the
    shared-memory layer to it, and the validation spec times bcast.mpi:tuned."""
    sizes = (8, 512, 32768, 262144)
    times = {("bcast.mpi", n): 1e-6 * (1 + n / 4096) for n in sizes}
    times |= {("bcast.mpi:binomial", n): 1e-6 * (1.5 + n / 16384) for n in sizes}
    times |= {(a, n): 2e-6 * (1 + n / 4096) for a in ("mpi", "mpi:ring") for n in sizes}
    run = synthetic.RunSpec(
        run_id="r20261203-150000-cccc",
        ranks=(2,),
        sizes=sizes,
        algorithms=("mpi", "mpi:ring", "bcast.mpi", "bcast.mpi:binomial"),
        timeout_point=False,
        exact_times=times,
    )
    db = tmp_path / "c.duckdb"
    synthetic.build_store(db, [run])
    out, check = tmp_path / "t.json", tmp_path / "v.toml"
    argv = ["tune", run.run_id, "--store", str(db), "--out", str(out)]
    assert main([*argv, "--validate-spec", str(check)]) == 0
    printed = capsys.readouterr().out
    assert "bcast p=2: up to " in printed and "and larger: mpi:binomial" in printed
    largest = format_bytes(max(sizes))
    said = f"unmeasured: bcast p=2: bcast.mpi:binomial is named for every size above {largest}"
    assert said in printed  # a band reaching sizes the run never measured is said
    assert "\np=2" not in printed  # allreduce: nothing decided against its default
    table = json.loads(out.read_text())
    generic = mpich_tuning.library_table(mpich_tuning.MPIR_TABLE)
    assert table[mpich_tuning.ALLREDUCE] == generic[mpich_tuning.ALLREDUCE]
    sized = table["collective=bcast"]["comm_type=intra"]["comm_size<=2"]
    [(low, default), (high, chosen)] = sized.items()
    assert 512 <= int(low.split("<=")[1]) < 32768 and high == "avg_msg_size=any"
    assert default == generic["collective=bcast"]["comm_type=intra"]
    assert chosen == {"algorithm=MPIR_Bcast_intra_binomial": {}}
    posix = json.loads(mpich_tuning.posix_path(out).read_text())
    handed = posix["collective=bcast"]["comm_type=intra"]["comm_size<=2"]
    assert handed["avg_msg_size=any"] == mpich_tuning.to_generic("bcast")
    provenance = json.loads(tuning.provenance_path(out).read_text())
    assert set(provenance["collectives"]) == {"bcast"}
    assert provenance["collectives"]["bcast"]["op"] == "none"
    spec = load_spec(check)
    assert spec.collectives == ("bcast",)
    assert set(spec.algorithms) == {"bcast.mpi", "bcast.mpi:binomial", "bcast.mpi:tuned"}


def test_a_swept_member_of_a_library_family_is_tuned_with_its_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """MPICH's chain in 16 KiB chunks, swept beside the default and its 64 KiB chunks, wins
    from 64 KiB: the file's band names it, and its leaf runs the tree as a chain in 16 KiB
    chunks (k=1, kary, chunk_size=16384) behind MPICH's commutativity guard."""
    sizes = (8, 512, 65536, 1048576)
    chosen, other = "mpi:chain(segment=16KiB)", "mpi:chain(segment=64KiB)"
    times = {("mpi", n): 1e-6 * (1 + n / 4096) for n in sizes}
    times |= {(chosen, n): 1e-6 * (3 + n / 16384) for n in sizes}
    times |= {(other, n): 1e-6 * (4 + n / 8192) for n in sizes}
    run = synthetic.RunSpec(run_id="r20261206-150000-eeee", ranks=(2,), sizes=sizes,
                            algorithms=("mpi", chosen, other), timeout_point=False,
                            exact_times=times)  # fmt: skip
    db = tmp_path / "f.duckdb"
    synthetic.build_store(db, [run])
    out = tmp_path / "t.json"
    assert main(["tune", run.run_id, "--store", str(db), "--out", str(out)]) == 0
    assert f"and larger: {chosen}" in capsys.readouterr().out
    sized = json.loads(out.read_text())[mpich_tuning.ALLREDUCE]["comm_type=intra"]
    leaf = sized["comm_size<=2"]["avg_msg_size=any"]
    tree = leaf["is_commutative=yes"]["algorithm=MPIR_Allreduce_intra_tree"]
    assert {"k=1", "tree_type=kary", "chunk_size=16384"} <= set(tree)


def test_no_output_lands_on_an_input_or_the_store(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    """--validate-spec naming the tuning file, --out naming the store's write-ahead log (the
    store's own file is refused as a database already): one line, exit 2, nothing written."""
    db = tmp_path / "s.duckdb"
    shutil.copy(demo_store, db)
    out = tmp_path / "t.json"
    out.write_text("{}")
    assert main(["tune", RUN_A, "--store", str(db), "--out", str(out), "--validate-spec",
                 str(tmp_path / "." / "t.json")]) == 2  # fmt: skip
    assert "twice" in capsys.readouterr().err and out.read_text() == "{}"
    wal = tmp_path / "s.duckdb.wal"
    assert main(["tune", RUN_A, "--store", str(db), "--out", str(wal)]) == 2
    assert "write-ahead log" in capsys.readouterr().err
    assert _files(tmp_path) == ["s.duckdb", "t.json"]
    reliability.bad_input("tune --validate-spec equal to --out", True)
    reliability.bad_input("tune --out STORE.wal", True)


def _with_a_run_on_nodes(demo_store: Path, tmp_path: Path) -> tuple[Path, str]:
    """The demo store and a run of the same grid on nodes of 1 rank (synthetic.placed_spec)."""
    return synthetic.with_placed_run(demo_store, tmp_path), synthetic.placed_spec().run_id


def test_one_file_holds_a_sweeps_placements_each_at_its_ranks_a_node(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tune HOST_RUN NODES_RUN`: MPICH's table keys p=2 by comm_avg_ppn, 1 (the nodes' run)
    then 2 (the host's: both ranks on its one node); the provenance holds both runs; the
    validation spec sweeps both placements."""
    db, on_nodes = _with_a_run_on_nodes(demo_store, tmp_path)
    out, spec_path = tmp_path / "both.json", tmp_path / "validate.toml"
    argv = ["tune", RUN_A, on_nodes, "--store", str(db), "--out", str(out)]
    assert main([*argv, "--validate-spec", str(spec_path)]) == 0
    printed = capsys.readouterr().out
    assert "one host, p=2: " in printed and "nodes of 1, p=2: " in printed
    ladder = json.loads(out.read_text())[mpich_tuning.ALLREDUCE]["comm_type=intra"]["comm_size<=2"]
    assert [k for k in ladder if "<=" in k] == ["comm_avg_ppn<=1", "comm_avg_ppn<=2"]
    assert ladder["comm_avg_ppn<=1"] != ladder["comm_avg_ppn<=2"]
    provenance = json.loads(tuning.provenance_path(out).read_text())["placements"]
    assert provenance["0"]["run_id"] == RUN_A and provenance["1"]["run_id"] == on_nodes
    assert load_spec(spec_path).ranks_per_node == (0, 1)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((RUN_A,), "both measured every rank on one host: a file holds one run of each"),
        (("--library", "openmpi"), "keys on communicator size only: one run"),
    ],
)
def test_several_runs_of_one_placement_or_for_a_file_without_nodes_write_nothing(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra, message: str
) -> None:
    db, on_nodes = _with_a_run_on_nodes(demo_store, tmp_path)
    out = tmp_path / "out" / "t.json"
    out.parent.mkdir()
    runs = [RUN_A, on_nodes] if extra[0].startswith("--") else [RUN_A, *extra]
    flags = list(extra) if extra[0].startswith("--") else []
    assert main(["tune", *runs, "--store", str(db), "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert _files(out.parent) == []
