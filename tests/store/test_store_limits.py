"""What the store refuses or bounds: damaged files, busy locks named, reads limited (no MPI)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import synthetic

from runners import store
from runners.domain.sweep import capacity, launcher
from runners.domain.sweep.spec import SpecError, parse_spec
from runners.jobs import launch
from runners.store import storefile


def _cut(source: Path, target: Path) -> Path:
    data = source.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    return target


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.mpi
def test_a_truncated_store_is_refused_by_every_command_and_never_written(
    demo_store: Path, tmp_path: Path, reliability
) -> None:
    cut = _cut(demo_store, tmp_path / "cut.duckdb")
    before = _digest(cut)
    spec = tmp_path / "spec.toml"
    spec.write_text("sizes = [8]\nranks = [2]\n")
    for args in (
        ["sweep", str(spec)],
        ["query", "SELECT count(*) FROM samples"],
        ["runs"],
        ["export", synthetic.demo_specs()[0].run_id, "--output", str(tmp_path / "out")],
        ["analyze", synthetic.demo_specs()[0].run_id],
    ):
        result = run_cli(*args, "--store", str(cut))
        clean = result.returncode == 2 and "is damaged" in result.stderr
        clean = clean and "salvage" in result.stderr and "Traceback" not in result.stderr
        reliability.bad_input(f"truncated store: {args[0]}", clean)
        assert clean, (args, result.stderr)
    assert _digest(cut) == before and not Path(f"{cut}.wal").exists()
    assert not (tmp_path / "cut.duckdb.journal").exists()


def _big_store(path: Path) -> Path:
    """A store whose samples fill many blocks after the runs and points."""
    run = "r20260101-000000-beef"
    store.create_run(path, {"run_id": run, "status": "complete"})
    point = {
        "point_id": f"{run}/ring/2/8/float32/sum",
        "run_id": run,
        "algorithm": "ring",
        "ranks": 2,
        "bytes": 8,
        "dtype": "float32",
        "op": "sum",
        "status": "ok",
    }
    samples = [
        {"point_id": point["point_id"], "iteration": i, "seconds": i * 1e-7, "pass": i % 3}
        for i in range(400_000)
    ]
    store.add_points(path, [point], samples)
    return path


@pytest.mark.slow
def test_salvage_copies_what_is_readable(tmp_path: Path) -> None:
    """A store that still opens but lost its last blocks: salvaged into a new store with the
    rows it still holds, the lost ones named."""
    source = _big_store(tmp_path / "big.duckdb").read_bytes()
    cut = tmp_path / "cut.duckdb"
    for share in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
        cut.write_bytes(source[: int(len(source) * share)])
        try:
            storefile.connect(cut, read_only=True).close()
        except store.StoreError as exc:
            if "its tables need" in str(exc):
                break
    else:
        pytest.fail("no cut of the store opened with blocks missing")
    new = tmp_path / "new.duckdb"
    result = run_cli("salvage", str(new), "--store", str(cut))
    assert result.returncode == 1 and "unreadable" in result.stdout, result.stderr
    assert store.query(new, "SELECT count(*) n FROM runs")["n"].item() == 1
    assert "samples               0 rows; unreadable: r20260101-000000-beef" in result.stdout
    again = run_cli("salvage", str(new), "--store", str(cut))
    assert again.returncode == 2 and "exists" in again.stderr


def test_the_lock_holder_is_named() -> None:
    text = (
        'IO Error: Could not set lock on file "/x.duckdb": Conflicting lock is held in '
        "/usr/bin/python3.11 (PID 1) by user root. See also https://duckdb.org"
    )
    assert storefile.lock_holder(text).startswith("pid 1 (")
    assert storefile.lock_holder("something else") == "unknown"


@pytest.mark.slow
def test_collsweep_query_is_bounded_in_time_rows_and_memory(demo_store: Path, reliability) -> None:
    slow = run_cli(
        "query",
        "SELECT count(*) FROM range(100000000000)",
        "--timeout",
        "1",
        "--store",
        str(demo_store),
    )
    assert slow.returncode == 1 and "stopped after 1 s" in slow.stderr
    many = run_cli(
        "query", "SELECT * FROM range(50)", "--max-rows", "3", "--store", str(demo_store)
    )
    assert many.returncode == 0 and len(many.stdout.strip().splitlines()) == 4  # header + 3
    assert "only the first 3 rows" in many.stderr
    big = run_cli(
        "query",
        "SELECT list(range) FROM range(100000000) GROUP BY range % 3",
        "--memory-limit",
        "100MiB",
        "--timeout",
        "60",
        "--store",
        str(demo_store),
    )
    assert big.returncode == 1 and "memory limit of 100MiB" in big.stderr
    typo = run_cli("query", "SELEC 1", "--store", str(demo_store))
    assert typo.returncode == 2 and "syntax error" in typo.stderr.lower()
    bad = run_cli("query", "SELECT 1", "--memory-limit", "lots", "--store", str(demo_store))
    reliability.bad_input("query --memory-limit lots", bad.returncode == 2)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("template", "shell", "words"),
    [
        ("mpiexec -n {ranks}", False, None),
        ("srun --mpi=pmi2 -n {ranks}", False, None),
        ("mpiexec -n 2", False, "{ranks}"),
        ("mpiexec -n {ranks} {host}", False, "placeholder"),
        ("mpiexec -n {ranks} 'open", False, "cannot be split"),
        ("mpiexec -n {ranks}; rm -rf x", False, "shell syntax"),
        ("mpiexec -n {ranks} $(whoami)", False, "shell syntax"),
        ("mpiexec -n {ranks} | tee log", True, None),
    ],
)
def test_launcher_syntax(template: str, shell: bool, words: str | None) -> None:
    problem = launcher.launcher_syntax_problem(template, shell)
    assert (problem is None) == (words is None)
    if words:
        assert words in problem


@pytest.mark.mpi
def test_launcher_program_must_exist() -> None:
    assert launch.launcher_problem("mpiexec -n {ranks}") is None
    assert "not found" in launch.launcher_problem("no-such-launcher -n {ranks}")
    assert launcher.runs_here("mpiexec -n {ranks}")
    assert not launcher.runs_here("mpiexec -f hosts -n {ranks}")
    assert not launcher.runs_here("srun -n {ranks}")


def test_shell_launcher_runs_through_sh() -> None:
    job = launch.Job(2, launch.RANKS_ENTRY, launcher="mpiexec -n {ranks} 2>&1", launcher_shell=True)
    command = launch.command(job)
    assert command[:3] == ["sh", "-c", 'mpiexec -n 2 2>&1 "$@"']


def test_payload_limit_from_free_memory() -> None:
    free = 16 * 2**30
    limit = capacity.largest_payload(4, free)
    assert limit == int(free * 0.8) // (4 * capacity.BUFFERS_PER_POINT)
    assert capacity.payload_problem([limit], 4, free) is None
    problem = capacity.payload_problem([8, limit + 1], 4, free)
    assert problem and str(limit) in problem and "16 GiB available" in problem


def test_spec_repeats_are_dropped_with_notes() -> None:
    notes: list[str] = []
    spec = parse_spec('sizes = [8, 8, 16]\nranks = [2, 3, 2]\nops = ["sum"]\n', notes=notes)
    assert spec.sizes == (8, 16) and spec.ranks == (2, 3)
    assert len(notes) == 2 and "[8]" in notes[0] and "[2]" in notes[1]
    with pytest.raises(SpecError, match="launcher_shell"):
        parse_spec("sizes = [8]\nranks = [2]\nlauncher_shell = 'yes'\n")
    short: list[str] = []
    assert parse_spec("sizes = {min = 8, max = 1000, factor = 8}\nranks = [2]\n", notes=short)
    assert short == ["sizes stop at 512 B: the factor does not reach max = 1000 B"]
    with pytest.raises(SpecError, match="launch_calibration must be true or false"):
        parse_spec("sizes = [8]\nranks = [2]\nlaunch_calibration = 1\n")
    assert not parse_spec(
        "sizes = [8]\nranks = [2]\nlaunch_calibration = false\n"
    ).launch_calibration


def _read_only_mount(folder: Path) -> bool:
    folder.mkdir()
    return (
        subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(folder)], check=False).returncode == 0
    )


@pytest.mark.slow
def test_read_only_file_systems_give_one_line_errors(
    demo_store: Path, tmp_path: Path, reliability
) -> None:
    mount = tmp_path / "ro"
    if not _read_only_mount(mount):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        (mount / "out").mkdir()
        (mount / "s.duckdb").write_bytes(demo_store.read_bytes())
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        spec = tmp_path / "spec.toml"
        spec.write_text("sizes = [8]\nranks = [2]\n")
        cases = {
            "sweep into a read-only store": ["sweep", str(spec)],
            "export into a read-only folder": [
                "export",
                synthetic.demo_specs()[0].run_id,
                "--output",
                str(mount / "out"),
            ],
            "salvage into a read-only folder": ["salvage", str(mount / "new.duckdb")],
            "a new store in a read-only folder": ["migrate"],
        }
        for case, args in cases.items():
            store_arg = {"sweep": mount / "s.duckdb", "migrate": mount / "new.duckdb"}.get(
                args[0], demo_store
            )
            result = run_cli(*args, "--store", str(store_arg))
            clean = result.returncode == 2 and "Traceback" not in result.stderr
            clean = clean and len(result.stderr.strip().splitlines()) == 1
            reliability.bad_input(case, clean)
            assert clean, result.stderr
        readable = run_cli(
            "query", "SELECT count(*) n FROM runs", "--store", str(mount / "s.duckdb")
        )
        assert readable.returncode == 0, readable.stderr
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_every_user_facing_error_is_one_type_with_its_exit_status() -> None:
    """Bad input exits 2 wherever it is found; failures while running exit 1."""
    from runners.analysis.run_analysis import AnalysisError
    from runners.cli.common import UsageError
    from runners.domain.errors import CollsweepError
    from runners.domain.sweep.spec import SpecError
    from runners.jobs.calibrate import CalibrationError, CalibrationRequestError
    from runners.store.journal import RunBusy

    twos = (UsageError, SpecError, store.StoreError, store.QueryError, RunBusy, AnalysisError)
    ones = (store.StoreBusy, store.QueryLimit, CalibrationError)
    assert all(issubclass(e, CollsweepError) for e in twos + ones + (CalibrationRequestError,))
    assert {e.exit_status for e in twos} == {2} and {e.exit_status for e in ones} == {1}
    assert CalibrationRequestError.exit_status == 2


@pytest.mark.parametrize(
    "ranks, cores, kept",
    [((2, 4), 2, (2,)), ((2, 4, 8), 16, (2, 4, 8)), ((4, 2), 1, (2,)), ((1, 3), 2, (1,))],
)
def test_dedicated_groups_have_a_core_per_rank_or_the_smallest_is_kept(
    ranks: tuple, cores: int, kept: tuple
) -> None:
    found, dropped = capacity.dedicated_ranks(ranks, cores)
    assert found == kept and set(dropped) == set(ranks) - set(kept)
