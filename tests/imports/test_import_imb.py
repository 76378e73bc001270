"""A real IMB-MPI1 at p=2 from the Intel MPI wheel, imported: its numbers against the file,
the default and a forced algorithm as two algorithms of one run, two runs of the same command
as two launches, and the run on `collsweep crossovers --summary` and the Curves page."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import curves_of_imported_run, run_cli

from runners import store
from runners.domain.libraries.impi import LIBRARY as impi
from runners.host import libraries

BENCHMARKS = ("Allreduce", "Reduce_scatter_block", "Allgather", "Bcast", "Reduce")
WHOLE_TIMES_P = ("Reduce_scatter_block", "Allgather")  # IMB's #bytes is one rank's block
COLLECTIVE = {
    "Allreduce": "allreduce",
    "Reduce_scatter_block": "reduce_scatter",
    "Allgather": "allgather",
    "Bcast": "bcast",
    "Reduce": "reduce",
}
RANKS = 2
CALIBRATING = ("PingPong", "Reduce_local")  # no collectives: the run's calibration


def imb_run(out: Path, knobs: dict[str, str]) -> Path:
    """IMB-MPI1 on 2 Intel MPI ranks as the sweep starts them (the library's own mpiexec and
    environment), I_MPI_DEBUG=5 so that Intel MPI names itself and its settings; stdout saved."""
    program = str(libraries.prefix(impi) / "bin" / "IMB-MPI1")
    argv = [program, *BENCHMARKS, *CALIBRATING, "-npmin", str(RANKS), "-msglog", "3:16"]
    env = {**os.environ, **libraries.launch_env(impi), "I_MPI_DEBUG": "5", **knobs}
    done = subprocess.run(
        libraries.command(impi, RANKS, argv), env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out.write_text(done.stdout)
    return out


@pytest.fixture(scope="module")
def imb_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Two runs of IMB's default and one with Intel MPI's allreduce forced to its ring."""
    assert libraries.installed(impi), (
        f"Intel MPI is not in {libraries.prefix(impi)}: run `make install`"
    )
    folder = tmp_path_factory.mktemp("imb")
    default = [imb_run(folder / f"imb-default-{i}.txt", {}) for i in range(2)]
    ring = [imb_run(folder / "imb-ring.txt", {"I_MPI_ADJUST_ALLREDUCE": "8"})]
    return {"default": default, "ring": ring}


def imb_rows(path: Path) -> list[tuple[str, int, int, list[str]]]:
    """(benchmark, processes, line, fields) of every table row, read here apart from the
    importer: a row is a line of five numbers after `# Benchmarking X` and `#processes = P`."""
    rows, benchmark, processes = [], "", 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if found := re.match(r"# Benchmarking (\S+)", line):
            benchmark = found.group(1)
        elif benchmark in CALIBRATING:
            continue
        elif found := re.match(r"# #processes = (\d+)", line):
            processes = int(found.group(1))
        elif re.fullmatch(r"\s*\d+\s+\d+(\s+[\d.]+){3}\s*", line):
            rows.append((benchmark, processes, number, line.split()))
    return rows


@pytest.mark.mpi
def test_a_real_imb_run_is_stored_number_for_number(imb_files: dict, tmp_path: Path) -> None:
    """One IMB file: the library found in its I_MPI_DEBUG lines (no --library), every
    nonzero size of the five collectives a point whose median is t_avg to the bit, sizes of
    Allgather and Reduce_scatter_block times p, every printed number kept with the run;
    PingPong and Reduce_local calibrate the run, with a note."""
    path = imb_files["default"][0]
    db = tmp_path / "s.duckdb"
    done = run_cli("import", str(path), "--store", str(db))
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"as run (\S+):", done.stdout).group(1)
    points = store.query(db, "SELECT * FROM points WHERE run_id = ?", [run_id])
    by_key = {(p.collective, p.bytes): p for p in points.itertuples()}
    run = store.get_run(db, run_id)
    (source,) = run["environment"]["imported"]["files"]
    kept = {row["line"]: row["columns"] for row in source["rows"]}
    rows = imb_rows(path)
    assert {r[0] for r in rows} == set(BENCHMARKS)
    for benchmark, processes, line, fields in rows:
        assert processes == RANKS
        nbytes = int(fields[0]) * (RANKS if benchmark in WHOLE_TIMES_P else 1)
        if nbytes == 0:  # no zero-byte points: said
            assert f"line {line}: 0 B" in done.stderr
            continue
        point = by_key[(COLLECTIVE[benchmark], nbytes)]
        assert point.median_s == float(fields[4]) / 1e6
        assert point.iterations == int(fields[1]) and point.ranks == RANKS
        assert [float(f) for f in fields] == [float(v) for v in kept[line].values()]
    assert len(points) == sum(int(f[0]) > 0 for *_, f in rows)
    assert set(points.algorithm) == {"impi", *(f"{c}.impi" for c in list(COLLECTIVE.values())[1:])}
    assert run["mpi_version"].startswith("Intel MPI 2021.") and run["host"]
    assert run["status_reason"] == "one launch, imported from IMB-MPI1"
    assert source["command_line"].split()[1:3] == ["Allreduce", "Reduce_scatter_block"]
    assert source["settings"]["MPI_Datatype for reductions"] == "MPI_FLOAT"
    assert "PingPong calibrates the run's models" in done.stderr


@pytest.mark.mpi
def test_imbs_pingpong_and_reduce_local_calibrate_the_imported_run(
    imb_files: dict, tmp_path: Path
) -> None:
    """The file's PingPong (one-way times) and Reduce_local fit the run's calibration, as
    `collsweep calibrate` fits its own: stored as imported:<run> from the tool, never taken
    for this machine's; the run's points are priced with it."""
    db = tmp_path / "s.duckdb"
    done = run_cli("import", str(imb_files["default"][0]), "--store", str(db))
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"as run (\S+):", done.stdout).group(1)
    run = store.get_run(db, run_id)
    assert run["calibration_id"] == f"imported:{run_id}"
    cal = store.get_calibration(db, run["calibration_id"])
    assert cal["source"] == "imported:IMB-MPI1" and cal["ranks"] == RANKS
    assert cal["alpha_s"] > 0 and cal["beta_s_per_byte"] > 0
    assert cal["gammas"]["float32/sum"] > 0
    rows = [r for r in imb_rows_of(imb_files["default"][0], "PingPong") if int(r[0]) > 0]
    assert cal["details"]["pingpong"]["bytes"] == [int(r[0]) for r in rows]
    assert cal["details"]["pingpong"]["one_way_median_s"] == [float(r[2]) / 1e6 for r in rows]
    assert store.latest_calibration(db, None, source="pingpong") is None
    priced = store.query(
        db,
        "SELECT count(*) AS n FROM predictions WHERE run_id = ? AND calibration_id = ?",
        [run_id, run["calibration_id"]],
    )
    assert priced.n[0] > 0


def imb_rows_of(path: Path, benchmark: str) -> list[list[str]]:
    """The fields of every row of one benchmark's block."""
    rows, current = [], ""
    for line in path.read_text().splitlines():
        if found := re.match(r"# Benchmarking (\S+)", line):
            current = found.group(1)
        elif current == benchmark and re.fullmatch(r"\s*\d+\s+\d+(\s+[\d.]+)+\s*", line):
            rows.append(line.split())
    return rows


@pytest.fixture(scope="module")
def combined(imb_files: dict, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The three IMB files imported by one command into one run."""
    db = tmp_path_factory.mktemp("combined") / "s.duckdb"
    files = [*imb_files["default"], *imb_files["ring"]]
    done = run_cli("import", *map(str, files), "--store", str(db))
    assert done.returncode == 0, done.stderr
    return db, re.search(r"as run (\S+):", done.stdout).group(1)


@pytest.mark.mpi
def test_runs_and_forced_algorithms_combine_into_one_run(combined: tuple[Path, str]) -> None:
    """The two default files are two launches of `impi` (median of the two t_avg, an
    interval over them); the file with I_MPI_ADJUST_ALLREDUCE=8 is `impi:ring`, one launch,
    no interval, in a job of its own; the other collectives were not forced, so for them the
    third file is a third launch of the library's default."""
    db, run_id = combined
    points = store.query(db, "SELECT * FROM points WHERE run_id = ?", [run_id])
    allreduce = points[points.collective == "allreduce"]
    assert set(allreduce.algorithm) == {"impi", "impi:ring"}
    default = allreduce[allreduce.algorithm == "impi"]
    assert set(default.launches) == {2} and default.interval_low_s.notna().all()
    ring = allreduce[allreduce.algorithm == "impi:ring"]
    assert set(ring.launches) == {1} and ring.interval_low_s.isna().all()
    assert set(default.job) != set(ring.job)
    assert (ring.library_config.str.contains("I_MPI_ADJUST_ALLREDUCE=8")).all()
    reduce = points[points.collective == "reduce"]
    assert set(reduce.algorithm) == {"reduce.impi"} and set(reduce.launches) == {3}


@pytest.mark.mpi
def test_an_imported_run_has_a_verdict_and_curves(
    combined: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`collsweep crossovers RUN --summary` gives the allreduce group's verdict (impi against
    impi:ring, a tie wherever one launch cannot decide), and the Curves page draws both
    algorithms' measured curves without an error."""
    db, run_id = combined
    done = run_cli("crossovers", run_id, "--summary", "--store", str(db))
    assert done.returncode == 0, done.stderr
    assert "p=2 float32 sum" in done.stdout and "impi:ring" in done.stdout
    measured, note = curves_of_imported_run(db, run_id, monkeypatch)
    assert measured == {"impi", "impi:ring"}
    assert note.startswith("Up to 3 launches (one per file), imported from IMB-MPI1")


@pytest.mark.mpi
def test_a_cut_imb_file_is_refused(imb_files: dict, tmp_path: Path) -> None:
    """IMB's output cut after its Allgather block: exit 2 naming the file and its last line."""
    text = imb_files["default"][0].read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: text.index("# Benchmarking Bcast")])
    db = tmp_path / "s.duckdb"
    done = run_cli("import", str(cut), "--store", str(db))
    assert done.returncode == 2
    last = len(cut.read_text().splitlines())
    assert f"cut.txt:{last}: truncated" in done.stderr and not db.exists()


ROW = re.compile(r"^\s*\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s*$")


def imb_copy(base: Path, numbers: Path, factor: float, out: Path) -> Path:
    """`base`'s text (its start-up lines say what was forced) with every five-column table
    row replaced by `numbers`' row at the same place, its times times `factor` (as IMB prints
    them): runs whose outcome the test knows, from real files."""
    rows = [line for line in numbers.read_text().splitlines() if ROW.match(line)]
    lines, index = [], 0
    for line in base.read_text().splitlines():
        if ROW.match(line):
            size, repetitions, *times = rows[index].split()
            scaled = "".join(f"{float(t) * factor:13.2f}" for t in times)
            line, index = f"{int(size):13d}{int(repetitions):13d}{scaled}", index + 1
        lines.append(line)
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.mpi
def test_intel_mpi_is_tuned_from_imported_imb_files(imb_files: dict, tmp_path: Path) -> None:
    """Three files each of IMB's default and of I_MPI_ADJUST_ALLREDUCE=8, made from the real
    ones with the forced ring twice as fast: `collsweep tune --library impi` reads the imported
    run (it has no sweep spec) and writes Intel MPI's tree naming preset 8; resuming an
    imported run is refused in one line."""
    default, ring = imb_files["default"][0], imb_files["ring"][0]
    files = [imb_copy(default, default, f, tmp_path / f"d{f}.txt") for f in (1.0, 1.03, 0.97)]
    files += [imb_copy(ring, default, f, tmp_path / f"r{f}.txt") for f in (0.5, 0.515, 0.485)]
    db = tmp_path / "s.duckdb"
    done = run_cli("import", *map(str, files), "--store", str(db))
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"as run (\S+):", done.stdout).group(1)
    out = tmp_path / "impi.json"
    tuned = run_cli("tune", run_id, "--store", str(db), "--library", "impi", "--out", str(out))
    assert tuned.returncode == 0, tuned.stderr
    tree = json.loads(out.read_text())["coll=Allreduce"]["ppn=2"]["comm_size=2"]["comm_id=-1"]
    assert tree == {"msg_size=-1": {"ALLREDUCE=8": {}}}
    resumed = run_cli("sweep", "--resume", run_id, "--store", str(db))
    assert resumed.returncode == 2 and "imported from IMB-MPI1, not swept" in resumed.stderr
