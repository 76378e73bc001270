"""A user's SQL (`collsweep query`, the dashboard's SQL page) runs in a process of its own whose
time and memory limits hold whatever DuckDB's own accounting misses (runners.store.user_query).
Peak memory is the largest finished descendant's (RUSAGE_CHILDREN of a wrapper process)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, processes_with, run_cli

from dashboard import queries
from runners import store
from runners.process.faults import FAULT_ENV, HOOKS_ENV, RELEASE_ENV
from runners.store import user_query
from runners.store.storefile import MEMORY_ENV
from runners.store.user_query import run_user_query

PEAK = (
    "import resource, subprocess, sys\nrun = subprocess.run(sys.argv[1:])\n"
    "print('peak', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(run.returncode)\n"
)


def query_measured(*args: str, env: dict[str, str] | None = None):
    """`collsweep query ARGS`: the result, its wall time in s, and its peak memory in bytes
    (the largest of collsweep and its children), with the CLI's own stderr lines apart."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, sys.executable, "-m", "runners.cli", "query", *args],
        cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    seconds = time.monotonic() - started
    *said, peak = done.stderr.strip().splitlines()
    return done, said, seconds, int(peak.split()[1]) * 1024


@pytest.mark.slow
def test_a_string_past_the_memory_limit_is_refused_at_once(demo_store: Path) -> None:
    """DuckDB's memory_limit does not count a string function's result: before, this query
    grew the process to 3.97 GB (8 GB here) and ran 48 s against a 30 s limit."""
    sql = "SELECT length(repeat('x', 4000000000))"
    done, said, seconds, peak = query_measured(sql, "--store", str(demo_store))
    print(f"refused after {seconds:.2f} s, peak {peak / 2**20:.0f} MiB")
    assert done.returncode == 1 and len(said) == 1 and "memory limit of 1GiB" in said[0]
    assert peak < 1.5 * 2**30 and seconds < 25


@pytest.mark.slow
def test_a_query_past_its_time_limit_is_killed_whatever_it_is_doing(
    demo_store: Path, tmp_path: Path
) -> None:
    """The query's process parked where DuckDB's interrupt cannot reach (COLLSWEEP_FAULT=
    hold:user-query, never released): it is killed just after its 1 s and nothing is left."""
    never = tmp_path / "never"
    env = {FAULT_ENV: "hold:user-query", RELEASE_ENV: str(never)}
    done, said, seconds, _ = query_measured(
        "SELECT 1", "--timeout", "1", "--store", str(demo_store), env=env
    )
    print(f"stopped {seconds:.2f} s after the command started")
    assert done.returncode == 1 and said == [
        "collsweep query: error: the query was stopped after 1 s (its time limit)"
    ]
    assert Path(f"{never}.held").exists() and seconds < 30
    assert processes_with(RELEASE_ENV, str(never)) == []


@pytest.mark.slow
def test_the_sql_pages_query_is_killed_past_its_time_limit(
    demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAULT_ENV, "hold:user-query")
    monkeypatch.setenv(RELEASE_ENV, str(tmp_path / "never"))
    started = time.monotonic()
    with pytest.raises(store.QueryError, match=r"stopped after 0\.5 s"):
        queries.run_user_sql(demo_store, "SELECT 1", timeout_s=0.5)
    assert time.monotonic() - started < 30


def test_the_stores_own_errors_come_back_from_the_query_process(tmp_path: Path) -> None:
    with pytest.raises(store.StoreError, match="no results store"):
        run_user_query(tmp_path / "missing.duckdb", "SELECT 1", time_limit=5, max_rows=5)


def test_a_query_process_that_dies_is_said_in_one_line(tmp_path: Path) -> None:
    """Killed before its reply was out (the kernel's OOM killer, say): one line naming the
    signal and the memory limit, never an unpickling traceback."""
    errors = tmp_path / "errors"
    errors.write_bytes(b"some noise\nlast words\n")
    with errors.open("rb") as said, pytest.raises(store.QueryLimit, match="signal 9") as caught:
        user_query._result(b"\x80\x04partial", -9, 30.0, "1GiB", said)
    assert str(caught.value).endswith("memory limit of 1GiB?): last words")


def test_the_fault_hooks_do_nothing_outside_the_test_suite(
    demo_store: Path, tmp_path: Path
) -> None:
    """COLLSWEEP_FAULT in a user's environment, without the suite's COLLSWEEP_TEST_HOOKS=1:
    the query runs at once instead of parking forever."""
    never = tmp_path / "never"
    env = {FAULT_ENV: "hold:user-query", RELEASE_ENV: str(never), HOOKS_ENV: ""}
    done = run_cli("query", "SELECT 41 + 1 AS answer", "--store", str(demo_store), env=env)
    assert done.returncode == 0 and "42" in done.stdout
    assert not Path(f"{never}.held").exists()


@pytest.mark.parametrize("value", ["-1", "100TiB", "lots"])
def test_a_read_memory_limit_from_the_environment_is_bounded(
    demo_store: Path, value: str, reliability
) -> None:
    """COLLSWEEP_READ_MEMORY_LIMIT cannot lift the limit: refused like --memory-limit."""
    done = run_cli("runs", "--store", str(demo_store), env={MEMORY_ENV: value})
    said = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(said) == 1
    assert f"{MEMORY_ENV} must be a size between 16MiB" in said[0]
    reliability.bad_input(f"{MEMORY_ENV}={value}", True)
