"""Shared test helpers."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The fault hooks (runners.process.faults) work only where the suite turns them on: here, for
# every command a test starts.
os.environ["COLLSWEEP_TEST_HOOKS"] = "1"
# A sweep into a fresh store calibrates first: a quarter of the default budget keeps the suite
# inside CI's limit (a calibration of 0.5 s is noisier; the tests that read one check what it
# holds and where it is used, not how close its predictions come).
os.environ.setdefault("COLLSWEEP_CALIBRATION_BUDGET_S", "0.5")


def run_cli(
    *args: str, timeout: float = 600, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the real `collsweep` console entry point in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "runners.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
    )


def wait_until(done: Callable[[], bool], limit_s: float, every_s: float = 0.2) -> bool:
    """Poll `done` every `every_s` seconds until it holds (True) or `limit_s` have passed
    (False): how a test waits for a state (a log line, a load, a process gone), never a
    fixed sleep."""
    deadline = time.monotonic() + limit_s
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(every_s)
    return True


class HeldPoint:
    """A sweep's rank parked at one algorithm (in the n-th cell it runs it in, when given), or
    the sweep itself at a stage ('analysis'), until the test releases it: the event a test
    waits for instead of a sleep or a count of progress lines that a fast machine can outrun
    (COLLSWEEP_FAULT=hold:..., see runners.ranks.sweep_worker.inject_fault and
    runners.process.faults.hold_at)."""

    def __init__(self, folder: Path, algorithm: str, nth_cell: int | None = None) -> None:
        self.release_file = folder / f"release-{algorithm}-{nth_cell}"
        self.held_file = folder / f"release-{algorithm}-{nth_cell}.held"  # a command parked
        at = f":{nth_cell}" if nth_cell is not None else ""
        self.env = {
            "COLLSWEEP_FAULT": f"hold:{algorithm}{at}",
            "COLLSWEEP_FAULT_RELEASE": str(self.release_file),
        }

    def release(self) -> None:
        """Let the parked rank go on (idempotent)."""
        self.release_file.touch()


@pytest.fixture(scope="session")
def demo_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic demo store (two analysed runs, tests/helpers/synthetic.py), built once per
    pytest
    run and shared by every module that reads it: treat it as read-only (copy it to change it).

    The build (a real analysis, the slowest set-up of the fast tests) is kept in pytest's cache
    under the code it was built with, so a later run of unchanged code copies it instead."""
    from helpers import synthetic

    here = tmp_path_factory.getbasetemp() / "collsweep-demo.duckdb"
    cache = getattr(request.config, "cache", None)
    if cache is None:  # -p no:cacheprovider
        return synthetic.demo_store(here.parent)
    folder = cache.mkdir("collsweep-demo")
    version = code_version()
    for stale in folder.iterdir():
        if stale.name != version:
            shutil.rmtree(stale, ignore_errors=True)
    (folder / version).mkdir(exist_ok=True)
    shutil.copyfile(synthetic.demo_store(folder / version), here)
    return here


CALIBRATED_DTYPES = "float32,float64,int32"
CALIBRATED_OPS = "sum,first_nonzero,max,min,prod"


@pytest.fixture(scope="session")
def calibration_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one real, short ping-pong calibration of this host's MPICH with a gamma
    for every dtype/op the sweep tests use, measured once per pytest run."""
    path = tmp_path_factory.mktemp("calibrated") / "template.duckdb"
    result = run_cli(
        "calibrate", "--store", str(path), "--max-bytes", "64K", "--factor", "4", "--budget",
        "1", "--dtypes", CALIBRATED_DTYPES, "--ops", CALIBRATED_OPS, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture
def calibrated_store(calibration_template: Path, tmp_path: Path) -> Path:
    """tmp_path / 's.duckdb', the store the sweep tests use, starting as a copy of the
    calibration template: a sweep into it predicts with that calibration instead of measuring
    one first (seconds a sweep). Tests of the sweep's own calibration do not use it."""
    path = tmp_path / "s.duckdb"
    shutil.copyfile(calibration_template, path)
    return path


def damage_runs_block(path: Path) -> None:
    """Overwrite 4 KiB inside the first block holding the runs table's run ids (past the
    block's checksum; every command reads them): DuckDB still opens the file; only reading
    that block fails its checksum."""
    import duckdb

    from runners.store.storefile import HEADER_BYTES

    with duckdb.connect(str(path), read_only=True) as con:
        block, offset = con.execute(
            "SELECT block_id, block_offset FROM pragma_storage_info('runs') WHERE block_id >= 0 "
            "AND column_name = 'run_id' ORDER BY block_id, block_offset LIMIT 1"
        ).fetchone()
        block_size = con.execute("PRAGMA database_size").fetchone()[2]
    with open(path, "r+b") as handle:
        handle.seek(HEADER_BYTES + block * block_size + 8 + offset)
        handle.write(b"\xab" * 4096)


def code_version() -> str:
    """A digest of what a synthetic store's content depends on: runners/, tests/helpers/synthetic.py
    and the DuckDB that wrote it."""
    import duckdb

    digest = hashlib.sha256(duckdb.__version__.encode())
    for path in sorted(
        [*(ROOT / "runners").rglob("*.py"), ROOT / "tests" / "helpers" / "synthetic.py"]
    ):
        digest.update(str(path.relative_to(ROOT)).encode() + path.read_bytes())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="session")
def calibration_columns(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The columns of the store's calibrations table (what a calibration row must fill)."""
    from runners import store

    path = tmp_path_factory.mktemp("schema") / "s.duckdb"
    store.ensure_current(path)
    return set(store.query(path, "SELECT * FROM calibrations LIMIT 0").columns)


@pytest.fixture
def cli():
    """The run_cli helper as a fixture."""
    return run_cli


# --- the reliability figure ----------------------------------------------------------------------
# Tests of bad input and injected faults record their outcome here; the session's summary prints
# the figure: bad inputs tried / refused cleanly, faults injected / points lost / false statuses,
# and stops checked for what they left behind (processes, folders, files).

RELIABILITY: dict[str, list] = {"bad_inputs": [], "faults": [], "stops": []}


class Reliability:
    """Records one test's outcomes for the reliability figure."""

    def bad_input(self, case: str, refused_cleanly: bool) -> None:
        """A bad input was tried: refused with a one-line message, exit 2, nothing written?"""
        RELIABILITY["bad_inputs"].append((case, refused_cleanly))

    def fault(self, case: str, points_lost: int, status_true: bool) -> None:
        """A fault was injected: how many finished points were lost, was the status true?"""
        RELIABILITY["faults"].append((case, points_lost, status_true))

    def stop(self, case: str, left_behind: int) -> None:
        """A command was stopped: how many processes, folders or files it left behind?"""
        RELIABILITY["stops"].append((case, left_behind))


@pytest.fixture
def reliability() -> Reliability:
    """The recorder of the reliability figure."""
    return Reliability()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its records to the controller, which prints the figure."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["reliability"] = json.dumps(RELIABILITY)


def pytest_testnodedown(node, error) -> None:
    """The controller gathers a finished worker's records (pytest-xdist's hook)."""
    found = json.loads(getattr(node, "workeroutput", {}).get("reliability", "{}"))
    for kind, records in found.items():
        RELIABILITY[kind] += [tuple(record) for record in records]


def pytest_terminal_summary(terminalreporter) -> None:
    """Print the reliability figure when any test recorded into it."""
    bad, faults, stops = RELIABILITY["bad_inputs"], RELIABILITY["faults"], RELIABILITY["stops"]
    if not bad and not faults and not stops:
        return
    refused = sum(ok for _, ok in bad)
    lost = sum(n for _, n, _ in faults)
    false = sum(not ok for _, _, ok in faults)
    terminalreporter.write_sep("-", "reliability")
    terminalreporter.write_line(
        f"bad inputs tried {len(bad)}, refused cleanly {refused}; faults injected {len(faults)}, "
        f"points lost {lost} (target 0), runs whose status is false {false} (target 0); "
        f"stops checked {len(stops)}, things left behind {sum(n for _, n in stops)} (target 0)"
    )
    for case, ok in bad:
        if not ok:
            terminalreporter.write_line(f"  NOT refused cleanly: {case}")
    for case, n, ok in faults:
        if n or not ok:
            terminalreporter.write_line(f"  fault {case}: {n} points lost, status true: {ok}")
    for case, n in stops:
        if n:
            terminalreporter.write_line(f"  stop {case}: {n} left behind")


def processes_with(variable: str, value: str) -> list[int]:
    """Processes other than this one whose environment has `variable` set to `value` (what a
    sweep or a cluster passes to everything it starts)."""
    marker = f"{variable}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@dataclass(frozen=True)
class CurvesPage:
    """What the Curves page drew for a run: the algorithms of its measured and its predicted
    curves, its "imported from" note and its captions."""

    measured: set[str]
    predicted: set[str]
    note: str
    captions: list[str]


def curves_page_of_imported_run(
    db: Path, run_id: str, monkeypatch: pytest.MonkeyPatch
) -> CurvesPage:
    """The Curves page on an imported run (time metric) under AppTest, which must raise and
    show no error."""
    import json

    from streamlit.testing.v1 import AppTest

    from runners import store

    monkeypatch.setenv(store.STORE_ENV, str(db))
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=60)
    at.query_params.update({"run": run_id, "metric": "time"})
    at.run()
    at.switch_page("views/curves.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    (figure,) = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]

    def drawn(role: str) -> set[str]:
        return {t["meta"]["algorithm"] for t in figure["data"] if t["meta"]["role"] == role}

    (note,) = [i.value for i in at.info if "imported from" in i.value]
    return CurvesPage(drawn("measured"), drawn("predicted"), note, [c.value for c in at.caption])


def curves_of_imported_run(
    db: Path, run_id: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[set[str], str]:
    """The algorithms of the measured curves the Curves page draws for an imported run, and
    its "imported from" note (curves_page_of_imported_run)."""
    page = curves_page_of_imported_run(db, run_id, monkeypatch)
    return page.measured, page.note
