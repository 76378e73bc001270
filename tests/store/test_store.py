"""The results store on real DuckDB files: schema, migrations, upserts, read-only use, locking."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from conftest import ROOT
from helpers.store_rows import point_row, run_row, sample_rows

from runners import store
from runners.store import schema

REPO = ROOT
SCHEMA_DOC = REPO / "docs" / "schema.md"


def scalar(path: Path, sql: str):
    """The single value a query returns."""
    return store.query(path, sql).iat[0, 0]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "results" / "store.duckdb"


def make_v1_store(path: Path) -> None:
    """A store as collsweep's schema 1 left it, holding one run with two points."""
    con = duckdb.connect(str(path))
    for statement in dict(store.MIGRATIONS)[1]:
        con.execute(statement)
    con.execute("INSERT INTO schema_version VALUES (1)")
    con.execute("INSERT INTO runs (run_id, status, environment) VALUES ('old', 'complete', '{}')")
    con.execute(
        "INSERT INTO points (point_id, run_id, algorithm, ranks, bytes, dtype, op, status, "
        "median_s) VALUES ('old/ring', 'old', 'ring', 4, 64, 'float32', 'sum', 'ok', 0.5), "
        "('old/mpi', 'old', 'mpi', 4, 64, 'float32', 'sum', 'skipped', NULL)"
    )
    con.execute("INSERT INTO samples VALUES ('old/ring', 'old', 0, 0.5, 0)")
    con.close()


def set_version(path: Path, version: int) -> None:
    """Rewrite a store's schema_version row."""
    con = duckdb.connect(str(path))
    con.execute("UPDATE schema_version SET version = ?", [version])
    con.close()


# --- creation, versions, migrations ---------------------------------------------------------------


def test_default_store_honours_the_environment(monkeypatch):
    monkeypatch.delenv(store.STORE_ENV, raising=False)
    assert store.default_store() == Path("data/collsweep.duckdb")
    monkeypatch.setenv(store.STORE_ENV, "/tmp/elsewhere.duckdb")
    assert store.default_store() == Path("/tmp/elsewhere.duckdb")


def test_first_write_creates_a_current_store(path):
    store.create_run(path, run_row())
    assert store.stored_schema_version(path) == store.SCHEMA_VERSION
    tables = set(store.query(path, "SELECT table_name FROM duckdb_tables()").table_name)
    expected = {"schema_version", "runs", "points", "samples", "calibrations", "predictions"}
    analysis = {"assumptions", "crossovers", "best_choices", "agreement", "winners", "probes"}
    analysis |= {"model_accuracy", "against_default", "cell_inferences"}
    workloads = {"workloads", "workload_policies", "workload_calls", "replays"}
    assert expected | analysis | workloads == tables
    assert scalar(path, "SELECT count(*) FROM schema_version") == 1
    assert os.listdir(path.parent) == [path.name], "no temporary files left behind"


def test_ensure_current_creates_and_reports_versions(path):
    assert store.ensure_current(path) == 0
    assert store.ensure_current(path) == store.SCHEMA_VERSION
    assert store.migrate(path) == (store.SCHEMA_VERSION, store.SCHEMA_VERSION)
    with pytest.raises(store.StoreError, match="no results store"):
        store.migrate(path.with_name("absent.duckdb"))


def test_v1_store_is_migrated_with_its_data_intact(path):
    path.parent.mkdir()
    make_v1_store(path)
    assert store.stored_schema_version(path) == 1
    assert store.migrate(path) == (1, store.SCHEMA_VERSION)
    assert store.stored_schema_version(path) == store.SCHEMA_VERSION
    assert store.get_run(path, "old")["status"] == "complete"
    points = store.query(path, "SELECT point_id, status, median_s FROM points ORDER BY 1")
    assert points.point_id.tolist() == ["old/mpi", "old/ring"]
    assert points.median_s.tolist()[1] == 0.5
    assert scalar(path, "SELECT count(*) FROM samples") == 1
    assert scalar(path, "SELECT count(*) FROM calibrations") == 0


def test_any_write_migrates_a_v1_store(path):
    path.parent.mkdir()
    make_v1_store(path)
    store.add_calibration(path, {"calibration_id": "c1", "alpha_s": 1e-6})
    assert store.stored_schema_version(path) == store.SCHEMA_VERSION
    assert store.point_ids(path, "old") == {"old/ring", "old/mpi"}


def test_a_failed_migration_leaves_the_file_unchanged(path, monkeypatch):
    path.parent.mkdir()
    make_v1_store(path)

    def broken(con):
        con.execute("CREATE TABLE half_done (x INTEGER)")
        raise RuntimeError("boom")

    broken_version = store.SCHEMA_VERSION + 1
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, (broken_version, broken)])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", broken_version)
    message = rf"could not upgrade .* from schema 1 to {broken_version}.*boom"
    with pytest.raises(store.StoreError, match=message):
        store.ensure_current(path)
    monkeypatch.undo()
    assert store.stored_schema_version(path) == 1
    con = duckdb.connect(str(path), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    con.close()
    assert "calibrations" not in tables and "half_done" not in tables


def test_readers_do_not_migrate_and_say_how_to(path):
    path.parent.mkdir()
    make_v1_store(path)
    message = rf"older than this collsweep's schema {store.SCHEMA_VERSION}.*migrate"
    with pytest.raises(store.StoreError, match=message):
        store.query(path, "SELECT 1")
    assert store.stored_schema_version(path) == 1


def test_newer_schema_is_refused_for_reading_and_writing(path):
    store.ensure_current(path)
    set_version(path, store.SCHEMA_VERSION + 1)
    message = (
        rf"written by a newer collsweep \(schema {store.SCHEMA_VERSION + 1}, this version "
        rf"understands {store.SCHEMA_VERSION}\); upgrade collsweep"
    )
    with pytest.raises(store.StoreError, match=message):
        store.query(path, "SELECT 1")
    with pytest.raises(store.StoreError, match=message):
        store.create_run(path, run_row())
    with pytest.raises(store.StoreError, match=message):
        store.ensure_current(path)


@pytest.mark.parametrize("content", [os.urandom(20000), b"", b"run_id,status\nr1,ok\n"])
def test_a_file_that_is_not_duckdb_is_refused_clearly(path, content):
    path.parent.mkdir()
    path.write_bytes(content)
    for action in (
        lambda: store.query(path, "SELECT 1"),
        lambda: store.create_run(path, run_row()),
    ):
        with pytest.raises(store.StoreError, match=r"not a collsweep results store.*not a DuckDB"):
            action()
    assert path.read_bytes() == content


def test_a_foreign_duckdb_database_is_refused(path):
    path.parent.mkdir()
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE mine (x INTEGER)")
    con.close()
    for action in (
        lambda: store.query(path, "SELECT 1"),
        lambda: store.create_run(path, run_row()),
    ):
        with pytest.raises(store.StoreError, match="DuckDB database but not a collsweep"):
            action()


def test_reading_a_missing_store_fails_clearly_and_creates_nothing(path):
    with pytest.raises(store.StoreError, match="no results store at"):
        store.query(path, "SELECT 1")
    with pytest.raises(store.StoreError, match="no results store at"), store.open_readonly(path):
        pass
    assert store.get_run(path, "r1") is None
    assert store.point_ids(path, "r1") == set()
    assert store.latest_calibration(path) is None
    assert not path.exists() and not path.parent.exists()


# --- runs -----------------------------------------------------------------------------------------


def test_runs_round_trip(path):
    store.create_run(path, run_row(spec_toml="ranks = [4]\n"))
    run = store.get_run(path, "r1")
    assert run["status"] == "running" and run["finished_at"] is None
    assert run["environment"] == {"MPI4PY_RC_THREAD_LEVEL": "single"}
    assert abs(run["started_at"] - datetime.now(UTC).replace(tzinfo=None)) < timedelta(minutes=1)
    store.finish_run(path, "r1", "interrupted", "Ctrl-C")
    run = store.get_run(path, "r1")
    assert (run["status"], run["status_reason"]) == ("interrupted", "Ctrl-C")
    assert run["finished_at"] >= run["started_at"]
    assert store.get_run(path, "nope") is None


def test_run_writes_are_validated(path):
    with pytest.raises(ValueError, match=r"unknown runs column.*colour"):
        store.create_run(path, run_row(colour="blue"))
    with pytest.raises(ValueError, match="run status"):
        store.create_run(path, run_row(status="done"))
    store.create_run(path, run_row())
    with pytest.raises(store.StoreError, match="already exists"):
        store.create_run(path, run_row())
    with pytest.raises(store.StoreError, match="no run 'r2'"):
        store.finish_run(path, "r2", "complete")
    with pytest.raises(ValueError, match="run status"):
        store.finish_run(path, "r1", "done")


def test_update_run_sets_some_columns(path):
    store.create_run(path, run_row(environment={}))
    env = {"jobs": {"ranks=4": {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring"}}}
    store.update_run(path, "r1", {"mpi_library": "MPICH Version: 5.0.2", "environment": env})
    store.finish_run(path, "r1", "interrupted", "SIGTERM")
    store.update_run(path, "r1", {"status": "running", "status_reason": ""})
    run = store.get_run(path, "r1")
    assert run["environment"] == env and run["mpi_library"] == "MPICH Version: 5.0.2"
    assert (run["status"], run["status_reason"], run["host"]) == ("running", "", "node1")
    with pytest.raises(ValueError, match="cannot update runs column"):
        store.update_run(path, "r1", {"run_id": "r2"})
    with pytest.raises(ValueError, match="cannot update runs column"):
        store.update_run(path, "r1", {"colour": "blue"})
    with pytest.raises(store.StoreError, match="no run 'r9'"):
        store.update_run(path, "r9", {"host": "x"})
    with pytest.raises(store.StoreError, match="no results store"):
        store.update_run(path.with_name("absent.duckdb"), "r1", {"host": "x"})


def test_timestamps_are_stored_as_naive_utc(path):
    plus2 = timezone(timedelta(hours=2))
    store.create_run(path, run_row(started_at=datetime(2026, 12, 1, 21, 0, tzinfo=plus2)))
    assert store.get_run(path, "r1")["started_at"] == datetime(2026, 12, 1, 19, 0)
    epoch = datetime(2026, 12, 1, 19, 0, 30, tzinfo=UTC).timestamp()
    point = point_row("r1", "ring", 8, started_at=epoch, finished_at="2026-12-01T19:01:00+00:00")
    store.add_points(path, [point], [])
    got = store.query(path, "SELECT started_at, finished_at FROM points").iloc[0]
    assert got.started_at == datetime(2026, 12, 1, 19, 0, 30)
    assert got.finished_at == datetime(2026, 12, 1, 19, 1)


# --- points and samples ---------------------------------------------------------------------------


def test_rewriting_points_replaces_them_and_their_samples(path):
    store.create_run(path, run_row())
    points = [point_row("r1", "ring", b) for b in (8, 64)]
    store.add_points(path, points, [s for p in points for s in sample_rows(p["point_id"], 5)])
    slower = [p | {"median_s": 1.0} for p in points]
    samples = [s for p in points for s in sample_rows(p["point_id"], 3, scale=10.0)]
    store.add_points(path, slower, samples)
    assert scalar(path, "SELECT count(*) FROM points") == 2
    assert scalar(path, "SELECT count(*) FROM samples") == 6
    assert scalar(path, "SELECT min(median_s) FROM points") == 1.0
    assert scalar(path, "SELECT min(seconds) FROM samples") == 10.0
    assert scalar(path, "SELECT count(DISTINCT run_id) FROM samples") == 1


def test_summaries_of_unfinished_points_are_null(path):
    failed = point_row("r1", "ring", 8, "failed", reason="mismatch", median_s=math.nan)
    skipped = point_row("r1", "mpi", 8, "skipped", reason="unsupported")
    store.add_points(path, [failed, skipped], [])
    got = store.query(path, "SELECT status, reason, median_s IS NULL AS no_median FROM points")
    assert got.no_median.all()
    assert sorted(got.reason) == ["mismatch", "unsupported"]


def test_point_writes_are_validated(path):
    point = point_row("r1", "ring", 8)
    with pytest.raises(ValueError, match=r"unknown points column.*latency"):
        store.add_points(path, [point | {"latency": 1}], [])
    with pytest.raises(ValueError, match="lacks required ranks"):
        store.add_points(path, [{k: v for k, v in point.items() if k != "ranks"}], [])
    with pytest.raises(ValueError, match="point status"):
        store.add_points(path, [point | {"status": "done"}], [])
    with pytest.raises(ValueError, match="duplicate point_id"):
        store.add_points(path, [point, point], [])
    with pytest.raises(ValueError, match="samples for points not in this call"):
        store.add_points(path, [point], sample_rows("r1/other", 2))
    with pytest.raises(ValueError, match="duplicate"):
        store.add_points(path, [point], sample_rows(point["point_id"], 2) * 2)
    assert not path.exists() or scalar(path, "SELECT count(*) FROM points") == 0


def test_point_ids_lists_stored_points_for_resume(path):
    points = [
        point_row("r1", "ring", 8),
        point_row("r1", "mpi", 8, "timeout", reason="killed after 60 s"),
        point_row("r2", "ring", 8),
    ]
    store.add_points(path, points, [])
    assert store.point_ids(path, "r1") == {"r1/ring/4/8/float32/sum", "r1/mpi/4/8/float32/sum"}
    assert store.point_ids(path, "r1", statuses=["ok"]) == {"r1/ring/4/8/float32/sum"}
    assert store.point_ids(path, "r3") == set()


def test_a_hundred_thousand_samples_insert_in_one_call(path):
    # how fast is make bench's business (figure 4), never a unit test's: the machine drifts
    store.ensure_current(path)
    points = [point_row("r1", "ring", 8 * (k + 1)) for k in range(100)]
    samples = [s for p in points for s in sample_rows(p["point_id"], 1000)]
    store.add_points(path, points, samples)
    assert scalar(path, "SELECT count(*) FROM samples") == 100_000


# --- model outputs --------------------------------------------------------------------------------


def test_calibrations_latest_and_json(path):
    segments = [{"min_bytes": 8, "max_bytes": 4096, "alpha_s": 2e-6, "beta_s_per_byte": 1e-10}]
    old = datetime(2026, 1, 1)
    store.add_calibration(path, {"calibration_id": "a", "host": "n1", "created_at": old})
    store.add_calibration(
        path,
        {
            "calibration_id": "b",
            "host": "n2",
            "created_at": old + timedelta(days=1),
            "segments": segments,
            "gammas": {"float32/sum": 3e-10},
            "breakpoints": [4096],
        },
    )
    latest = store.latest_calibration(path)
    assert latest["calibration_id"] == "b"
    assert latest["segments"] == segments and latest["gammas"] == {"float32/sum": 3e-10}
    assert store.latest_calibration(path, host="n1")["calibration_id"] == "a"
    assert store.latest_calibration(path, host="n3") is None
    store.add_calibration(path, {"calibration_id": "a", "host": "n1", "source": "pingpong"})
    assert store.latest_calibration(path)["source"] == "pingpong", "replaced, created now"
    assert scalar(path, "SELECT count(*) FROM calibrations") == 2
    with pytest.raises(json.JSONDecodeError):
        store.add_calibration(path, {"calibration_id": "c", "details": "{not json"})


def test_predictions_upsert_by_point_and_calibration(path):
    row = {
        "point_id": "p1",
        "run_id": "r1",
        "calibration_id": "c1",
        "model": "ring",
        "predicted_s": 1.0,
        "latency_s": 0.5,
        "bandwidth_s": 0.4,
        "reduction_s": 0.1,
    }
    store.add_predictions(path, [row, row | {"calibration_id": "c2"}])
    store.add_predictions(path, [row | {"predicted_s": 2.0}])
    got = store.query(path, "SELECT calibration_id, predicted_s FROM predictions ORDER BY 1")
    assert got.values.tolist() == [["c1", 2.0], ["c2", 1.0]]


def test_assumptions_and_crossovers_are_replaced_per_run(path):
    checks = [
        {"name": "no_oversubscription", "state": "violated", "detail": "8 ranks on 2 cores"},
        {"point_id": "r1/ring", "name": "ci_target", "state": "holds"},
    ]
    store.replace_assumptions(path, "r1", checks)
    store.replace_assumptions(path, "r2", checks[:1])
    store.replace_assumptions(path, "r1", checks[1:])
    assert scalar(path, "SELECT count(*) FROM assumptions") == 2
    with pytest.raises(ValueError, match="assumption state"):
        store.replace_assumptions(path, "r1", [{"name": "x", "state": "maybe"}])
    with pytest.raises(ValueError, match="given for run 'r1'"):
        store.replace_assumptions(path, "r1", [checks[0] | {"run_id": "r2"}])

    crossing = {
        "ranks": 4,
        "dtype": "float32",
        "op": "sum",
        "algorithm_a": "recursive_doubling",
        "algorithm_b": "ring",
        "kind": "measured",
        "bytes": 65536.0,
    }
    store.replace_crossovers(path, "r1", [crossing, crossing | {"kind": "predicted"}])
    store.replace_crossovers(path, "r1", [crossing | {"low_bytes": 32768.0}])
    got = store.query(path, "SELECT kind, low_bytes, high_bytes FROM crossovers")
    assert got.kind.tolist() == ["measured"] and got.low_bytes.tolist() == [32768.0]
    assert got.high_bytes.isna().all()
    with pytest.raises(ValueError, match="crossover kind"):
        store.replace_crossovers(path, "r1", [crossing | {"kind": "guessed"}])


# --- read-only access -----------------------------------------------------------------------------


def test_query_returns_a_frame_and_takes_parameters(path):
    store.add_points(path, [point_row("r1", "ring", b) for b in (8, 16, 32)], [])
    got = store.query(path, "SELECT bytes FROM points WHERE bytes > ? ORDER BY bytes", [8])
    assert got.bytes.tolist() == [16, 32]
    with pytest.raises(store.QueryError, match="nope"):
        store.query(path, "SELECT * FROM nope")


def test_read_only_connections_can_join_registered_frames(path):
    store.add_points(path, [point_row("r1", "ring", b) for b in (8, 16)], [])
    wanted = pd.DataFrame({"bytes": [16]})
    with store.open_readonly(path) as con:
        con.register("wanted", wanted)  # fails if open_readonly left a result unfetched
        got = con.execute("SELECT p.bytes FROM points p JOIN wanted USING (bytes)").df()
    assert got.bytes.tolist() == [16]


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO runs (run_id, status) VALUES ('x', 'running')",
        "CREATE TABLE evil (x INTEGER)",
        "UPDATE schema_version SET version = 99",
        "SELECT * FROM read_csv('/etc/hostname')",
        "ATTACH '/tmp/collsweep-attach-test.duckdb' AS other",
        "COPY runs TO '/tmp/collsweep-copy-test.csv'",
        "SET enable_external_access = true",
    ],
)
def test_read_only_connections_refuse_writes_and_file_access(path, sql):
    store.create_run(path, run_row())
    with store.open_readonly(path) as con, pytest.raises(duckdb.Error):
        con.execute(sql)
    with pytest.raises(store.QueryError):
        store.query(path, sql)
    assert not Path("/tmp/collsweep-copy-test.csv").exists()
    assert store.stored_schema_version(path) == store.SCHEMA_VERSION


# --- several processes ----------------------------------------------------------------------------

HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""

WRITER = """
import os, sys, time
from runners import store
path, run, batches, reads = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def wait_for_a_read(after):
    while (os.path.getsize(reads) if os.path.exists(reads) else 0) <= after:
        time.sleep(0.01)

store.create_run(path, {"run_id": run})
wait_for_a_read(0)  # the reader reads from the start
for i in range(batches):
    if i == batches // 2:  # and again while this writer is halfway: reads meet writes
        wait_for_a_read(os.path.getsize(reads))
    pid = f"{run}/{i}"
    point = {"point_id": pid, "run_id": run, "algorithm": "ring", "ranks": 2, "bytes": i,
             "dtype": "float32", "op": "sum", "status": "ok", "median_s": 1e-6}
    store.add_points(path, [point], [{"point_id": pid, "iteration": k, "seconds": 1e-6}
                                     for k in range(5)])
store.finish_run(path, run, "complete")
"""

READER = """
import json, os, sys, time
from runners import store
path, stop, reads = sys.argv[1], sys.argv[2], sys.argv[3]
ok, failures = 0, []
while not os.path.exists(path):
    time.sleep(0.01)
while not os.path.exists(stop):
    try:
        store.query(path, "SELECT run_id, count(*) FROM points GROUP BY run_id")
        ok += 1
        with open(reads, "a") as handle:  # each read said, for the writers that wait on one
            handle.write("1\\n")
    except Exception as exc:
        failures.append(repr(exc))
    time.sleep(0.02)
print(json.dumps({"ok": ok, "failures": failures}))
"""


def python(code: str, *args: object, **kwargs) -> subprocess.Popen:
    """Start ``python -c code args`` in the repository."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kwargs,
    )


@pytest.mark.slow
def test_a_held_lock_is_waited_for_and_a_reader_timeout_is_clear(path):
    store.ensure_current(path)
    holder = python(HOLDER, path, 2.0)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(store.StoreError, match="stayed busy"):
            store.query(path, "SELECT 1", timeout=0.3)
        store.create_run(path, run_row())  # waits for the holder to let go
    finally:
        holder.wait(timeout=30)
    assert store.get_run(path, "r1") is not None


@pytest.fixture(scope="module")
def contended(tmp_path_factory) -> dict:
    """Two writer processes and a polling reader process on one new store at the same time.

    The writers race to create the store, then each writes its points one batch at a time;
    each waits for a read before its first write and again halfway, so reads meet writes
    however fast the machine is.
    """
    path = tmp_path_factory.mktemp("contended") / "store.duckdb"
    stop, reads = path.with_name("stop"), path.with_name("reads")
    batches = 30  # each a store write of its own: enough for the writers to collide many times
    reader = python(READER, path, stop, reads)
    writers = [python(WRITER, path, run, batches, reads) for run in ("A", "B")]
    results = [(*w.communicate(timeout=120), w.returncode) for w in writers]
    stop.touch()
    out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    return {"path": path, "batches": batches, "writers": results, "reader": json.loads(out)}


@pytest.mark.slow
def test_concurrent_writer_processes_lose_nothing(contended):
    for _out, err, code in contended["writers"]:
        assert code == 0, err
    path, batches = contended["path"], contended["batches"]
    counts = store.query(path, "SELECT run_id, count(*) AS n FROM points GROUP BY 1 ORDER BY 1")
    assert counts.values.tolist() == [["A", batches], ["B", batches]]
    assert scalar(path, "SELECT count(*) FROM samples") == 2 * batches * 5
    assert set(store.query(path, "SELECT status FROM runs").status) == {"complete"}
    assert sorted(os.listdir(path.parent)) == ["reads", "stop", "store.duckdb"]


@pytest.mark.slow
def test_a_reader_keeps_working_while_writers_write(contended):
    assert contended["reader"]["failures"] == []
    assert contended["reader"]["ok"] >= 2  # one before the writes, one during each writer's


# --- docs/schema.md -------------------------------------------------------------------------------


def populate(path: Path) -> None:
    """A store with every table filled, so the documented queries have rows to work on."""
    store.add_calibration(
        path,
        {
            "calibration_id": "cal1",
            "host": "node1",
            "alpha_s": 2e-6,
            "beta_s_per_byte": 1e-10,
            "source": "pingpong",
            "breakpoints": [4096],
            "segments": [
                {
                    "min_bytes": 8,
                    "max_bytes": 4096,
                    "alpha_s": 2e-6,
                    "beta_s_per_byte": 1e-10,
                    "r_squared": 0.99,
                }
            ],
        },
    )
    store.create_run(path, run_row("r1", calibration_id="cal1", memory_setting="madvise"))
    points = [
        point_row("r1", alg, b, median_s=t * b)
        for alg, t in (("ring", 1e-6), ("mpi", 2e-6), ("recursive_doubling", 3e-6))
        for b in (64, 4096)
    ]
    points.append(point_row("r1", "rabenseifner", 64, "timeout", reason="killed"))
    samples = [s for p in points[:2] for s in sample_rows(p["point_id"], 4)]
    store.add_points(path, points, samples)
    store.add_predictions(
        path,
        [
            {
                "point_id": p["point_id"],
                "run_id": "r1",
                "calibration_id": "cal1",
                "model": p["algorithm"],
                "predicted_s": p["median_s"] * 1.2,
            }
            for p in points[:6]
        ],
    )
    store.replace_assumptions(
        path,
        "r1",
        [
            {"name": "not_oversubscribed", "state": "violated"},
            {"point_id": points[0]["point_id"], "name": "power_of_two", "state": "violated"},
        ],
    )
    crossing = {
        "ranks": 4,
        "dtype": "float32",
        "op": "sum",
        "algorithm_a": "recursive_doubling",
        "algorithm_b": "ring",
        "bytes": 1000.0,
    }
    store.replace_crossovers(
        path,
        "r1",
        [
            crossing | {"kind": "measured", "low_bytes": 800.0, "high_bytes": 1300.0},
            crossing | {"kind": "predicted", "calibration_id": "cal1", "bytes": 1200.0},
        ],
    )
    store.add_calibration(path, {"calibration_id": "fitted:r1", "source": "fitted:r1"})
    choice = {"calibration_id": "cal1", "ranks": 4, "dtype": "float32", "op": "sum"}
    store.replace_best_choices(
        path,
        "r1",
        [
            choice | {"bytes": b, "measured_best": "ring", "predicted_best": pick, "slowdown": x}
            for b, pick, x in ((64, "ring", 0.0), (4096, "recursive_doubling", 2.0))
        ],
    )
    store.replace_agreement(
        path,
        "r1",
        [
            {"calibration_id": "cal1", "scope": "run", "points": 2, "model_pick_share": 0.5},
            choice | {"scope": "ranks=4 float32 sum", "points": 2, "mean_slowdown": 1.0},
        ],
    )
    accuracy = {"calibration_id": "cal1", "variant": "contention", "placement": "dedicated"}
    store.replace_model_accuracy(
        path,
        "r1",
        [
            accuracy | {"family": "hand-written", "points": 4, "median_abs_error": 0.08},
            accuracy | {"family": "all", "points": 6, "winner_share": 1.0, "decided_cells": 2},
        ],
    )
    store.finish_run(path, "r1", "complete")


def test_every_documented_query_runs(path):
    queries = re.findall(r"```sql\n(.*?)```", SCHEMA_DOC.read_text(), flags=re.DOTALL)
    assert len(queries) >= 5
    populate(path)
    for sql in queries:
        assert len(store.query(path, sql)) > 0, sql


# --- schema 3: analysis tables ------------------------------------------------------------------


def make_v2_store(path: Path) -> None:
    """A store as schema 2 left it, with one crossover and one assumption check."""
    con = duckdb.connect(str(path))
    for version in (1, 2):
        for statement in dict(store.MIGRATIONS)[version]:
            con.execute(statement)
    con.execute("INSERT INTO schema_version VALUES (2)")
    con.execute(
        "INSERT INTO crossovers (run_id, ranks, dtype, op, algorithm_a, algorithm_b, kind, bytes) "
        "VALUES ('old', 4, 'float32', 'sum', 'ring', 'rabenseifner', 'measured', 5000)"
    )
    con.execute("INSERT INTO assumptions VALUES ('old', NULL, 'single_node', 'holds', 'one host')")
    con.close()


def test_v2_store_gains_the_analysis_tables_with_its_rows_intact(path):
    path.parent.mkdir()
    make_v2_store(path)
    assert store.migrate(path) == (2, store.SCHEMA_VERSION)
    crossing = store.query(path, "SELECT bytes, calibration_id FROM crossovers")
    assert crossing.bytes.tolist() == [5000.0] and crossing.calibration_id.isna().all()
    assert scalar(path, "SELECT detail FROM assumptions WHERE calibration_id IS NULL") == "one host"
    assert scalar(path, "SELECT count(*) FROM best_choices") == 0
    assert scalar(path, "SELECT count(*) FROM agreement") == 0


def test_a_store_from_before_launches_reads_as_one_launch_per_point(path):
    """Schema 4: every sample of an older store came from launch 0, an ok point had one launch
    and its interval is its within-launch CI."""
    path.parent.mkdir()
    make_v1_store(path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE points SET ci_low_s = 0.4, ci_high_s = 0.6, ci_rel_halfwidth = 0.2")
    con.close()
    store.migrate(path)
    rows = store.query(
        path,
        "SELECT point_id, launches, interval_low_s, interval_high_s, interval_rel_halfwidth "
        "FROM points ORDER BY point_id",
    )
    assert rows.launches.tolist() == [0, 1]
    assert rows.iloc[1][["interval_low_s", "interval_high_s"]].tolist() == [0.4, 0.6]
    assert scalar(path, "SELECT list(launch) FROM samples") == [0]


def test_latest_calibration_filters_by_library_and_source(path):
    old = datetime(2026, 1, 1)
    library = "MPICH Version:      5.0.2\nMPICH ABI:   18:2:6"
    for i, (cal_id, source, lib) in enumerate(
        [
            ("ping", "pingpong", library),
            ("other-lib", "pingpong", "Open MPI v5.0"),
            ("fitted:r1", "fitted:r1", library),
        ]
    ):
        row = {"calibration_id": cal_id, "host": "n1", "source": source, "mpi_library": lib}
        store.add_calibration(path, row | {"created_at": old + timedelta(hours=i)})
    assert store.latest_calibration(path)["calibration_id"] == "fitted:r1"
    assert store.latest_calibration(path, "n1", source="pingpong")["calibration_id"] == "other-lib"
    spaced = "  MPICH Version: 5.0.2 MPICH   ABI: 18:2:6\n"
    found = store.latest_calibration(path, "n1", mpi_library=spaced, source="pingpong")
    assert found["calibration_id"] == "ping"
    assert store.latest_calibration(path, "n2", mpi_library=library) is None
    assert store.get_calibration(path, "fitted:r1")["source"] == "fitted:r1"
    assert store.get_calibration(path, "absent") is None


def test_analysis_tables_are_replaced_per_run(path):
    prediction = {"point_id": "p1", "calibration_id": "c1", "model": "ring", "predicted_s": 1.0}
    store.replace_predictions(path, "r1", [prediction, prediction | {"calibration_id": "c2"}])
    store.replace_predictions(path, "r2", [prediction | {"point_id": "p2"}])
    store.replace_predictions(path, "r1", [prediction | {"predicted_s": 3.0}])
    got = store.query(path, "SELECT run_id, predicted_s FROM predictions ORDER BY run_id")
    assert got.values.tolist() == [["r1", 3.0], ["r2", 1.0]]
    with pytest.raises(ValueError, match="duplicate"):
        store.replace_predictions(path, "r1", [prediction, prediction])

    choice = {
        "calibration_id": "c1",
        "ranks": 4,
        "bytes": 64,
        "dtype": "float32",
        "op": "sum",
        "measured_best": "ring",
        "predicted_best": "ring",
    }
    store.replace_best_choices(path, "r1", [choice, choice | {"bytes": 128}])
    store.replace_best_choices(path, "r1", [choice])
    assert scalar(path, "SELECT count(*) FROM best_choices") == 1
    with pytest.raises(ValueError, match="lacks required"):
        store.replace_best_choices(path, "r1", [{"calibration_id": "c1"}])

    row = {"calibration_id": "c1", "scope": "run", "points": 1, "model_pick_share": 1.0}
    store.replace_agreement(path, "r1", [row])
    store.replace_agreement(path, "r2", [row])
    store.replace_agreement(path, "r1", [])
    assert store.query(path, "SELECT run_id FROM agreement").run_id.tolist() == ["r2"]
    with pytest.raises(ValueError, match="given for run 'r1'"):
        store.replace_agreement(path, "r1", [row | {"run_id": "r2"}])


def test_a_runs_analysis_is_replaced_all_or_nothing(path):
    """replace_analysis: every table given holds its new rows, or, when one table's rows are
    refused (a crossover of no known kind) or the write fails midway, none has changed."""
    prediction = {"point_id": "p1", "calibration_id": "c1", "model": "ring", "predicted_s": 1.0}
    row = {"calibration_id": "c1", "scope": "run", "points": 1, "model_pick_share": 1.0}
    store.replace_analysis(path, "r1", {"predictions": [prediction], "agreement": [row]})
    newer = {"predictions": [prediction | {"predicted_s": 2.0}], "agreement": []}
    with pytest.raises(ValueError, match="crossover kind"):
        store.replace_analysis(path, "r1", newer | {"crossovers": [{"kind": "guessed"}]})
    with pytest.raises(ValueError, match="lacks required"):  # refused by the store midway
        store.replace_analysis(path, "r1", newer | {"best_choices": [{"calibration_id": "c1"}]})
    assert scalar(path, "SELECT predicted_s FROM predictions") == 1.0
    assert scalar(path, "SELECT count(*) FROM agreement") == 1
    store.replace_analysis(path, "r1", newer)
    assert scalar(path, "SELECT predicted_s FROM predictions") == 2.0
    assert scalar(path, "SELECT count(*) FROM agreement") == 0
    with pytest.raises(ValueError, match="not analysis tables: runs"):
        store.replace_analysis(path, "r1", {"runs": []})


def test_collsweep_runs_lists_group_sizes_in_numeric_order(path):
    from runners.store.reports import runs_table

    store.create_run(path, {"run_id": "r1", "host": "h"})
    rows = [
        point_row("r1", "ring", 8, ranks=p, point_id=f"r1/ring/{p}/8/float32/sum")
        for p in (16, 2, 4)
    ]
    store.add_points(path, rows, [])
    assert runs_table(path).set_index("run_id").at["r1", "ranks"] == "2,4,16"
