"""Real sweeps on real ranks: storage, faults, interrupt and resume, concurrency."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, HeldPoint, run_cli, wait_until
from helpers.sweep_runs import only_run, points, write_spec

from runners import store
from runners.domain.sweep.launcher import is_oversubscribed
from runners.host.machine import physical_cores

SMALL = [
    "--sizes",
    "8,4096",
    "--budget",
    "0.05",
    "--min-iterations",
    "4",
    "--max-iterations",
    "40",
    "--passes",
    "2",
    "--warmup",
    "1",
]


def sweep(tmp_path: Path, spec_text: str, *extra: str, env: dict | None = None):
    db = tmp_path / "s.duckdb"
    result = run_cli(
        "sweep",
        str(write_spec(tmp_path, spec_text)),
        "--store",
        str(db),
        *extra,
        env=env,
        timeout=300,
    )
    return db, result


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_sweep_stores_verified_points_with_raw_samples(tmp_path: Path) -> None:
    db, result = sweep(
        tmp_path,
        "sizes = [8]\nranks = [2, 3]\n"
        'algorithms = ["recursive_doubling", "ring", "mpi"]\n'
        'ops = ["sum", "first_nonzero"]\n',
        *SMALL,
    )
    assert result.returncode == 0, result.stderr
    _check_the_story(result.stderr)
    frame = points(db)
    assert len(frame) == 2 * 2 * 3 * 2  # sizes x ranks x algorithms x ops
    ok = frame[frame.status == "ok"]
    skipped = frame[frame.status == "skipped"]
    assert set(zip(skipped.algorithm, skipped.op, strict=True)) == {("ring", "first_nonzero")}
    assert skipped.reason.str.contains("commutative").all()
    assert ok.verified.all() and (ok.iterations >= 4).all()
    assert (ok.p5_s <= ok.median_s).all() and (ok.median_s <= ok.p95_s).all()
    counts = store.query(
        db,
        "SELECT point_id, count(*) n, count(DISTINCT pass) passes FROM samples GROUP BY point_id",
    )
    merged = ok.merge(counts, on="point_id")
    assert (merged.n == merged.iterations).all() and (merged.passes == 2).all()
    bus = ok[ok.ranks == 3].iloc[0]
    assert bus.busbw_gbps == pytest.approx(bus.algbw_gbps * 2 * 2 / 3)
    run = store.get_run(db, only_run(db))
    assert run["status"] == "complete"
    assert run["mpi_version"].startswith("MPICH") and run["thread_level"] == "single"
    assert "MPI4PY_RC_THREAD_LEVEL" in str(run["environment"])
    assert len(run["environment"]["load_average_before"]) == 3
    assert run["physical_cores"] >= 1 and run["memory_setting"]
    _check_launch_calibrations(db, run["run_id"])


@pytest.mark.mpi
@pytest.mark.slow
def test_the_quick_preset_fits_a_screen_and_ends_with_the_verdict(tmp_path: Path) -> None:
    """What `make demo` shows first (issue 45 item 3): at most 40 lines, none over 120
    characters, the run's own lines before its winners and verdict, which end it."""
    quick = ["sweep", str(ROOT / "data" / "quick.toml"), "--dedicated"]
    done = subprocess.run(
        [sys.executable, "-m", "runners.cli", *quick, "--store", str(tmp_path / "q.duckdb")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, in the order a terminal shows it
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert len(lines) <= 40 and max(map(len, lines)) <= 120, done.stdout
    verdict = next(i for i, line in enumerate(lines) if line.startswith("verdict ("))
    complete = next(
        i for i, line in enumerate(lines) if line.startswith("run ") and "complete" in line
    )
    assert complete < verdict
    assert lines[-1].startswith(("p=", "    ")), lines[-1]  # a group's verdict or its change


def _check_the_story(told: str) -> None:
    """A line per launch with its ETA (no line per point), each group's winners as a table,
    then the verdict; the model's diagnostics only named."""
    lines = told.splitlines()
    launches = [line for line in lines if line.startswith("launch ")]
    assert [line.split()[1] for line in launches] == [f"{k}/6" for k in range(1, 7)]
    assert {line.split()[2] for line in launches} == {"p=2", "p=3"}  # 2 groups x 3 launches
    assert all("ETA" in line and "took" in line for line in launches)
    assert not any(line.startswith("[") for line in lines)
    table = lines.index("p=2 float32 sum (default: mpi)")
    assert lines[table + 1].split()[:3] == ["size", "best", "time"]
    apart = "p=3 float32 sum (oversubscribed: reported apart, not a test of the model)"
    assert lines.index(f"{apart} (default: mpi)")
    assert lines.index(next(x for x in lines if x.startswith("verdict"))) > table
    assert "model picks" not in told and "collsweep analyze" in told


def _check_launch_calibrations(db: Path, run_id: str) -> None:
    """Every launch calibrated itself (2 groups x 3 launches); the analysis combined those of
    the groups with a core per rank and priced the points with it, each variant judged."""
    launches = store.calibrations_of_source(db, f"launch:{run_id}")
    assert {(c["details"]["job"], c["details"]["launch"]) for c in launches} == {
        (f"ranks={r} config=default", launch) for r in (2, 3) for launch in (0, 1, 2)
    }
    for cal in launches:
        assert cal["overheads"]["hand-written"]["round_s"] >= 0
        assert len(cal["details"]["exchange"]["bytes"]) == len(cal["details"]["pingpong"]["bytes"])
    combined = store.get_calibration(db, f"launches:{run_id}")
    dedicated = [r for r in (2, 3) if not is_oversubscribed(r, physical_cores())]
    assert combined["details"]["launches"] == 3 * (len(dedicated) or 2)
    accuracy = store.query(
        db, "SELECT * FROM model_accuracy WHERE calibration_id = ?", [f"launches:{run_id}"]
    )
    assert {"textbook", "schedule", "overheads", "contention"} <= set(accuracy.variant)
    rows = store.query(
        db, "SELECT variant FROM predictions WHERE calibration_id = ?", [f"launches:{run_id}"]
    )
    assert "contention" in set(rows.variant)


BAD_INPUTS = [
    ["--algorithms", "warp_speed"],
    ["--dtypes", "int8"],
    ["--ops", "xor"],
    ["--ranks", "0"],
    ["--sizes", "6", "--dtypes", "float64"],
    ["--budget", "-1"],
    ["--ranks", "two"],
    ["--sizes", "1099511627776"],  # 1 TiB per rank
    ["--sizes", "18446744073709551616"],  # 2^64
    ["--sizes", "8,64Q"],  # not a size
    ["--launcher", "nosuchlauncher -n {ranks}"],
    ["--launcher", "{ranks} {host}"],
    ["--launcher", "mpiexec -n {ranks} 'unbalanced"],
    ["--launcher", "mpiexec -n {ranks}; touch {planted}"],
    ["--launcher", "mpiexec -n {ranks} | tee {planted}"],
    ["--launcher", "mpiexec -n 2"],
    ["--point-timeout", "nan"],
]


@pytest.mark.parametrize("flag", BAD_INPUTS, ids=" ".join)
def test_bad_input_exits_2_before_any_rank_starts(
    tmp_path: Path, flag: list[str], reliability
) -> None:
    planted = tmp_path / "planted"
    flag = [f.replace("{planted}", str(planted)) for f in flag]
    db, result = sweep(tmp_path, "sizes = [8]\nranks = [2]\n", *flag)
    clean = (
        result.returncode == 2
        and "error:" in result.stderr
        and "Traceback" not in result.stderr
        and len(result.stderr.strip().splitlines()) == 1
        and not db.exists()
        and not planted.exists()
    )
    reliability.bad_input(" ".join(flag), clean)
    assert clean, result.stderr


def test_malformed_toml_exits_2(tmp_path: Path, reliability) -> None:
    db, result = sweep(tmp_path, "sizes = [8\nranks = 2")
    reliability.bad_input("malformed TOML", result.returncode == 2 and not db.exists())
    assert result.returncode == 2 and "malformed TOML" in result.stderr
    assert not db.exists()


def test_a_spec_that_is_not_utf8_exits_2(tmp_path: Path, reliability) -> None:
    spec = tmp_path / "latin1.toml"
    spec.write_bytes("sizes = [8]\nranks = [2]\n# caf\xe9\n".encode("latin-1"))
    db = tmp_path / "s.duckdb"
    result = run_cli("sweep", str(spec), "--store", str(db))
    clean = result.returncode == 2 and "not UTF-8" in result.stderr and not db.exists()
    reliability.bad_input("spec not UTF-8", clean)
    assert clean, result.stderr


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_repeated_list_entries_are_measured_once_with_a_note(tmp_path: Path) -> None:
    db, result = sweep(
        tmp_path,
        'ranks = [2]\nalgorithms = ["ring", "ring"]\n',
        *SMALL[2:],
        "--sizes",
        "8,16,8",
        "--ranks",
        "2,2",
    )
    assert result.returncode == 0, result.stderr
    assert "note: sizes: measured once each, listed more than once: [8]" in result.stderr
    assert "note: ranks" in result.stderr and "note: algorithms" in result.stderr
    assert sorted(points(db).bytes) == [8, 16]


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_crashed_rank_fails_its_points_and_keeps_the_rest(tmp_path: Path) -> None:
    db, result = sweep(
        tmp_path,
        'sizes = [8, 4096]\nranks = [2]\nalgorithms = ["recursive_doubling", "ring"]\n',
        *SMALL[2:],
        env={"COLLSWEEP_FAULT": "crash:ring"},
    )
    assert result.returncode == 1
    frame = points(db)
    assert set(frame[frame.algorithm == "ring"].status) == {"failed"}
    assert set(frame[frame.algorithm == "recursive_doubling"].status) <= {"ok", "failed"}
    assert "injected crash" in " ".join(frame.reason.fillna(""))
    run = store.get_run(db, only_run(db))
    assert run["status"] == "failed" and "exited" in run["status_reason"]


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_hung_rank_is_caught_by_the_watchdog(tmp_path: Path) -> None:
    db, result = sweep(
        tmp_path,
        'sizes = [8]\nranks = [2]\nalgorithms = ["ring", "binomial_tree"]\n',
        *SMALL[2:],
        "--point-timeout",
        "3",
        "--launches",
        "1",  # each launch waits out the watchdog: one shows it
        env={"COLLSWEEP_FAULT": "hang:ring"},
    )
    assert result.returncode == 1
    frame = points(db)
    assert set(frame.status) == {"timeout"}  # both share the hung cell
    assert frame.reason.str.contains("watchdog").all()
    assert store.get_run(db, only_run(db))["status"] == "failed"


def start_sweep(db: Path, spec: Path, *extra: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "runners.cli", "sweep", str(spec), "--store", str(db), *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def wait_for_points(db: Path, at_least: int, proc: subprocess.Popen, limit: float = 120) -> int:
    """Poll the store the way a dashboard would while the sweep writes."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                n = int(store.query(db, "SELECT count(*) n FROM points")["n"].item())
            except store.StoreError:  # the file may still be mid-creation
                n = 0
            if n >= at_least:
                return n
        time.sleep(0.2)
    raise AssertionError(f"fewer than {at_least} points appeared")


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_sigterm_keeps_finished_points_and_resume_completes_launch_by_launch(
    tmp_path: Path,
) -> None:
    """Interrupted in its first round of launches, a run keeps what it measured; the resume
    measures only the (point, launch) pairs missing, with no sample stored twice."""
    spec = write_spec(
        tmp_path,
        "sizes = {min = 8, max = 1048576, factor = 4}\nranks = [2]\n"
        'algorithms = ["recursive_doubling", "binomial_tree", "ring", "mpi"]\n'
        "budget_s = 0.05\nmin_iterations = 20\nmax_iterations = 100000\n"
        "target_rel_ci = 0.0001\nlaunches = 2\n",
    )
    db = tmp_path / "s.duckdb"
    proc = start_sweep(db, spec, env=HeldPoint(tmp_path, "ring", 2).env)  # never released
    wait_for_points(db, 4, proc)
    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    run_id = only_run(db)
    run = store.get_run(db, run_id)
    assert run["status"] == "interrupted" and "SIGTERM" in run["status_reason"]
    before = points(db)
    kept = len(before)
    assert kept == 4 and set(before.launches) == {1}
    assert f"interrupted, 0 of 36 points done in 2 launches ({kept} more measured" in out
    first = store.query(
        db, "SELECT point_id, list(seconds ORDER BY iteration) s FROM samples GROUP BY point_id"
    )
    resumed = run_cli("sweep", "--resume", run_id, "--store", str(db), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    frame = points(db)
    assert len(frame) == 36 and frame.point_id.is_unique and set(frame.launches) == {2}
    assert store.get_run(db, run_id)["status"] == "complete"
    samples = store.query(
        db,
        "SELECT count(*) n, count(DISTINCT (point_id, iteration)) u, "
        "count(DISTINCT (point_id, launch)) l FROM samples",
    )
    assert samples.n.item() == samples.u.item() and samples.l.item() == 72
    again = store.query(
        db,
        "SELECT point_id, list(seconds ORDER BY iteration) "
        "FILTER (WHERE launch = 0) s FROM samples GROUP BY point_id",
    )
    earlier = dict(zip(first.point_id, first.s, strict=True))
    later = dict(zip(again.point_id, again.s, strict=True))
    assert all(list(later[pid]) == list(earlier[pid]) for pid in earlier)  # not measured again


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_two_sweeps_into_one_store_lose_nothing_while_a_reader_reads(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        "sizes = [8, 64, 512, 4096]\nranks = [2]\n"
        'algorithms = ["recursive_doubling", "ring", "mpi"]\n'
        "budget_s = 0.05\nmin_iterations = 4\nmax_iterations = 50\nlaunches = 1\n",
    )
    db = tmp_path / "s.duckdb"
    first, second = start_sweep(db, spec), start_sweep(db, spec)
    reads = 0
    while first.poll() is None or second.poll() is None:
        if db.exists():
            result = run_cli(
                "query", "SELECT count(*) FROM points", "--store", str(db), timeout=120
            )
            assert result.returncode == 0 or "no results store" in result.stderr, result.stderr
            reads += result.returncode == 0
    assert first.wait() == 0 and second.wait() == 0
    runs = store.query(db, "SELECT run_id, status FROM runs")
    assert len(runs) == 2 and set(runs.status) == {"complete"}
    per_run = store.query(db, "SELECT run_id, count(*) n FROM points GROUP BY run_id")
    assert list(per_run.n) == [12, 12]
    assert reads >= 1


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_a_sweep_from_flags_alone_with_old_and_new_flag_names(tmp_path: Path) -> None:
    """No spec file: --sizes and --ranks (and defaults) make the spec; the flags named like
    the spec keys work, the older names too; without --sizes and --ranks, exit 2."""
    db = tmp_path / "s.duckdb"
    flags = ["--sizes", "8,1K", "--ranks", "2", "--algorithms", "ring,mpi", "--launches", "1"]
    result = run_cli(
        "sweep", *flags, "--budget-s", "0.02", "--point-timeout", "60", "--store", str(db)
    )
    assert result.returncode == 0, result.stderr
    assert "done in 1 launch" in result.stdout and "1 launches" not in result.stdout
    spec = store.get_run(db, only_run(db))["spec_toml"]
    assert "budget_s = 0.02" in spec and "point_timeout_s = 60.0" in spec and "1024" in spec
    missing = run_cli("sweep", "--ranks", "2", "--store", str(tmp_path / "other.duckdb"))
    assert missing.returncode == 2 and "--sizes and --ranks" in missing.stderr
    assert not (tmp_path / "other.duckdb").exists()


@pytest.mark.mpi
@pytest.mark.usefixtures("calibrated_store")
def test_dedicated_leaves_out_groups_with_more_ranks_than_cores_and_says_so(
    tmp_path: Path,
) -> None:
    over = physical_cores() + 1
    db, result = sweep(
        tmp_path,
        f'sizes = [8]\nranks = [1, {over}]\nalgorithms = ["mpi"]\nlaunches = 1\n',
        "--dedicated",
        "--budget",
        "0.05",
    )
    assert result.returncode == 0, result.stderr
    assert f"group sizes {over} are left out" in result.stderr
    assert "measuring 1 point in 1 launch: about" in result.stderr
    assert set(points(db).ranks) == {1}


@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.usefixtures("calibrated_store")
def test_a_sweep_on_a_loaded_machine_gives_provisional_winners_tune_refuses(
    tmp_path: Path,
) -> None:
    """Busy loops on every core; once the load average shows them (a state waited for, not a
    time), a sweep's winners are provisional and `tune` refuses them."""
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        shown = wait_until(lambda: os.getloadavg()[0] >= 1.2, 600, 0.5)
        assert shown, "the busy loops never showed in the load"
        db, result = sweep(
            tmp_path,
            'sizes = [8, 65536]\nranks = [2]\nalgorithms = ["mpi", "mpi:ring"]\nlaunches = 2\n',
            "--budget",
            "0.05",
        )
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    assert result.returncode == 0, result.stderr
    assert "caution: the machine was busy" in result.stderr
    assert "provisional: the machine was busy before the sweep" in result.stderr
    assert "precision: " in result.stdout
    winners = store.query(db, "SELECT provisional FROM winners")
    assert len(winners) and winners["provisional"].all()
    run_id = only_run(db)
    refused = run_cli("tune", run_id, "--store", str(db), "--out", str(tmp_path / "t.json"))
    assert refused.returncode == 2 and "provisional" in refused.stderr
    assert not (tmp_path / "t.json").exists()
