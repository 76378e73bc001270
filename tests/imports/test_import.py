"""`collsweep import` of nccl-tests and OSU micro-benchmarks output (the fixtures in
tests/fixtures/imports, built from the tools' documented formats): every stored number against
the file, files combined into launches and algorithms, and bad files refused whole."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT, curves_page_of_imported_run, run_cli

from runners import store
from runners.cli.main import main
from runners.domain.imports import ImportProblem, read_tool_file
from runners.domain.imports.naming import algorithm_of
from runners.domain.imports.points import plan_import

FIXTURES = ROOT / "tests" / "fixtures" / "imports"
NCCL_FILES = (
    "nccl_all_reduce_root_col.txt",
    "nccl_all_reduce_ring_algo.txt",
    "nccl_all_reduce_old.txt",
    "nccl_all_gather.txt",
    "nccl_all_reduce_tree_algo.txt",
)
TREE_FILE = NCCL_FILES[4]  # NCCL_ALGO=Tree over the grid of NCCL_FILES[:2]
OSU_FILES = (
    "osu_allreduce.txt",
    "osu_allreduce_full.txt",
    pytest.param("osu_bcast_v5.txt", marks=pytest.mark.slow),  # analysed: a second or more
)


@dataclass
class Done:
    """What a command did: its exit status and what it printed."""

    returncode: int
    stdout: str
    stderr: str


def collsweep(*args: str) -> Done:
    """`collsweep ARGS` through its entry point (runners.cli.main) in this process: the real
    parser, handler and error reporting, without a second interpreter's start-up."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return Done(status, out.getvalue(), err.getvalue())


def imported(store_path: Path, *args: str) -> str:
    """Import with the CLI; the new run's id."""
    done = collsweep("import", *args, "--store", str(store_path))
    assert done.returncode == 0, done.stderr
    found = re.search(r"as run (\S+):", done.stdout)
    assert found, done.stdout
    return found.group(1)


def points_of(store_path: Path, run_id: str) -> list[dict]:
    frame = store.query(store_path, "SELECT * FROM points WHERE run_id = ?", [run_id])
    return frame.to_dict("records")


def source_of(store_path: Path, run_id: str) -> dict:
    return store.get_run(store_path, run_id)["environment"]["imported"]


def table_rows(path: Path) -> list[tuple[int, list[str]]]:
    """The file's data rows, read here apart from the importer: (line, fields) of every line
    that starts with a number."""
    lines = path.read_text().splitlines()
    return [(n, line.split()) for n, line in enumerate(lines, 1) if re.match(r"\s*\d", line)]


def nccl_header(path: Path) -> list[str]:
    """The column names of an nccl-tests table (its second header line)."""
    line = next(x for x in path.read_text().splitlines() if re.match(r"#\s+size\s+count", x))
    return line.lstrip("#").split()


@pytest.mark.parametrize("name", NCCL_FILES)
def test_every_nccl_tests_number_is_stored_as_printed(tmp_path: Path, name: str) -> None:
    """Each row is a point whose median is the out-of-place time to the bit (us / 1e6); every
    printed cell, in-place time, algbw, busbw and #wrong included, is kept with the run."""
    db = tmp_path / "s.duckdb"
    run_id = imported(db, str(FIXTURES / name))
    points = {(p["bytes"]): p for p in points_of(db, run_id)}
    header = nccl_header(FIXTURES / name)
    time_at = header.index("time")
    (source,) = source_of(db, run_id)["files"]
    kept = {row["line"]: row["columns"] for row in source["rows"]}
    rows = table_rows(FIXTURES / name)
    assert len(points) == len(rows) == len(kept)
    for line, fields in rows:
        point = points[int(fields[0])]
        assert point["median_s"] == float(fields[time_at]) / 1e6
        assert point["launches"] == 1 and math.isnan(point["interval_low_s"])
        values = list(kept[line].values())
        assert len(values) == len(fields)
        for printed, stored in zip(fields, values, strict=True):
            if re.fullmatch(r"-?[\d.]+(e[-+]\d+)?", printed) and printed != "-1":
                assert float(printed) == stored, (line, printed, stored)
            else:
                assert printed in (stored, "N/A")
    assert source["sha256"] and len(source["sha256"]) == 64


@pytest.mark.parametrize("name", OSU_FILES)
def test_every_osu_number_is_stored_as_printed(tmp_path: Path, name: str) -> None:
    """Avg latency is the median to the bit; min, max and iterations (-f) are kept; OSU's
    allgather sizes would be per rank, these are whole vectors; rows of sizes collsweep cannot
    hold (1 and 2 B of a bcast stored as float32) are left out with a note."""
    db = tmp_path / "s.duckdb"
    done = collsweep(
        "import", str(FIXTURES / name), "--ranks", "4", "--library", "mpich", "--store", str(db)
    )
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"as run (\S+):", done.stdout).group(1)
    points = {p["bytes"]: p for p in points_of(db, run_id)}
    (source,) = source_of(db, run_id)["files"]
    kept = {row["line"]: row["columns"] for row in source["rows"]}
    left_out = 0
    for line, fields in table_rows(FIXTURES / name):
        if line not in kept:
            assert f"line {line}:" in done.stderr
            left_out += 1
            continue
        point = points[int(fields[0])]
        assert point["median_s"] == float(fields[1]) / 1e6
        assert [float(f) for f in fields] == [float(v) for v in kept[line].values()]
        if len(fields) == 5:
            assert point["iterations"] == int(fields[4])
    assert left_out == (2 if "bcast" in name else 0)


@pytest.mark.slow
def test_nccl_algo_files_become_two_algorithms_of_one_run(tmp_path: Path) -> None:
    """The same grid with NCCL_ALGO=Ring (NCCL's log says so) and without: one run, the
    algorithms nccl and nccl:ring, each a job of its own, and the run says it is one launch
    imported from nccl-tests. It is analysed: a winner row per size, a tie that says one launch
    cannot decide it; the calibration fitted on the same points (gamma = 0, said) predicts
    nccl:ring as the ring's critical path and nccl as its fastest modelled algorithm."""
    db = tmp_path / "s.duckdb"
    files = [str(FIXTURES / n) for n in NCCL_FILES[:2]]
    done = run_cli("import", *files, "--store", str(db))
    assert done.returncode == 0, done.stderr
    assert "not analysed" not in done.stdout and "gamma = 0 assumed" in done.stderr
    run_id = re.search(r"as run (\S+):", done.stdout).group(1)
    points = points_of(db, run_id)
    assert {p["algorithm"] for p in points} == {"nccl", "nccl:ring"}
    assert len({p["job"] for p in points}) == 2
    run = store.get_run(db, run_id)
    assert run["status_reason"] == (
        "one launch, imported from nccl-tests (2 files of different configurations)"
    )
    assert run["host"] == "dgx-h100-017" and run["mpi_version"] == "NCCL 2.21.5"
    settings = run["environment"]["imported"]["files"][1]["settings"]
    assert settings["iters"] == 20 and settings["warmup iters"] == 1 and settings["ranks"] == 8
    assert {p["ranks"] for p in points} == {8} and {p["warmup"] for p in points} == {1}
    sizes = sorted({p["bytes"] for p in points})
    winners = store.query(db, "SELECT * FROM winners WHERE run_id = ?", [run_id])
    assert sorted(winners.bytes) == sizes and not winners.decided.any()
    assert set(winners.launches) == {0}  # one launch each: nothing to pair
    fitted = store.get_calibration(db, f"fitted:{run_id}@nccl")
    assert fitted["gammas"] == {"float32/sum": 0.0}
    assert fitted["details"]["fitted_on"] == "fitted on the same points it predicts"
    assert fitted["details"]["assumption"].startswith("gamma = 0 assumed: NCCL reduces")
    assert_ring_predictions(db, run_id, fitted)
    summary = collsweep("crossovers", run_id, "--summary", "--store", str(db))
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.strip() == (
        "p=8 float32 sum: 1 MiB .. 8 GiB: tie nccl ~ nccl:ring (one launch: cannot decide)"
    )


def assert_ring_predictions(db: Path, run_id: str, fitted: dict) -> None:
    """Every nccl:ring point predicted by the fitted calibration as the ring's critical path
    at p=8 (14 messages, 1.75 n bytes sent, gamma 0), nccl as the same (its fastest modelled
    algorithm, library_min), nccl:tree not at all; within 10% of the measured medians."""
    predicted = store.query(
        db,
        "SELECT p.algorithm, p.bytes, p.median_s, m.model, m.predicted_s, m.calibration_id "
        "FROM points p JOIN predictions m USING (point_id) WHERE p.run_id = ?",
        [run_id],
    )
    assert set(predicted.calibration_id) == {fitted["calibration_id"]}
    alpha, beta = fitted["alpha_s"], fitted["beta_s_per_byte"]
    ring = predicted[predicted.algorithm == "nccl:ring"]
    assert set(ring.model) == {"ring"} and len(ring) == 14
    for row in ring.itertuples():
        assert row.predicted_s == pytest.approx(14 * alpha + 1.75 * row.bytes * beta, rel=1e-9)
        assert row.predicted_s == pytest.approx(row.median_s, rel=0.10)
    own = predicted[predicted.algorithm == "nccl"].set_index("bytes")
    assert set(own.model) == {"library_min"}
    assert own.predicted_s.to_dict() == ring.set_index("bytes").predicted_s.to_dict()
    assert "nccl:tree" not in set(predicted.algorithm)


def scaled_copy(source: Path, target: Path, factor: float) -> Path:
    """OSU output with every latency times `factor`, printed as OSU prints it (%18.2f)."""
    out = []
    for line in source.read_text().splitlines():
        fields = line.split()
        if re.match(r"\d", line) and len(fields) == 2:
            line = f"{fields[0]:<10}{float(fields[1]) * factor:18.2f}"
        out.append(line)
    target.write_text("\n".join(out) + "\n")
    return target


@pytest.mark.slow
def test_files_of_one_grid_are_launches_of_one_run(tmp_path: Path) -> None:
    """Three runs of one OSU command: every point has three launches, one sample each, its
    median the middle file's figure, and an interval over launches around it."""
    base = FIXTURES / "osu_bcast_v5.txt"
    files = [scaled_copy(base, tmp_path / f"bcast{i}.txt", f) for i, f in enumerate((1, 1.2, 0.9))]
    db = tmp_path / "s.duckdb"
    run_id = imported(db, *map(str, files), "--ranks", "4", "--library", "mpich")
    assert store.get_run(db, run_id)["status_reason"] == (
        "up to 3 launches (one per file), imported from OSU micro-benchmarks"
    )
    figures = [{int(f[0]): float(f[1]) for _, f in table_rows(path)} for path in files]
    for point in points_of(db, run_id):
        printed = sorted(figure[point["bytes"]] for figure in figures)
        assert point["launches"] == 3
        assert point["median_s"] == printed[1] / 1e6
        assert point["interval_low_s"] <= point["median_s"] <= point["interval_high_s"]
    launches = store.query(db, "SELECT DISTINCT launch FROM samples WHERE run_id = ?", [run_id])
    assert sorted(launches["launch"]) == [0, 1, 2]


BAD = {  # file (made in the test or a fixture): the line the message must name
    "nccl_all_reduce_truncated.txt": 29,
    "osu_broken_row.txt": 13,
}


def runs_in(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]


def refused(db: Path, *args: str) -> str:
    """The one-line error of an import that must be refused with exit 2."""
    done = collsweep("import", *args, "--store", str(db))
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("collsweep import: error: "), lines
    return lines[0]


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_file_is_refused_naming_file_and_line_and_nothing_is_written(
    tmp_path: Path, name: str
) -> None:
    """With a good file before it in one command: exit 2, one line naming the bad file and its
    line, and the store holds what it held (the earlier import only)."""
    db = tmp_path / "s.duckdb"
    imported(db, str(FIXTURES / NCCL_FILES[0]))
    line = refused(
        db,
        str(FIXTURES / NCCL_FILES[1]),
        str(FIXTURES / name),
        "--ranks",
        "4",
        "--library",
        "nccl",
    )
    assert f"{name}:{BAD[name]}:" in line
    assert runs_in(db) == 1


def test_files_that_are_no_tool_output_are_refused(tmp_path: Path) -> None:
    """Not text (a NUL byte, not UTF-8), text of no known tool, an empty file, an OSU file
    without its ranks or library, a file that does not exist, a folder, a FIFO, JSON that is
    no nccl-tests report: exit 2, one line, and no store created."""
    db = tmp_path / "s.duckdb"
    binary = tmp_path / "core.bin"
    binary.write_bytes(b"# OSU MPI Allreduce Latency Test v7.4\n\0\x01\x02")
    assert "core.bin:2: not a text file" in refused(db, str(binary))
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"hello\n\xff\xfe\n")
    assert "latin.txt:2: not UTF-8" in refused(db, str(latin))
    prose = tmp_path / "notes.txt"
    prose.write_text("size time\n8 1.0\n")
    assert "notes.txt:1: not a format collsweep imports" in refused(db, str(prose))
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert "empty.txt:1: empty file" in refused(db, str(empty))
    assert "--ranks" in refused(db, str(FIXTURES / "osu_allreduce.txt"))
    assert "--library" in refused(db, str(FIXTURES / "osu_allreduce.txt"), "--ranks", "2")
    assert "cannot be read" in refused(db, str(tmp_path / "missing.txt"))
    assert f"{tmp_path}:0: a folder, not a file" in refused(db, str(tmp_path))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would block: refused before
    assert "fifo:0: not a regular file" in refused(db, str(fifo))
    json_file = tmp_path / "other.json"
    json_file.write_text('{"name": "not a benchmark"}')
    assert "other.json:1: JSON that is not an nccl-tests -J report" in refused(db, str(json_file))
    assert "not IMB output" in refused(db, str(FIXTURES / "osu_bcast_v5.txt"), "--format", "imb")
    assert not db.exists()


def test_an_old_nccl_file_that_names_no_test_needs_its_collective(tmp_path: Path) -> None:
    """nccl-tests before 2.16.7 prints no test name: the file's name or --collective says it."""
    copy = tmp_path / "results.txt"
    copy.write_text((FIXTURES / "nccl_all_gather.txt").read_text())
    db = tmp_path / "s.duckdb"
    assert "--collective" in refused(db, str(copy))
    run_id = imported(db, str(copy), "--collective", "allgather")
    points = points_of(db, run_id)
    assert {p["algorithm"] for p in points} == {"allgather.nccl"}
    assert {p["op"] for p in points} == {"none"} and {p["collective"] for p in points} == {
        "allgather"
    }
    assert all(p["count"] * 4 == p["bytes"] for p in points)


@pytest.mark.slow
def test_an_imported_run_shows_on_the_curves_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Curves page draws an imported nccl-tests run: one measured curve per algorithm and
    the fitted calibration's predictions over nccl:ring and nccl (not over the unmodelled
    tree), the calibration named with its caveat, no error; the Crossovers page offers the
    same calibration, named the same way, and says why it has no agreement to show; the Model
    fit page opens on it and warns of its gamma = 0 assumption."""
    db = tmp_path / "s.duckdb"
    run_id = imported(db, *(str(FIXTURES / n) for n in (*NCCL_FILES[:2], TREE_FILE)))
    page = curves_page_of_imported_run(db, run_id, monkeypatch)
    assert page.measured == {"nccl", "nccl:ring", "nccl:tree"}
    assert page.predicted == {"nccl", "nccl:ring"}
    assert page.note.startswith("One launch, imported from nccl-tests (3 files")
    assert "Not analysed" not in page.note
    named = f"fitted:{run_id} (fitted on the same points it predicts)"
    assert f"Predictions of calibration {named}." in page.captions
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=60)
    at.query_params.update({"run": run_id})
    at.run()
    at.switch_page("views/crossovers.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="cal").options == [named]
    assert any(i.value.startswith("No agreement for this calibration: no cell") for i in at.info)
    at.switch_page("views/model_fit.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="kal").value == f"fitted:{run_id}@nccl"
    assert any(w.value.startswith("gamma = 0 assumed: NCCL reduces") for w in at.warning)


def nccl_copy(source: Path, target: Path, factor: float) -> Path:
    """nccl-tests output with every out-of-place time times `factor`, printed in its column's
    width as nccl-tests prints it (2 decimals, else fewer, to fit 7 characters)."""
    out = []
    for line in source.read_text().splitlines():
        words = list(re.finditer(r"\S+", line))
        if re.match(r"\s+\d", line) and len(words) == 13:
            time = words[5]  # size count type redop root, then the out-of-place time
            seconds = float(time.group()) * factor
            text = next(t for f in ("%.2f", "%.1f", "%.0f") if len(t := f % seconds) <= 7)
            line = line[: time.end() - len(text)] + text + line[time.end() :]
        out.append(line)
    target.write_text("\n".join(out) + "\n")
    return target


@pytest.mark.slow
def test_ring_and_tree_files_three_times_each_decide_winners_and_a_crossover(
    tmp_path: Path,
) -> None:
    """NCCL_ALGO=Ring and =Tree, three files each (the fixtures' times scaled a little): one
    run of two algorithms whose three launches pair by round, so the winners are decided where
    the launches agree, and the tree's lead at the small sizes turns into the ring's between
    the last size where every tree file is faster and the first where every ring file is; the
    model predicts no crossover (the tree has no schedule), and the summary says so."""
    copies = [
        nccl_copy(FIXTURES / name, tmp_path / f"{tag}{i}.txt", factor)
        for name, tag, factors in (
            (NCCL_FILES[1], "ring", (1.0, 1.02, 0.98)),
            (TREE_FILE, "tree", (0.99, 1.01, 1.0)),
        )
        for i, factor in enumerate(factors)
    ]
    db = tmp_path / "s.duckdb"
    run_id = imported(db, *map(str, copies))
    points = points_of(db, run_id)
    assert {p["algorithm"] for p in points} == {"nccl:ring", "nccl:tree"}
    assert {p["launches"] for p in points} == {3}
    times: dict[tuple[str, int], list[float]] = {}
    for name, paths in (("ring", copies[:3]), ("tree", copies[3:])):
        for path in paths:
            for _, fields in table_rows(path):  # the out-of-place time of each size
                times.setdefault((name, int(fields[0])), []).append(float(fields[5]))
    sizes = sorted({n for _, n in times})
    tree_ahead = [n for n in sizes if max(times["tree", n]) < min(times["ring", n])]
    ring_ahead = [n for n in sizes if max(times["ring", n]) < min(times["tree", n])]
    assert tree_ahead and ring_ahead and max(tree_ahead) < min(ring_ahead)
    crossovers = store.query(
        db, "SELECT * FROM crossovers WHERE run_id = ? AND kind = 'measured'", [run_id]
    )
    (row,) = crossovers.itertuples()
    assert (row.algorithm_a, row.algorithm_b) == ("nccl:tree", "nccl:ring")
    assert row.low_bytes <= max(tree_ahead) and row.high_bytes >= min(ring_ahead)
    summary = collsweep("crossovers", run_id, "--summary", "--store", str(db))
    (_, change) = summary.stdout.strip().splitlines()
    assert change.strip().startswith("nccl:tree -> nccl:ring: measured between ")
    assert change.endswith("the model predicts no crossover of this pair")


def test_an_nccl_algo_the_catalog_lacks_keeps_its_name_and_is_not_analysed(
    tmp_path: Path,
) -> None:
    """NCCL_ALGO=ring (NCCL reads it without case) is nccl:ring; NCCL_ALGO=NVLS, which the
    catalog does not list, keeps its own name, nccl:nvls: stored and drawn, not analysed."""
    text = (FIXTURES / NCCL_FILES[1]).read_text()
    lower = tmp_path / "lower.txt"
    lower.write_text(text.replace("environment to Ring", "environment to ring"))
    nvls = tmp_path / "nvls.txt"
    nvls.write_text(text.replace("environment to Ring", "environment to NVLS"))
    db = tmp_path / "s.duckdb"
    assert {p["algorithm"] for p in points_of(db, imported(db, str(lower)))} == {"nccl:ring"}
    done = collsweep("import", str(nvls), "--store", str(db))
    assert done.returncode == 0, done.stderr
    assert "not analysed: collsweep's catalog has no nccl algorithm nccl:nvls" in done.stdout
    run_id = re.search(r"as run (\S+):", done.stdout).group(1)
    assert {p["algorithm"] for p in points_of(db, run_id)} == {"nccl:nvls"}


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "--algorithms", "nccl:ring", "--sizes", "8", "--ranks", "2"],
        ["sweep", "--algorithms", "ring", "--libraries", "nccl", "--sizes", "8", "--ranks", "2"],
        ["verify", "--algorithms", "nccl:ring", "--ranks", "2"],
    ],
)
def test_nothing_runs_nccls_algorithms(tmp_path: Path, argv: list[str]) -> None:
    """NCCL is imported only: a sweep or verify that names it is refused in one line, exit 2,
    before anything starts or any store is made; tune and record do not offer it."""
    db = tmp_path / "s.duckdb"
    done = collsweep(*argv, "--store", str(db)) if argv[0] != "verify" else collsweep(*argv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    (line,) = done.stderr.strip().splitlines()
    assert "NCCL results can only be imported" in line and not db.exists()
    for command in (["tune", "r1", "--out", "x.json"], ["record"]):
        with pytest.raises(SystemExit) as refused_choice:
            collsweep(*command, "--library", "nccl", "--store", str(db))
        assert refused_choice.value.code == 2


JSON_REPORT = FIXTURES / "nccl_all_reduce_tree_per_iter.json"


def test_an_nccl_tests_json_report_is_stored_with_its_iterations(tmp_path: Path) -> None:
    """nccl-tests' -J report with -I: the median is the out-of-place time to the bit, the
    samples are its per-iteration times (max over GPUs) less the -K skipped ones, so one launch
    has a within-launch interval; NCCL_ALGO from the report's env, 8 ranks, its command line."""
    db = tmp_path / "s.duckdb"
    run_id = imported(db, str(JSON_REPORT))
    report = json.loads(JSON_REPORT.read_text())
    points = {p["bytes"]: p for p in points_of(db, run_id)}
    samples = store.query(
        db, "SELECT point_id, seconds FROM samples WHERE run_id = ? ORDER BY iteration", [run_id]
    )
    assert len(points) == len(report["results"])
    for result in report["results"]:
        point = points[result["size"]]
        per_iter = result["out_of_place_per_iter"]
        assert point["median_s"] == result["out_of_place"]["time"] / 1e6
        assert point["algorithm"] == "nccl:tree" and point["ranks"] == 8
        mine = samples[samples.point_id == point["point_id"]].seconds.tolist()
        assert mine == [t / 1e6 for t in per_iter["times_us"][per_iter["skipped_iterations"] :]]
        assert point["iterations"] == len(mine) and point["warmup"] == 1
        assert point["interval_low_s"] < point["interval_high_s"]
    run = store.get_run(db, run_id)
    (source,) = run["environment"]["imported"]["files"]
    assert source["command_line"] == " ".join(report["args"])
    assert source["library_version"] == "NCCL 2.21.5"
    kept = source["rows"][0]["columns"]
    assert kept["in_place.bus_bw"] == report["results"][0]["in_place"]["bus_bw"]


@pytest.mark.slow
def test_text_and_json_reports_of_three_algorithms_make_one_run(tmp_path: Path) -> None:
    """The default, NCCL_ALGO=Ring (text) and NCCL_ALGO=Tree (JSON): three algorithms."""
    db = tmp_path / "s.duckdb"
    files = [str(FIXTURES / n) for n in NCCL_FILES[:2]] + [str(JSON_REPORT)]
    run_id = imported(db, *files)
    points = points_of(db, run_id)
    assert {p["algorithm"] for p in points} == {"nccl", "nccl:ring", "nccl:tree"}
    assert len({p["job"] for p in points}) == 3


def test_a_cut_json_report_is_refused(tmp_path: Path) -> None:
    """A report cut short: broken JSON, exit 2, its line named; nothing written."""
    cut = tmp_path / "cut.json"
    cut.write_text(JSON_REPORT.read_text()[:5000])
    db = tmp_path / "s.duckdb"
    assert "cut.json:1: broken or truncated JSON" in refused(db, str(cut))
    assert not db.exists()


# --- the parsers alone --------------------------------------------------------------------------


def test_osu_datatype_blocks_are_points_of_their_datatypes() -> None:
    """OSU's `-T` prints a block per datatype: the same sizes again, under another datatype,
    are other points (MPI_CHAR keeps its name: collsweep has no 1-byte reduction type)."""
    text = (FIXTURES / "osu_allreduce.txt").read_text()
    second = text.split("# Datatype: MPI_CHAR.\n", 1)[1].replace("8.14", "9.01")
    both = text + "# Datatype: MPI_FLOAT.\n" + second
    parsed = read_tool_file(both.encode(), "osu-T.txt", ranks=2)
    by_dtype = {}
    for row in parsed.rows:
        by_dtype.setdefault(row.dtype, []).append(row)
    assert set(by_dtype) == {"char", "float32"}
    floats = {r.nbytes: r.seconds for r in by_dtype["float32"]}
    assert 1 not in floats and 2 not in floats and floats[4] == 9.49 / 1e6
    assert parsed.settings["datatypes"] == ["MPI_CHAR", "MPI_FLOAT"]


def test_a_point_twice_in_one_file_is_refused() -> None:
    """A size repeated in one block is a broken file: both lines are named."""
    text = (FIXTURES / "osu_bcast_v5.txt").read_text()
    twice = text + "4096                    8.10\n"
    parsed = read_tool_file(twice.encode(), "twice.txt", ranks=2)
    last = len(twice.splitlines())
    with pytest.raises(ImportProblem, match=rf"twice.txt:{last}: the same point as line 16"):
        plan_import([parsed], "r1", "mpich")


def test_a_forcing_the_catalog_does_not_list_is_refused() -> None:
    """Intel MPI's I_MPI_ADJUST_BCAST=3 forces a bcast collsweep's catalog has no name for:
    refused rather than stored as the autotuned default; allreduce's 8 is impi:ring."""
    forced = {"I_MPI_ADJUST_BCAST": "3", "I_MPI_ADJUST_ALLREDUCE": "8"}
    assert algorithm_of("impi", "allreduce", forced, "f.txt") == "impi:ring"
    assert algorithm_of("impi", "reduce", forced, "f.txt") == "reduce.impi"
    with pytest.raises(ImportProblem, match="I_MPI_ADJUST_BCAST=3 forces an algorithm"):
        algorithm_of("impi", "bcast", forced, "f.txt")


def test_a_file_without_rows_collsweep_can_hold_is_refused() -> None:
    """A complete nccl-tests file whose table is empty, and an OSU bcast of 1 and 2 bytes
    only (no whole float32 element): nothing to store, said with the file's last line."""
    text = (FIXTURES / "nccl_all_reduce_root_col.txt").read_text()
    empty = "\n".join(x for x in text.splitlines() if not re.match(r"\s+\d", x)) + "\n"
    last = len(empty.splitlines())
    with pytest.raises(ImportProblem, match=rf"empty.txt:{last}: no rows to import"):
        read_tool_file(empty.encode(), "empty.txt")
    osu = "\n".join((FIXTURES / "osu_bcast_v5.txt").read_text().splitlines()[:5]) + "\n"
    with pytest.raises(ImportProblem, match=r"small.txt:5: no rows to import \(line 4: 1 B"):
        read_tool_file(osu.encode(), "small.txt", ranks=2)


def test_nccl_tests_timestamp_column_is_one_value() -> None:
    """`-S 1` adds a `timestamp` column whose value is a date and a time: one value, kept."""
    out = []
    for line in (FIXTURES / "nccl_all_reduce_root_col.txt").read_text().splitlines():
        if re.match(r"#\s+size\s+count", line):
            line = line.rstrip() + "  timestamp"
        elif re.match(r"\s+\d", line):
            line += "  2026-11-30 09:12:41"
        out.append(line)
    parsed = read_tool_file(("\n".join(out) + "\n").encode(), "stamped.txt")
    assert len(parsed.rows) == 14
    assert {r.columns["timestamp"] for r in parsed.rows} == {"2026-11-30 09:12:41"}
    assert parsed.rows[0].columns["in_place.time"] == 23.57


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ("9223372036854775808      8.14", "past any tool's sizes"),
        ("8                        0.00", "no time a call takes"),
        ("8                        1e308", "no time a call takes"),
    ],
)
def test_an_absurd_size_or_time_is_a_broken_row(
    tmp_path: Path, row: str, words: str, reliability
) -> None:
    """A size past 2^40, a zero time or one of 1e308 us: the file is refused at its line."""
    lines = (FIXTURES / "osu_allreduce.txt").read_text().splitlines()
    bad = tmp_path / "osu.txt"
    bad.write_text("\n".join([*lines[:4], row, *lines[5:]]) + "\n")
    db = tmp_path / "s.duckdb"
    said = refused(db, str(bad), "--ranks", "2", "--library", "mpich")
    assert "osu.txt:5: broken row" in said and words in said and not db.exists()
    reliability.bad_input(f"OSU row {row.split()[0]} B {row.split()[1]} us", True)


def test_rows_whose_result_the_tool_found_wrong_are_left_out(tmp_path: Path) -> None:
    """nccl-tests' #wrong above zero: that size is no measurement (a note says so)."""
    text = (FIXTURES / "nccl_all_reduce_ring_algo.txt").read_text().splitlines()
    first = next(i for i, line in enumerate(text) if line.strip()[:1].isdigit())
    words = text[first].split()
    words[8] = "5"  # the out-of-place #wrong
    text[first] = "  ".join(words)
    wrong = tmp_path / "nccl.txt"
    wrong.write_text("\n".join(text) + "\n")
    db = tmp_path / "s.duckdb"
    done = collsweep("import", str(wrong), "--store", str(db))
    assert done.returncode == 0, done.stderr
    assert f"{words[0]} B left out: the tool found 5 wrong elements" in done.stdout + done.stderr
    stored = store.query(db, "SELECT bytes FROM points")["bytes"].tolist()
    assert int(words[0]) not in stored and stored


def test_one_file_given_twice_is_not_two_launches(tmp_path: Path, reliability) -> None:
    copy = tmp_path / "again.txt"
    shutil.copy(FIXTURES / "osu_allreduce.txt", copy)
    db = tmp_path / "s.duckdb"
    said = refused(db, str(FIXTURES / "osu_allreduce.txt"), str(copy), "--ranks", "2")
    assert "are the same output" in said and not db.exists()
    reliability.bad_input("import one file twice", True)
