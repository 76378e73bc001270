"""Hostile files and names (issue 26): nothing outside the store is touched.

Each case runs the real CLI in this process and checks the exit status, the one-line message and
that nothing was written where it must not be. Each records into the reliability figure.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT, damage_runs_block
from helpers import synthetic

from runners import store
from runners.cli.main import main
from runners.domain.errors import BadInput
from runners.domain.names import path_for, run_id_problem
from runners.domain.outputs import output_problem
from runners.domain.sweep.spec import parse_spec

RUN_A = synthetic.demo_specs()[0].run_id


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run `collsweep ARGV`: it must exit 2 with one line on stderr; that line."""
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def demo_copy(demo_store: Path, tmp_path: Path) -> Path:
    path = tmp_path / "store.duckdb"
    shutil.copyfile(demo_store, path)
    return path


def tiny_shard(folder: Path, run_id: str, name: str = "9_0") -> Path:
    """A one-group shard written through the store's own functions, under `run_id`."""
    path = folder / f"{name}.duckdb"
    spec = synthetic.RunSpec(
        run_id=run_id, ranks=(2,), sizes=(8, 64), algorithms=("ring", "mpi"), samples=4,
        launches=2, timeout_point=False,
    )  # fmt: skip
    store.add_calibration(path, synthetic.pingpong_calibration(spec.host))
    synthetic.write_run(path, spec)
    return path


@pytest.mark.parametrize(
    "run_id", ["../victim/precious", "", "a/b", "a\nb", "x'); DROP TABLE runs; --", "..", ".x"]
)
def test_one_rule_for_run_ids(run_id: str) -> None:
    assert run_id_problem(run_id)
    with pytest.raises(BadInput):
        path_for(Path("/tmp"), run_id, ".lock")


def test_valid_run_ids_stay_in_their_folder(tmp_path: Path) -> None:
    for run_id in ("r20261202-120000-abcd", "job.7_3", "A"):
        assert run_id_problem(run_id) is None
        assert path_for(tmp_path, run_id, ".lock").parent == tmp_path


def test_tune_never_writes_over_the_store(
    demo_copy: Path, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    before = demo_copy.read_bytes()
    err = refused(capsys, "tune", RUN_A, "--store", str(demo_copy), "--out", str(demo_copy))
    assert "is a DuckDB database" in err
    assert demo_copy.read_bytes() == before
    reliability.bad_input("tune --out over the store", True)


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_tune_refuses_a_target_that_is_not_a_regular_file(
    demo_copy: Path, tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    target = tmp_path / "target"
    os.mkfifo(target) if kind == "fifo" else target.mkdir()
    err = refused(capsys, "tune", RUN_A, "--store", str(demo_copy), "--out", str(target))
    assert "not a regular file" in err or "is a folder" in err
    mode = os.stat(target).st_mode
    assert stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISDIR(mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.duckdb", "target"]
    reliability.bad_input(f"tune --out a {kind}", True)


def test_tuning_files_are_readable_by_others(
    demo_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tuned.json"
    old = os.umask(0o022)
    try:
        assert main(["tune", RUN_A, "--store", str(demo_copy), "--out", str(out)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o644


def test_output_problem_names_devices() -> None:
    assert "not a regular file" in (output_problem(Path("/dev/null")) or "")


@pytest.mark.parametrize("flag", ["--run-id", "--resume"])
def test_sweep_refuses_a_run_id_that_is_a_path(
    tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.lock").write_text("keep")
    db = tmp_path / "s.duckdb"
    argv = ["sweep", "--sizes", "8", "--ranks", "1", flag, "../victim/precious", "--store", str(db)]
    assert "a run id must be" in refused(capsys, *argv)
    assert (victim / "precious.lock").read_text() == "keep" and not db.exists()
    reliability.bad_input(f"sweep {flag} ../victim/precious", True)


def test_export_refuses_a_run_id_that_is_a_path(
    demo_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    out = tmp_path / "out" / "inner"
    argv = ["export", "../escaped", "--output", str(out), "--store", str(demo_copy)]
    assert "a run id must be" in refused(capsys, *argv)
    assert not (tmp_path / "out").exists()
    reliability.bad_input("export ../escaped", True)


@pytest.mark.parametrize(
    ("run_id", "points_status", "words"),
    [
        ("../victim/precious", None, "a run id must be"),
        ("x'); DROP TABLE runs; --", None, "a run id must be"),
        ("r20261202-120000-good", "weird", "point status weird"),
    ],
)
def test_merge_refuses_a_shard_no_sweep_wrote(
    tmp_path: Path,
    run_id: str,
    points_status: str | None,
    words: str,
    capsys: pytest.CaptureFixture[str],
    reliability,
) -> None:
    shard = tiny_shard(tmp_path, run_id)
    if points_status:
        with duckdb.connect(str(shard)) as con:
            con.execute("UPDATE points SET status = ? WHERE algorithm = 'ring'", [points_status])
    main_store = tmp_path / "main.duckdb"
    store.ensure_current(main_store)
    err = refused(capsys, "merge", str(shard), "--store", str(main_store))
    assert words in err and "nothing merged" in err
    assert store.query(main_store, "SELECT count(*) n FROM runs").n.item() == 0
    assert store.query(main_store, "SELECT count(*) n FROM points").n.item() == 0
    reliability.bad_input(f"merge a shard with {words}", True)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["sweep", "--sizes", "8", "--ranks", "100000"], "ranks must be at most 4096"),
        (["sweep", "--sizes", "8", "--ranks", "4000"], "ranks a core"),
        (["verify", "--ranks", "100000"], "ranks a core"),
        (["verify", "--ranks", "2", "--counts", "99999999999999"], "--counts (as bytes) up to"),
        (["sweep", "--sizes", "8", "--ranks", "2", "--launches", "1000000000"], "launches must"),
        (["sweep", "--sizes", "8", "--ranks", "2", "--budget", "1e309"], "budget_s must"),
        (["sweep", "--sizes", "8", "--ranks", "2", "--max-iterations", "1e23"], "an integer"),
        (["sweep", "--sizes", "8", "--ranks", "2", "--warmup", "100000000"], "warmup must"),
        (["sweep", "--sizes", "8", "--ranks", "2", "--point-timeout", "inf"], "point_timeout_s"),
        (["query", "SELECT 1", "--timeout", "inf"], "--timeout must be"),
        (["query", "SELECT 1", "--timeout", "1e300"], "--timeout must be"),
        (["query", "SELECT 1", "--max-rows", "99999999999999999999"], "--max-rows between"),
        (["query", "SELECT 1", "--memory-limit", "-1"], "--memory-limit must be"),
        (["query", "SELECT 1", "--memory-limit", "100TiB"], "--memory-limit must be"),
        (
            ["predict", "--algorithm", "ring", "--ranks", "100000000", "--bytes", "64"],
            "--ranks must be between 1",
        ),
        (
            ["predict", "--algorithm", "ring", "--ranks", "8", "--bytes", "64", "--alpha", "1e308"],
            "--alpha must be",
        ),
        (["calibrate", "--budget", "1e9"], "--budget must be > 0 and at most"),
        (
            ["sweep", "--sizes", "8", "--ranks", "2", "--launcher", "x" * 1_500_000 + " {ranks}"],
            "characters long",
        ),
    ],
)
def test_absurd_values_are_refused_before_anything_starts(
    tmp_path: Path, argv: list[str], words: str, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    db = tmp_path / "s.duckdb"
    if argv[0] == "query":
        store.ensure_current(db)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert words in refused(capsys, *argv, *([] if argv[0] == "verify" else ["--store", str(db)]))
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    reliability.bad_input(" ".join(argv), True)


def test_merge_refuses_a_shard_with_a_view_that_reads_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    """A shard whose `runs` is a view over read_text('/etc/hostname') never runs it."""
    shard = tiny_shard(tmp_path, "r20261202-120000-view")
    with duckdb.connect(str(shard)) as con:
        con.execute("CREATE TABLE runs_kept AS SELECT * FROM runs")
        con.execute("DROP TABLE runs")
        con.execute(
            "CREATE VIEW runs AS SELECT * REPLACE (content AS host) FROM runs_kept, "
            "read_text('/etc/hostname')"
        )
    main_store = tmp_path / "main.duckdb"
    store.ensure_current(main_store)
    err = refused(capsys, "merge", str(shard), "--store", str(main_store))
    assert "it defines runs" in err and "nothing merged" in err
    assert store.query(main_store, "SELECT count(*) n FROM runs").n.item() == 0
    reliability.bad_input("merge a shard whose runs is a file-reading view", True)


def test_merge_reads_a_shards_columns_by_name(tmp_path: Path) -> None:
    """A shard whose columns stand in another order merges each value into its own column."""
    shard = tiny_shard(tmp_path, "r20261202-120000-cols")
    with duckdb.connect(str(shard)) as con:
        info = con.execute("SELECT name FROM pragma_table_info('runs')").fetchall()
        columns = [c for (c,) in info]
        reordered = ", ".join(f'"{c}"' for c in reversed(columns))
        con.execute(f"CREATE TABLE runs2 AS SELECT {reordered} FROM runs")
        con.execute("DROP TABLE runs")
        con.execute("ALTER TABLE runs2 RENAME TO runs")
    main_store = tmp_path / "main.duckdb"
    assert main(["merge", str(shard), "--store", str(main_store)]) in (0, 1)
    run = store.get_run(main_store, "r20261202-120000-cols")
    assert run["host"] == "synth-node" and run["status"] in ("complete", "interrupted", "failed")


@pytest.mark.parametrize("kind", ["devnull", "folder", "text", "main", "schema_only"])
def test_merge_refuses_what_is_not_a_shard(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    """/dev/null, a folder, a text file, the main store itself, a DuckDB file with only a
    schema_version table: one line, exit 2, the main store unchanged."""
    main_store = tmp_path / "main.duckdb"
    store.ensure_current(main_store)
    shard = {
        "devnull": Path("/dev/null"),
        "folder": tmp_path,
        "text": tmp_path / "notes.duckdb",
        "main": main_store,
        "schema_only": tmp_path / "bare.duckdb",
    }[kind]
    if kind == "text":
        shard.write_text("not a store\n")
    if kind == "schema_only":
        with duckdb.connect(str(shard)) as con:
            con.execute("CREATE TABLE schema_version AS SELECT 99 AS version")
    before = main_store.read_bytes()
    err = refused(capsys, "merge", str(shard), "--store", str(main_store))
    assert "shard" in err
    assert main_store.read_bytes() == before
    reliability.bad_input(f"merge {kind} as a shard", True)


@pytest.mark.parametrize(
    ("spec_text", "words"),
    [
        ("a = " + "[" * 2000 + "]" * 2000 + "\n", "nested too deeply"),
        ('sizes = [8]\nranks = [2]\nlauncher = "mpiexec -n {ranks} {ranks.foo}"\n', "placeholder"),
        ('sizes = [8]\nranks = [2]\nlauncher = "mpiexec -n {ranks} {ranks[0]}"\n', "placeholder"),
        ('sizes = [8]\nranks = [2]\nlauncher = "mpiexec\\u0000 -n {ranks}"\n', "control"),
    ],
)
def test_spec_gaps_are_bad_input(
    tmp_path: Path, spec_text: str, words: str, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text)
    db = tmp_path / "s.duckdb"
    assert words in refused(capsys, "sweep", str(spec), "--store", str(db))
    assert not db.exists()
    reliability.bad_input(f"spec: {words}", True)


@pytest.mark.parametrize("kind", ["fifo", "devzero"])
def test_a_spec_that_is_not_a_file_is_refused_without_reading_it(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    spec = Path("/dev/zero") if kind == "devzero" else tmp_path / "spec.toml"
    if kind == "fifo":
        os.mkfifo(spec)
    err = refused(capsys, "sweep", str(spec), "--store", str(tmp_path / "s.duckdb"))
    assert "not a regular file" in err
    reliability.bad_input(f"spec is a {kind}", True)


def test_a_long_sizes_list_with_repeats_is_read_at_once() -> None:
    notes: list[str] = []
    spec = parse_spec(f"sizes = [{', '.join(['8'] * 100_000)}, 16]\nranks = [2]\n", notes=notes)
    assert spec.sizes == (8, 16) and "[8]" in notes[0]


def test_an_empty_store_option_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--store is empty" in refused(capsys, "runs", "--store", "")


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf", "1e9"])
def test_a_bad_lock_timeout_is_one_line(
    value: str, demo_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """COLLSWEEP_LOCK_TIMEOUT_S must be seconds in (0, 3600]; a bad one is bad input."""
    monkeypatch.setenv(store.LOCK_TIMEOUT_ENV, value)
    assert store.LOCK_TIMEOUT_ENV in refused(capsys, "runs", "--store", str(demo_copy))


@pytest.mark.parametrize("value", ["abc", "0", "nan", "61"])
def test_a_bad_calibration_budget_is_one_line_before_anything_is_written(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """COLLSWEEP_CALIBRATION_BUDGET_S must be seconds in (0, 60]: a sweep refuses a bad one
    in one line, exit 2, its store never made."""
    from runners.jobs.calibration_budget import BUDGET_ENV

    monkeypatch.setenv(BUDGET_ENV, value)
    db = tmp_path / "s.duckdb"
    said = refused(capsys, "sweep", "--sizes", "8", "--ranks", "2", "--store", str(db))
    assert BUDGET_ENV in said and not db.exists()


def test_the_lock_timeout_is_how_long_a_command_waits(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store held by another connection: the wait ends after the configured seconds."""
    monkeypatch.setenv(store.LOCK_TIMEOUT_ENV, "0.5")
    with duckdb.connect(str(demo_copy)), pytest.raises(store.StoreBusy, match="500 ms"):
        store.query(demo_copy, "SELECT 1")


@pytest.mark.parametrize(
    "command",
    [["runs"], ["query", "SELECT * FROM runs"], ["sweep", "--sizes", "8", "--ranks", "2"],
     ["analyze", RUN_A], ["merge", "SHARD"], ["calibrate"]],
    ids=lambda c: c[0],
)  # fmt: skip
def test_a_store_that_fails_its_checksums_is_refused_and_never_written(
    command: list[str], demo_copy: Path, tmp_path: Path, capsys, reliability
) -> None:
    """A block of the runs table overwritten: every command says the store is damaged and how
    to salvage it (exit 2, one line); none writes to it, none starts a rank."""
    damage_runs_block(demo_copy)
    before = demo_copy.read_bytes()
    shard = tiny_shard(tmp_path / "shards", "r20260101-000000-abcd") if "SHARD" in command else None
    argv = [str(shard) if c == "SHARD" else c for c in command]
    err = refused(capsys, *argv, "--store", str(demo_copy))
    clean = "is damaged" in err and "checksum" in err and f"salvage --store {demo_copy}" in err
    clean = clean and demo_copy.read_bytes() == before
    clean = clean and not Path(f"{demo_copy}.wal").exists()
    reliability.bad_input(f"store failing its checksums: {command[0]}", clean)
    assert clean, err


def test_verify_counts_of_equal_block_collectives_are_sized_as_their_whole_vector(
    capsys: pytest.CaptureFixture[str], reliability
) -> None:
    """allgather's counts are per block, so its vector is p times larger: the largest count
    one rank's buffers could hold is refused for allgather on 4 ranks, before any rank
    starts."""
    from runners.domain.sweep.capacity import largest_payload
    from runners.host.memory import available_bytes

    per_rank = (
        largest_payload(4, available_bytes()) // 8
    )  # float64 elements the ranks of p=4 can hold
    argv = ["verify", "--ranks", "4", "--dtypes", "float64", "--counts", str(per_rank)]
    assert "--counts (as bytes) up to" in refused(capsys, *argv, "--collectives", "allgather")
    reliability.bad_input("verify --collectives allgather --counts (whole vector too big)", True)


def test_a_workload_order_past_what_a_replay_can_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    """50 bytes of order asking for 10^12 calls: refused as it is read, never spelled out."""
    workload = json.loads((ROOT / "data" / "workload.json").read_text())
    workload["order"] = [[0, 10**12]]
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    assert "at most 10,000,000 can be replayed" in refused(capsys, "workload", "show", str(path))
    reliability.bad_input("workload order of 10^12 calls", True)


def test_a_ddp_world_past_any_machine_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["workload", "from-ddp", "params.json", "--ranks", str(10**9), "--out", "w.json"])
    assert ended.value.code == 2 and "from 1 to 1048576" in capsys.readouterr().err
    reliability.bad_input("workload from-ddp --ranks 10^9", True)


@pytest.mark.parametrize(
    ("sql", "column"),
    [
        ("UPDATE points SET median_s = 'NaN'::DOUBLE", "points.median_s"),
        ("UPDATE points SET launches = -3", "points.launches"),
        ("UPDATE samples SET seconds = 'inf'::DOUBLE", "samples.seconds"),
        ("UPDATE runs SET host = repeat('x', 5000000)", "runs.host"),
    ],
)
def test_merge_refuses_a_shard_holding_values_no_sweep_writes(
    tmp_path: Path, sql: str, column: str, capsys: pytest.CaptureFixture[str], reliability
) -> None:
    shard = tiny_shard(tmp_path, "r20261202-120000-vals")
    with duckdb.connect(str(shard)) as con:
        con.execute(sql)
    main_store = tmp_path / "main.duckdb"
    store.ensure_current(main_store)
    err = refused(capsys, "merge", str(shard), "--store", str(main_store))
    assert f"{column} holds a value no sweep writes" in err and "nothing merged" in err
    assert store.query(main_store, "SELECT count(*) n FROM points").n.item() == 0
    reliability.bad_input(f"merge a shard with {sql}", True)
