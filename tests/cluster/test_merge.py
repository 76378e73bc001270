"""`collsweep merge`: shard stores of one run folded into the main store (no cluster needed:
the shards are synthetic stores, as a batch job's tasks would write them)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from helpers import synthetic

from runners import store
from runners.cli.main import main

RUN = "r20261202-120000-shrd"


def shard(folder: Path, name: str, ranks: int) -> Path:
    """A task's shard: the run RUN at one group size, complete."""
    path = folder / f"{name}.duckdb"
    spec = synthetic.RunSpec(run_id=RUN, ranks=(ranks,), timeout_point=False)
    synthetic.build_store(path, [spec])
    return path


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("shards")
    return shard(folder, "77_0", 2), shard(folder, "77_1", 3)


def counts(db: Path) -> tuple[int, int]:
    points = store.query(db, "SELECT count(*) n FROM points").n.item()
    samples = store.query(db, "SELECT count(*) n FROM samples").n.item()
    return int(points), int(samples)


def test_shards_merge_into_one_analysed_run_and_twice_adds_nothing(
    shards: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "main.duckdb"
    assert main(["merge", *map(str, shards), "--store", str(db)]) == 0
    out = capsys.readouterr().out
    assert "77_0.duckdb: " in out and f"run {RUN}: complete" in out
    expected = tuple(sum(c) for c in zip(*(counts(s) for s in shards), strict=True))
    assert counts(db) == expected
    run = store.get_run(db, RUN)
    assert run["status"] == "complete" and "ranks = [2, 3]" in run["spec_toml"]
    assert store.query(db, "SELECT count(*) n FROM winners WHERE run_id = ?", [RUN]).n.item() > 0
    assert main(["merge", *map(str, shards), "--store", str(db)]) == 0
    assert "0 points added, 0 replaced" in capsys.readouterr().out
    assert counts(db) == expected
    ids = store.query(db, "SELECT point_id FROM points").point_id
    assert ids.is_unique


def test_a_partial_merge_says_how_to_finish_it(
    shards: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One task's shard alone: the run has the spec of the shards merged so far."""
    db = tmp_path / "main.duckdb"
    assert main(["merge", str(shards[0]), "--store", str(db)]) == 0
    assert store.get_run(db, RUN)["status"] == "complete"
    running = tmp_path / "77_1.duckdb"
    running.write_bytes(shards[1].read_bytes())
    with duckdb.connect(str(running)) as con:
        con.execute("UPDATE runs SET status = 'running'")
    assert main(["merge", str(running), "--store", str(db)]) == 1
    assert "left alone: run" in capsys.readouterr().out
    assert set(store.query(db, "SELECT ranks FROM points").ranks) == {2}


def test_a_shard_from_a_newer_collsweep_is_refused_and_nothing_changes(
    shards: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "main.duckdb"
    newer = tmp_path / "77_9.duckdb"
    newer.write_bytes(shards[1].read_bytes())
    with duckdb.connect(str(newer)) as con:
        con.execute("UPDATE schema_version SET version = version + 1")
    assert main(["merge", str(shards[0]), str(newer), "--store", str(db)]) == 2
    assert "newer than this collsweep" in capsys.readouterr().err
    assert counts(db) == (0, 0)  # one transaction: the good shard is not half-merged either


def test_a_shard_holding_another_runs_point_changes_nothing(
    shards: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 50 item 3: a crafted shard of another run, holding a point id of RUN."""
    db = tmp_path / "main.duckdb"
    assert main(["merge", str(shards[0]), "--store", str(db)]) == 0
    before = counts(db)
    hostile = tmp_path / "hostile.duckdb"
    hostile.write_bytes(shards[0].read_bytes())
    with duckdb.connect(str(hostile)) as con:
        for table in ("runs", "points", "samples", "probes"):
            con.execute(f"UPDATE {table} SET run_id = 'ft-0'")
    capsys.readouterr()
    assert main(["merge", str(hostile), "--store", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert "would change another run" in err and f"belongs to run {RUN}" in err
    assert len(err.splitlines()) == 1
    assert counts(db) == before and store.get_run(db, "ft-0") is None


def test_merge_needs_shards_or_a_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["merge", "--store", str(tmp_path / "m.duckdb")]) == 2
    assert main(["merge", "--job", "123", "--store", str(tmp_path / "m.duckdb")]) == 2
    assert "no shards of job 123" in capsys.readouterr().err
