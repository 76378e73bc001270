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
from fingerprints import planned_calls

from runners import store
from runners.domain.algorithms.impi import FORCED
from runners.domain.libraries import LIBRARIES, short_library_version
from runners.domain.libraries.impi import LIBRARY as impi
from runners.domain.plan import plan_groups
from runners.domain.spec import parse_spec
from runners.domain.switching import library_config
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
    groups = {g.config: g for g in plan_groups(spec, "x", switching="runtime")}
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
    assert words[:3] == [str(impi.prefix() / "bin" / "mpiexec"), "-n", "3"]
    env = launch.job_env(job)
    assert env["MPI4PY_LIBMPI"] == str(impi.prefix() / "lib" / "libmpi.so.12")
    assert env["LD_LIBRARY_PATH"].split(":")[0] == str(impi.prefix() / "lib")
    assert env["I_MPI_FABRICS"] == "shm" and env["K"] == "1"
    assert [lib.calibration_suffix for lib in LIBRARIES.values()] == ["", "@openmpi", "@impi"]


@pytest.mark.mpi
def test_every_forced_intel_preset_runs_what_it_names() -> None:
    """p=4, 4096 float64, each preset in the launch the sweep's plan gives it: recursive
    doubling reduces the full buffer twice on every rank, Rabenseifner a half then a quarter,
    ring a quarter three times; reduce + bcast reduces a binomial tree's share in segments
    (rank 0 two buffers, rank 1 one, the leaves none); binomial gather + scatter twice at rank
    0, once at rank 2; knomial twice everywhere; Shumilin's ring once on ranks 0, 2 and 3. The
    SHM-based presets cannot be proven this way: with a user-defined op they run recursive
    doubling (their shared-memory path takes built-in ops only), which is asserted so that a
    change shows. The default differs from a preset."""
    assert impi.installed(), f"Intel MPI is not in {impi.prefix()}: run `make install`"
    found = planned_calls("impi", 4, 4096, ("impi", *PRESETS))
    every = range(4)
    assert found["impi:recursive_doubling"] == {r: [4096, 4096] for r in every}
    assert found["impi:rabenseifner"] == {r: [2048, 1024] for r in every}
    assert found["impi:ring"] == {r: [1024] * 3 for r in every}
    tree = found["impi:reduce_bcast"]
    assert [sum(tree[r]) for r in every] == [2 * 4096, 4096, 0, 0] and len(tree[0]) > 2
    for name in ("shm_flat", "shm_knomial", "shm_knary"):
        assert found[f"impi:{name}"] == found["impi:recursive_doubling"], name
    assert found["impi:binomial_gather_scatter"] == {0: [4096] * 2, 1: [], 2: [4096], 3: []}
    assert found["impi:knomial"] == {r: [4096, 4096] for r in every}
    assert found["impi:shumilin_ring"] == {0: [4096], 1: [], 2: [4096], 3: [4096]}
    assert any(found["impi"] != found[name] for name in PRESETS)


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
