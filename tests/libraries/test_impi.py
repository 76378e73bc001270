"""Intel MPI as the third library, on real Intel MPI ranks: each forced preset proven by a
counting user op in the launch a sweep gives it, and one sweep storing all three libraries'
points. Unit tests of its descriptor need no ranks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from helpers.fingerprints import planned_calls

from runners import store
from runners.domain.algorithms.impi import FORCED
from runners.domain.libraries import LIBRARIES, short_library_version
from runners.domain.libraries.impi import LIBRARY as impi
from runners.domain.libraries.switching import library_config
from runners.domain.sweep.plan import plan_groups
from runners.domain.sweep.spec import parse_spec
from runners.host import libraries
from runners.host.tuning_files import tuning_problem
from runners.jobs import launch

PRESETS = tuple(spec.name for spec in FORCED)


def test_each_library_reads_its_own_version_line() -> None:
    """MPI_Get_library_version's first line, shortened by the library that wrote it."""
    assert short_library_version("MPICH Version:      5.0.2\nMPICH Release date: x") == (
        "MPICH 5.0.2"
    )
    assert short_library_version("Open MPI v5.0.11, package: Open MPI x") == "Open MPI 5.0.11"
    intel = "Intel(R) MPI Library 2021.18.1 for Linux* OS\n\n"
    assert short_library_version(intel) == "Intel MPI 2021.18.1"
    assert short_library_version("Some MPI   1.2\n") == "Some MPI 1.2"


def test_each_intel_preset_has_a_launch_of_its_own_forced_by_environment() -> None:
    """Intel MPI cannot switch presets at run time: whatever the spec asks, the autotuned
    default and the hand-written schedules share one job, each preset has its own, forced by
    I_MPI_ADJUST_ALLREDUCE, and no MPI_T switches are planned."""
    text = "sizes=[8]\nranks=[2]\nalgorithms=['ring', 'mpi', 'impi:ring', 'impi:reduce_bcast']"
    spec = parse_spec(text + "\nlibraries=['impi']\nlibrary_switching='runtime'")
    groups = {g.config: g for g in plan_groups(spec, "x", switching="runtime", cores=8)}
    assert set(groups) == {"impi", "impi:ring", "impi:reduce_bcast"}
    assert groups["impi"].cells[0].algorithms == ("ring@impi", "impi")
    assert "I_MPI_ADJUST_ALLREDUCE" not in groups["impi"].knobs
    assert groups["impi:ring"].knobs["I_MPI_ADJUST_ALLREDUCE"] == "8"
    assert groups["impi:reduce_bcast"].knobs["I_MPI_ADJUST_ALLREDUCE"] == "3"
    assert all(not g.switches and g.library == "impi" for g in groups.values())
    assert library_config("impi:ring", "runtime") == "env I_MPI_ADJUST_ALLREDUCE=8"
    assert library_config("impi", "launch") == library_config("ring@impi", "launch") == ""


def test_intel_ranks_start_with_its_own_launcher_and_library() -> None:
    """Its mpiexec from its prefix; mpi4py told to load its libmpi; shared memory."""
    job = launch.Job(3, "runners.ranks", ["sweep", "f.json"], {"K": "1"}, library="impi")
    words = launch.command(job)
    assert words[:3] == [str(libraries.prefix(impi) / "bin" / "mpiexec"), "-n", "3"]
    env = launch.job_env(job)
    assert env["MPI4PY_LIBMPI"] == str(libraries.prefix(impi) / "lib" / "libmpi.so.12")
    assert env["LD_LIBRARY_PATH"].split(":")[0] == str(libraries.prefix(impi) / "lib")
    assert env["I_MPI_FABRICS"] == "shm" and env["K"] == "1"
    suffixes = [lib.calibration_suffix for lib in LIBRARIES.values()]
    assert suffixes == ["", "@openmpi", "@impi", "@nccl"]


@pytest.mark.mpi
def test_every_forced_intel_preset_runs_what_it_names() -> None:
    """p=4, 4096 float64, each preset in the launch the sweep's plan gives it: recursive
    doubling reduces the full buffer twice on every rank, Rabenseifner a half then a quarter,
    ring a quarter three times; reduce + bcast reduces p-1 buffers in all, in segments, along a
    reduce tree (its leaves none); binomial gather + scatter twice at rank
    0, once at rank 2; knomial twice everywhere; Shumilin's ring once on ranks 0, 2 and 3. The
    SHM-based presets cannot be proven this way: with a user-defined op they run one fallback
    (their shared-memory path takes built-in ops only), which is asserted so that a change
    shows. The default differs from a preset."""
    assert libraries.installed(impi), (
        f"Intel MPI is not in {libraries.prefix(impi)}: run `make install`"
    )
    found = planned_calls("impi", 4, 4096, ("impi", *PRESETS))
    every = range(4)
    assert found["impi:recursive_doubling"] == {r: [4096, 4096] for r in every}
    assert found["impi:rabenseifner"] == {r: [2048, 1024] for r in every}
    assert found["impi:ring"] == {r: [1024] * 3 for r in every}
    # a reduce, then a bcast: every element reduced p-1 times in all, in segments, at least
    # one leaf reducing nothing. Which reduce tree: Intel MPI's own choice for the platform (a
    # binomial tree, 0 <- 1 <- 3 and 0 <- 2, on one Xeon; a chain 3 -> 2 -> 1 -> 0 on another)
    tree = found["impi:reduce_bcast"]
    assert sum(map(sum, tree.values())) == 3 * 4096 and len(tree[0]) > 2
    assert any(tree[r] == [] for r in every) and tree != found["impi:ring"]
    # the SHM-based presets with a user op: all one fallback, recursive doubling on one Xeon,
    # Rabenseifner (the default's choice here) on another
    shm = [found[f"impi:{name}"] for name in ("shm_flat", "shm_knomial", "shm_knary")]
    assert shm[0] == shm[1] == shm[2]
    assert shm[0] in (found["impi:recursive_doubling"], found["impi:rabenseifner"])
    assert found["impi:binomial_gather_scatter"] == {0: [4096] * 2, 1: [], 2: [4096], 3: []}
    assert found["impi:knomial"] == {r: [4096, 4096] for r in every}
    assert found["impi:shumilin_ring"] == {0: [4096], 1: [], 2: [4096], 3: [4096]}
    assert any(found["impi"] != found[name] for name in PRESETS)


@pytest.mark.mpi
def test_intels_forced_reduce_and_reduce_scatter_presets_run_what_they_name() -> None:
    """p=4, 1024 float64, each preset in its own launch as a sweep plans it: binomial reduce
    at ranks 0 (twice) and 2; Rabenseifner halves then quarters everywhere; knomial (radix 4)
    takes each child's two segments at rank 0; recursive halving halves then quarters, and
    recursive doubling leaves another fingerprint."""
    names = ("reduce.impi:binomial", "reduce.impi:rabenseifner", "reduce.impi:knomial")
    found = planned_calls("impi", 4, 1024, names, collective="reduce")
    assert found["reduce.impi:binomial"] == {0: [1024, 1024], 1: [], 2: [1024], 3: []}
    assert found["reduce.impi:rabenseifner"] == {r: [512, 256] for r in range(4)}
    assert found["reduce.impi:knomial"] == {0: [512] * 6, 1: [], 2: [], 3: []}
    names = ("reduce_scatter.impi:recursive_halving", "reduce_scatter.impi:recursive_doubling")
    found = planned_calls("impi", 4, 1024, names, collective="reduce_scatter")
    assert found["reduce_scatter.impi:recursive_halving"] == {r: [512, 256] for r in range(4)}
    doubling = found["reduce_scatter.impi:recursive_doubling"]
    assert doubling != found["reduce_scatter.impi:recursive_halving"]
    assert sum(map(sum, doubling.values())) > 4 * (512 + 256)  # it reduces more in all


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory, calibration_template: Path) -> Path:
    """One real sweep on all three libraries at p=2, stored and analysed."""
    folder = tmp_path_factory.mktemp("three")
    spec = folder / "three.toml"
    spec.write_text(
        "sizes = [8, 65536]\nranks = [2]\nalgorithms = ['ring', 'mpi', 'mpi:ring']\n"
        "libraries = ['mpich', 'openmpi', 'impi']\nlaunches = 2\nbudget_s = 0.05\n"
        "min_iterations = 4\n"
    )
    db = folder / "three.duckdb"
    shutil.copyfile(calibration_template, db)
    result = subprocess.run(
        [sys.executable, "-m", "runners.cli", "sweep", str(spec), "--store", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return db


@pytest.mark.mpi
def test_one_sweep_stores_three_libraries(three: Path) -> None:
    """Every point once with its library; Intel MPI's ring forced by its launch's environment;
    three versions in the run; Intel MPI's default against MPICH's and its ring against its
    default, paired by round; winners per library; its points predicted by its own
    calibrations; `collsweep runs` names the three libraries."""
    points = store.query(three, "SELECT algorithm, library, status, library_config FROM points")
    assert len(points) == 2 * 9 and set(points["status"]) == {"ok"}
    mine = dict(zip(points["algorithm"], points["library"], strict=False))
    assert mine["ring@impi"] == mine["impi"] == mine["impi:ring"] == "impi"
    forced = points[points["algorithm"] == "impi:ring"]["library_config"]
    assert (forced == "env I_MPI_ADJUST_ALLREDUCE=8").all()
    [run] = store.query(three, "SELECT libraries, environment FROM runs").to_dict("records")
    assert json.loads(run["libraries"])["impi"]["mpi_version"].startswith("Intel MPI 2021.")
    assert json.loads(run["environment"])["library_forcing"]["impi"]["mode"] == "launch"
    defaults = store.query(
        three,
        "SELECT algorithm, baseline, pairing FROM against_default WHERE algorithm LIKE 'impi%'",
    )
    pairs = set(zip(defaults["algorithm"], defaults["baseline"], defaults["pairing"], strict=True))
    assert pairs == {("impi", "mpi", "same round"), ("impi:ring", "impi", "same round")}
    winners = store.query(three, "SELECT DISTINCT library FROM winners")
    assert set(winners["library"]) == {"all", "mpich", "openmpi", "impi"}
    predicted = store.query(
        three,
        "SELECT DISTINCT pr.calibration_id FROM predictions pr JOIN points p USING (point_id) "
        "WHERE p.library = 'impi'",
    )
    assert len(predicted) and all(c.endswith("@impi") for c in predicted["calibration_id"])
    runs = subprocess.run(
        [sys.executable, "-m", "runners.cli", "runs", "--store", str(three)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert "Intel MPI 2021." in runs.stdout and "Open MPI 5." in runs.stdout


@pytest.mark.mpi
def test_the_dashboard_shows_three_libraries(three: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs names the three versions; Curves offers the three libraries and draws Intel MPI's
    algorithms alone when it is chosen; Override impact offers Intel MPI's default and its
    forced ring against their baselines."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(store.STORE_ENV, str(three))
    app = str(ROOT / "dashboard" / "app.py")
    at = AppTest.from_file(app, default_timeout=60).run()
    assert not at.exception
    at.switch_page("views/runs.py").run()
    runs = next(t.value for t in at.dataframe if "library" in t.value.columns)
    assert runs["library"].str.contains("Intel MPI 2021").all()
    at = AppTest.from_file(app, default_timeout=60)
    at.query_params.update({"ranks": "2"})
    at.run()
    at.switch_page("views/curves.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="lib").options == ["Intel MPI", "MPICH", "Open MPI"]
    at.multiselect(key="lib").set_value(["Intel MPI"]).run()
    assert set(at.multiselect(key="alg").options) == {"ring@impi", "impi", "impi:ring"}
    at.switch_page("views/override.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert {"impi", "impi:ring"} <= set(at.selectbox(key="forced").options)


def test_verify_gives_each_forced_algorithm_a_launch_of_its_own() -> None:
    """Per library, one launch for the unforced algorithms and one per forced one, forced by
    the same environment a sweep uses; an algorithm configured by a file is not offered."""
    from runners.jobs.verify import VERIFIABLE, launches

    planned = launches(["ring", "mpi", "mpi:ring", "ring@impi", "impi", "impi:knomial"])
    found = {(p.library, p.algorithms): p.knobs for p in planned}
    assert found[("mpich", ("ring", "mpi"))] == {}
    assert found[("mpich", ("mpi:ring",))]["MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"] == "ring"
    assert found[("impi", ("ring@impi", "impi"))] == {}
    assert found[("impi", ("impi:knomial",))] == {"I_MPI_ADJUST_ALLREDUCE": "9"}
    assert "mpi:tuned" not in VERIFIABLE and "impi:ring" in VERIFIABLE


@pytest.mark.mpi
def test_verify_checks_intel_algorithms_on_intel_ranks() -> None:
    """`collsweep verify` over Intel MPI's algorithms: every result exact (a noncommutative op
    included, refused by the hand-written ring), exit 0, each named in the table."""
    names = "ring@impi,impi,impi:ring,impi:binomial_gather_scatter"
    result = subprocess.run(
        [sys.executable, "-m", "runners.cli", "verify", "--ranks", "3", "--algorithms", names,
         "--dtypes", "float64", "--ops", "sum,first_nonzero"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    rows = [line.split() for line in result.stdout.splitlines() if line.strip().startswith("3 ")]
    assert {row[1] for row in rows} == set(names.split(","))
    assert all(row[-1] == "CORRECT" for row in rows)


INTEL_RUN = "r20261203-120000-iiii"


@pytest.fixture(scope="module")
def intel_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic Intel MPI run at p=2 with exact times, built once for the module (read
    it only): the default wins at 1 KiB (the ring, 10% slower, stands in for it there), ties
    recursive doubling at 32 KiB, and loses to the forced ring by 2x at 1 MiB."""
    from helpers import synthetic

    times = {
        ("impi", 1024): 2e-6,
        ("impi:ring", 1024): 2.2e-6,
        ("impi:recursive_doubling", 1024): 3e-6,
        ("impi", 32768): 10e-6,
        ("impi:ring", 32768): 12e-6,
        ("impi:recursive_doubling", 32768): 10e-6,
        ("impi", 1048576): 400e-6,
        ("impi:ring", 1048576): 200e-6,
        ("impi:recursive_doubling", 1048576): 500e-6,
    }
    spec = synthetic.RunSpec(
        run_id=INTEL_RUN,
        mpi_version=libraries.installed_version(impi) or "Intel MPI 2021.18.1",
        ranks=(2,),
        sizes=(1024, 32768, 1048576),
        algorithms=("impi", "impi:ring", "impi:recursive_doubling"),
        exact_times=times,
        timeout_point=False,
    )
    path = tmp_path_factory.mktemp("intel") / "intel.duckdb"
    synthetic.build_store(path, [spec])
    return path


def test_tune_writes_intel_mpis_json_tree_from_a_run(
    intel_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`collsweep tune --library impi`: Intel MPI's tree for p=2, the forced ring where it won
    (1 MiB), and where the default stays the preset measured closest to it (the tree must name
    one everywhere): the ring at 1 KiB, recursive doubling (a tie) at 32 KiB, said in the
    provenance; a validation spec on Intel MPI with impi:tuned; the file passes the check a
    sweep makes."""
    from runners.cli.main import main
    from runners.domain.libraries.tuning import provenance_path
    from runners.domain.sweep.spec import load_spec

    path, out, check = intel_store, tmp_path / "impi.json", tmp_path / "v.toml"
    argv = ["tune", INTEL_RUN, "--store", str(path), "--out", str(out), "--library", "impi"]
    assert main([*argv, "--validate-spec", str(check)]) == 0
    printed = capsys.readouterr().out
    tree = json.loads(out.read_text())["coll=Allreduce"]["ppn=2"]["comm_size=2"]["comm_id=-1"]
    assert list(tree.values()) == [{"ALLREDUCE=8": {}}, {"ALLREDUCE=1": {}}, {"ALLREDUCE=8": {}}]
    uptos = [int(key.split("=")[1]) for key in tree]
    assert 1024 <= uptos[0] < 32768 <= uptos[1] < 1048576 and uptos[2] == -1
    provenance = json.loads(provenance_path(out).read_text())
    sizes = {s["bytes"]: s for s in provenance["collectives"]["allreduce"]["groups"]["2"]["sizes"]}
    assert sizes[1048576]["choice"] == "impi:ring" and sizes[1048576]["decided"]
    assert sizes[1024]["choice"] is None and sizes[1024]["stand_in_for_default"] == "impi:ring"
    assert sizes[1024]["stand_in_slower_than_default"]  # the default won at 1 KiB: said
    assert not sizes[32768]["stand_in_slower_than_default"]  # a tie: nothing lost
    assert "warning: p=2 1 KiB: Intel MPI's file must name a preset" in printed
    assert "(the closest, impi:ring, 1.1x slower)" in printed
    assert provenance["library"].startswith("Intel MPI 2021.")
    assert tuning_problem(impi, out) is None and "I_MPI_TUNING" in printed
    spec = load_spec(check)
    assert spec.libraries == ("impi",) and spec.tuning_file == str(out.resolve())
    assert set(spec.algorithms) == {"impi", "impi:ring", "impi:recursive_doubling", "impi:tuned"}


def test_tune_refuses_a_library_the_run_did_not_measure_or_cannot_write(
    intel_store: Path, demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2, one line, nothing written: Intel MPI's file from an MPICH run, an MPICH file
    from an Intel MPI run, an Open MPI file from it; an Intel file given to MPICH's tuned entry is
    refused by the sweep before any rank starts."""
    from helpers import synthetic

    from runners.cli.main import main

    path, out = intel_store, tmp_path / "t.json"
    mpich_run = synthetic.demo_specs()[0].run_id
    for store_path, run, library, said in (
        (demo_store, mpich_run, "impi", "measured no Intel MPI"),
        (path, INTEL_RUN, "mpich", "measured no MPICH"),
        (path, INTEL_RUN, "openmpi", "measured no Open MPI"),
    ):
        argv = ["tune", run, "--store", str(store_path), "--out", str(out), "--library", library]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and said in err[0], err
        assert not out.exists()
    argv = ["tune", INTEL_RUN, "--store", str(path), "--out", str(out), "--library", "impi"]
    assert main(argv) == 0
    assert "lacks collective=allreduce" in str(tuning_problem(LIBRARIES["mpich"], out))
    db = tmp_path / "none.duckdb"
    sweep = ["sweep", "--sizes", "8", "--ranks", "2", "--tuning-file", str(out), "--store", str(db)]
    assert main(sweep) == 2  # mpi:tuned, MPICH's entry, cannot follow Intel MPI's tree
    assert "lacks collective=allreduce" in capsys.readouterr().err and not db.exists()


@pytest.mark.mpi
def test_intel_mpi_follows_the_tree_on_both_sides_of_a_boundary(tmp_path: Path) -> None:
    """The tree collsweep writes, read through I_MPI_TUNING by 4 Intel MPI ranks: up to 8192
    bytes the ring (a quarter three times), from 8200 bytes Rabenseifner (a half, a quarter)."""
    from helpers.fingerprints import calls_of

    from runners.domain.libraries.catalog import ALGORITHMS
    from runners.domain.libraries.tuning import Band

    out = tmp_path / "impi.json"
    bands = {4: [Band(8192, "impi:ring"), Band(None, "impi:rabenseifner")]}
    [(path, table)] = impi.tuning_tables(out, {0: {"allreduce": bands}}, ALGORITHMS).items()
    path.write_text(json.dumps(table))
    knobs = {**impi.tuning_env(out), "PYTHONPATH": str(ROOT / "tests" / "mpi_programs")}
    found = {}
    for count in (1024, 1025):  # float64: 8192 and 8200 bytes
        job = launch.Job(4, "library_fingerprint", [str(count)], knobs, library="impi")
        result = launch.run(job, 120)
        assert result.returncode == 0, result.stderr
        found[count] = calls_of(result.stdout)
    assert found[1024] == {r: [256] * 3 for r in range(4)}
    assert all(len(calls) == 2 and calls[0] > calls[1] for calls in found[1025].values())


@pytest.mark.mpi
def test_impi_tuned_follows_the_file_in_launches_of_its_own(
    intel_store: Path,
    tmp_path: Path,
    calibration_template: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sweep with --libraries impi --tuning-file F times impi:tuned beside impi, in launches
    of its own with I_MPI_TUNING=F, and records the file's SHA-256 and provenance; the Tuning
    page sets impi:tuned against impi and shows Intel MPI's tree."""
    from runners.cli.main import main

    out = tmp_path / "impi.json"
    argv = ["tune", INTEL_RUN, "--store", str(intel_store), "--out", str(out)]
    assert main([*argv, "--library", "impi"]) == 0
    db = tmp_path / "v.duckdb"
    shutil.copyfile(calibration_template, db)
    result = subprocess.run(
        [sys.executable, "-m", "runners.cli", "sweep", "--sizes", "8,65536", "--ranks", "2",
         "--libraries", "impi", "--algorithms", "impi", "--tuning-file", str(out),
         "--launches", "2", "--budget-s", "0.05", "--store", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    points = store.query(db, "SELECT algorithm, status, library_config, job FROM points")
    tuned = points[points["algorithm"] == "impi:tuned"]
    assert len(tuned) == 2 and set(tuned["status"]) == {"ok"}
    assert set(tuned["library_config"]) == {"env I_MPI_TUNING (the run's tuning_file)"}
    assert set(tuned["job"]) == {"ranks=2 config=impi:tuned"}
    [env] = store.query(db, "SELECT environment FROM runs")["environment"]
    record = json.loads(env)["tuning_file"]
    assert record["file"] == str(out.resolve()) and len(record["file_sha256"]) == 64
    assert record["provenance"]["run_id"] == INTEL_RUN and "posix_file" not in record
    [job] = [k for label, k in json.loads(env)["jobs"].items() if "impi:tuned" in label]
    assert job["I_MPI_TUNING"] == str(out.resolve())
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(store.STORE_ENV, str(db))
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=60).run()
    at.switch_page("views/tuning.py").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [m.value for m in (*at.success, *at.error)]
    assert len(said) == 1 and "impi:tuned" in said[0] and "autotuned impi" in said[0]
    assert "The allreduce rules as Intel MPI reads them" in [e.label for e in at.expander]
    assert any("coll=Allreduce" in c.value for c in at.code)


def test_a_file_intels_autotuner_wrote_adds_impi_autotuned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vendor_tuning_file adds impi:autotuned, beside impi:tuned when both files are given,
    each in launches of its own reading its file (I_MPI_TUNING_BIN, I_MPI_TUNING); named
    without the file, or the file missing or empty: refused before any rank starts."""
    from runners.cli.main import main
    from runners.domain.sweep.spec import SpecError

    text = "sizes=[8]\nranks=[2]\nlibraries=['impi']\nalgorithms=['impi']\n"
    spec = parse_spec(text + "vendor_tuning_file='/x/auto.dat'\ntuning_file='/x/t.json'")
    assert spec.algorithms == ("impi", "impi:tuned", "impi:autotuned")
    groups = {g.config: g.knobs for g in plan_groups(spec, "x", cores=8)}
    assert groups["impi:autotuned"]["I_MPI_TUNING_BIN"] == "/x/auto.dat"
    assert groups["impi:tuned"]["I_MPI_TUNING"] == "/x/t.json"
    assert "I_MPI_TUNING_BIN" not in groups["impi:tuned"]
    assert library_config("impi:autotuned", "launch") == (
        "env I_MPI_TUNING_BIN (the run's vendor_tuning_file)"
    )
    with pytest.raises(SpecError, match="impi:autotuned needs vendor_tuning_file"):
        parse_spec("sizes=[8]\nranks=[2]\nalgorithms=['impi', 'impi:autotuned']")
    empty, db = tmp_path / "empty.dat", tmp_path / "none.duckdb"
    empty.write_bytes(b"")
    for path in (tmp_path / "missing.dat", empty):
        argv = ["sweep", "--sizes", "8", "--ranks", "2", "--libraries", "impi"]
        assert main([*argv, "--vendor-tuning-file", str(path), "--store", str(db)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is not a file with content" in err[0] and not db.exists()


def test_the_shm_presets_fallback_for_a_user_op_is_declared() -> None:
    """With collsweep's user-defined op the SHM-based presets run recursive doubling (the
    fingerprint test shows it): such points are skipped with that reason, never timed under
    the preset's name; built-in ops are not."""
    from runners.domain.sweep.plan import skip_reason

    for name in ("impi:shm_flat", "impi:shm_knomial", "impi:shm_knary"):
        said = skip_reason(name, 2, "first_nonzero", 64, "float32")
        assert said and "for a user-defined op" in said
        assert skip_reason(name, 2, "sum", 64, "float32") is None
