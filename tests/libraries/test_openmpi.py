"""Open MPI beside MPICH, on real Open MPI ranks: each forced coll/tuned algorithm proven by a
counting user op on the communicator a sweep gives it, the declared fallbacks proven to be what
Open MPI runs, and one sweep storing both libraries' points."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from helpers.fingerprints import openmpi_sends, planned_calls, schedule_sends

from runners import store
from runners.domain.libraries.catalog import ALGORITHMS, canonical_name
from runners.domain.libraries.openmpi import LIBRARY as openmpi
from runners.domain.libraries.openmpi import mca_environment
from runners.domain.sweep.plan import skip_reason
from runners.host import libraries
from runners.jobs import launch

FORCED = [
    "openmpi:basic_linear",
    "openmpi:nonoverlapping",
    "openmpi:recursive_doubling",
    "openmpi:ring",
    "openmpi:segmented_ring",
    "openmpi:rabenseifner",
]


def fingerprints(
    ranks: int,
    count: int,
    algorithms: tuple[str, ...] = ("openmpi", *FORCED),
    how: str = "runtime",
    planned: int = 0,
) -> dict[str, dict[int, list[int]]]:
    """The counting op's calls per algorithm and rank on Open MPI (planned_calls)."""
    assert libraries.installed(openmpi), (
        f"Open MPI is not in {libraries.prefix(openmpi)}: run `make install`"
    )
    return planned_calls("openmpi", ranks, count, algorithms, how, planned)


@pytest.mark.mpi
def test_every_forced_open_mpi_algorithm_runs_what_it_names() -> None:
    """p=4, 1024 float64 (8 KiB): basic linear reduces everything at rank 0; reduce + broadcast
    reduces p-1 full buffers in all; recursive doubling the full count twice on every rank;
    ring a quarter three times; Rabenseifner halves then quarters; the autotuned default differs
    from at least one forced algorithm (so the forcing changes something)."""
    found = fingerprints(4, 1024)
    every = range(4)
    assert found["openmpi:basic_linear"] == {0: [1024] * 3, 1: [], 2: [], 3: []}
    nonoverlapping = [c for calls in found["openmpi:nonoverlapping"].values() for c in calls]
    assert nonoverlapping == [1024] * 3
    assert found["openmpi:recursive_doubling"] == {r: [1024, 1024] for r in every}
    assert found["openmpi:ring"] == {r: [256] * 3 for r in every}
    assert found["openmpi:rabenseifner"] == {r: [512, 256] for r in every}
    assert len({json.dumps(calls) for calls in found.values()}) >= 4


@pytest.mark.mpi
def test_open_mpis_forced_reduce_and_reduce_scatter_run_what_they_name() -> None:
    """p=4, 1024 float64, each on a communicator forced by MPI_T as a sweep makes it: the
    binomial reduce reduces at ranks 0 (twice) and 2 only; Rabenseifner's reduce halves then
    quarters on every rank; the pipeline in 2 KiB segments is reduce.chain(segment=2KiB) rank
    by rank (four 256-element segments on ranks 0..2, nothing on the chain's end); the
    recursive-halving reduce-scatter halves then quarters; the basic linear one reduces the
    whole vector along coll/tuned's reduce, never on rank 3."""
    chain = "reduce.openmpi:chain(segment=2KiB)"
    reduce = ("reduce.openmpi:binomial", "reduce.openmpi:rabenseifner", chain)
    found = planned_calls("openmpi", 4, 1024, reduce, collective="reduce")
    assert found["reduce.openmpi:binomial"] == {0: [1024, 1024], 1: [], 2: [1024], 3: []}
    assert found["reduce.openmpi:rabenseifner"] == {r: [512, 256] for r in range(4)}
    schedule = ALGORITHMS[ALGORITHMS[chain].modelled_by].schedule_at(8)
    expected = {r: [s.received for s in schedule(r, 4, 1024) if s.reduce] for r in range(4)}
    assert found[chain] == expected == {0: [256] * 4, 1: [256] * 4, 2: [256] * 4, 3: []}
    scatter = ("reduce_scatter.openmpi:recursive_halving", "reduce_scatter.openmpi:basic_linear")
    found = planned_calls("openmpi", 4, 1024, scatter, collective="reduce_scatter")
    assert found["reduce_scatter.openmpi:recursive_halving"] == {r: [512, 256] for r in range(4)}
    linear = found["reduce_scatter.openmpi:basic_linear"]
    assert linear[3] == [] and sum(map(len, linear.values())) == 3
    assert {c for calls in linear.values() for c in calls} == {1024}


@pytest.mark.mpi
def test_verify_checks_open_mpis_other_collectives_and_refuses_its_unordered_reduce() -> None:
    """`collsweep verify` over Open MPI's forced reduce-scatter, allgather, bcast and reduce at
    p=3: every result exact; its binomial reduce, which broke rank order for a noncommutative
    op, is refused for it instead of checked wrong."""
    names = "openmpi:recursive_halving,openmpi:bruck,openmpi:binomial,openmpi:rabenseifner"
    result = subprocess.run(
        [sys.executable, "-m", "runners.cli", "verify", "--ranks", "3", "--algorithms", names,
         "--collectives", "reduce_scatter,allgather,bcast,reduce", "--dtypes", "int32",
         "--ops", "sum,first_nonzero"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    rows = {r[1]: r for line in result.stdout.splitlines() if (r := line.split())[:1] == ["3"]}
    assert set(rows) >= {"reduce.openmpi:binomial", "bcast.openmpi:binomial"}
    assert all(row[-1] == "CORRECT" for row in rows.values())
    assert int(rows["reduce.openmpi:binomial"][3]) > 0  # refused: first_nonzero


@pytest.mark.mpi
def test_forcing_by_environment_runs_the_same_algorithms() -> None:
    """library_switching = "launch": a launch per forced algorithm, forced by OMPI_MCA_
    variables, leaves the same fingerprints as the communicators of one launch."""
    chosen = ("openmpi:ring", "openmpi:rabenseifner", "openmpi:basic_linear")
    by_environment = fingerprints(4, 1024, chosen, how="launch")
    assert by_environment == fingerprints(4, 1024, chosen)
    assert by_environment["openmpi:ring"] == {r: [256] * 3 for r in range(4)}


@pytest.mark.mpi
def test_segmented_ring_cuts_the_ring_into_its_recorded_segments() -> None:
    """512 KiB of float64 on 4 ranks: the ring reduces 16384 elements three times, the
    segmented ring 64 KiB segments (8192 elements) in two phases of three, in 32 KiB ones
    (forced with its segment size) in four; on 5 ranks and
    an uneven 106921 float64 (three phases of uneven parts), rank by rank what the schedule
    that models it, segmented_ring(segment=64KiB), reduces."""
    members = ("openmpi:ring", "openmpi:segmented_ring", "openmpi:segmented_ring(segment=32KiB)")
    found = fingerprints(4, 65536, members)
    assert found["openmpi:ring"] == {r: [16384] * 3 for r in range(4)}
    assert found["openmpi:segmented_ring"] == {r: [8192] * 6 for r in range(4)}
    assert found["openmpi:segmented_ring(segment=32KiB)"] == {r: [4096] * 12 for r in range(4)}
    model = ALGORITHMS[ALGORITHMS["openmpi:segmented_ring"].modelled_by].schedule_at(8)
    expected = {r: [s.received for s in model(r, 5, 106921) if s.reduce] for r in range(5)}
    assert len(expected[0]) == 3 * 4 and len({n for calls in expected.values() for n in calls}) > 1
    uneven = fingerprints(5, 106921, ("openmpi:segmented_ring",))
    assert uneven["openmpi:segmented_ring"] == expected


@pytest.mark.mpi
@pytest.mark.parametrize(
    "forced", ["bcast.openmpi:knomial(radix=3)", "bcast.openmpi:chain(segment=1000)"]
)
def test_a_forced_bcast_sends_what_its_model_sends_peer_by_peer(
    forced: str, tmp_path: Path
) -> None:
    """A bcast reduces nothing, so Open MPI's own message monitoring is the witness: on 8
    ranks, 4096 float64, every rank sends each peer the messages and bytes the model's
    schedule does (the k-nomial tree of radix 3: rank 0 to 1, 2, 3 and 6; the chain: 33
    segments along the line). Checked the same way by hand: radix 2 and 4, the chain in 8 KiB,
    and the binary tree, which numbers its nodes otherwise (its sends per rank the same)."""
    spec = ALGORITHMS[canonical_name(forced, {})]
    model = ALGORITHMS[spec.modelled_by].schedule_at(8)
    knobs = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", **mca_environment(spec)}
    assert openmpi_sends(8, 4096, knobs, tmp_path) == schedule_sends(model, 8, 4096)


def test_a_rules_file_names_a_knomial_tree_only_at_open_mpis_own_radix() -> None:
    """Open MPI's rules say algorithm, fan-in/out and segment size, never a radix; and each
    radix runs in a launch of its own, forced by the environment (as the monitoring proves
    it), its points saying so."""
    radix = {k: ALGORITHMS[canonical_name(f"bcast.openmpi:knomial(radix={k})", {})] for k in (2, 4)}
    assert openmpi.tunable(radix[4]) and not openmpi.tunable(radix[2])
    assert not openmpi.switches_at_run_time(radix[2])
    assert openmpi.forced_by(radix[2], "runtime").startswith("env ")
    assert openmpi.forced_by(ALGORITHMS["openmpi:ring"], "runtime").startswith("MPI_T ")


@pytest.mark.mpi
def test_the_declared_fallbacks_are_what_open_mpi_runs() -> None:
    """Two float64 on 4 ranks: ring runs recursive doubling and Rabenseifner basic linear (as
    their descriptors declare, from Open MPI's source), so the sweep stores them as skipped."""
    found = fingerprints(4, 2, planned=1024)
    assert found["openmpi:ring"] == found["openmpi:recursive_doubling"]
    assert found["openmpi:rabenseifner"] == found["openmpi:basic_linear"]
    assert "recursive doubling" in skip_reason("openmpi:ring", 4, "sum", 16, "float64")
    assert "basic linear" in skip_reason("openmpi:rabenseifner", 4, "sum", 16, "float64")
    assert skip_reason("openmpi:ring", 4, "sum", 8192, "float64") is None


def sweep(store_path: Path, spec: Path, *args: str) -> subprocess.CompletedProcess:
    """Run `collsweep sweep` into `store_path`."""
    command = [sys.executable, "-m", "runners.cli", "sweep", str(spec), "--store", str(store_path)]
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory, calibration_template: Path) -> Path:
    """One real sweep on both libraries at p=2 and p=3 (oversubscribed), stored and analysed,
    into a store that already holds MPICH's calibration."""
    folder = tmp_path_factory.mktemp("both")
    spec = folder / "two.toml"
    spec.write_text(
        "sizes = [8, 4096]\nranks = [2, 3]\nalgorithms = ['ring', 'mpi', 'mpi:ring']\n"
        "libraries = ['mpich', 'openmpi']\nlaunches = 2\nbudget_s = 0.05\nmin_iterations = 4\n"
    )
    db = folder / "both.duckdb"
    shutil.copyfile(calibration_template, db)
    result = sweep(db, spec)
    assert result.returncode == 0, result.stderr[-3000:]
    return db


@pytest.mark.mpi
def test_one_sweep_stores_both_libraries_points_once(both: Path) -> None:
    """Every point once, each with its library (a fallback skipped), Open MPI's forced ring
    through its own communicator, both libraries' versions in the run, Open MPI's autotuned
    default set against MPICH's, and predictions from Open MPI's own launch calibration."""
    points = store.query(
        both, "SELECT point_id, algorithm, library, status, reason, library_config FROM points"
    )
    assert points["point_id"].is_unique
    assert len(points) == 2 * 2 * 6
    # 2 elements on 3 ranks: Open MPI's ring would run recursive doubling, so it is not timed
    [skipped] = points[points["status"] != "ok"].to_dict("records")
    assert skipped["point_id"].endswith("/openmpi:ring/3/8/float32/sum")
    assert skipped["status"] == "skipped" and "recursive doubling" in skipped["reason"]
    mine = dict(zip(points["algorithm"], points["library"], strict=False))
    assert mine["ring@openmpi"] == mine["openmpi"] == mine["openmpi:ring"] == "openmpi"
    assert mine["ring"] == mine["mpi"] == mine["mpi:ring"] == "mpich"
    forced = points[points["algorithm"] == "openmpi:ring"]["library_config"]
    assert forced.str.startswith("MPI_T coll_tuned_allreduce_algorithm=4").all()
    [run] = store.query(both, "SELECT libraries, status FROM runs").to_dict("records")
    versions = json.loads(run["libraries"])
    assert versions["openmpi"]["mpi_version"].startswith("Open MPI 5.")
    assert versions["mpich"]["mpi_version"].startswith("MPICH")
    assert run["status"] == "complete"
    defaults = store.query(
        both, "SELECT ranks, bytes, pairing FROM against_default WHERE algorithm = 'openmpi'"
    )
    assert len(defaults) == 4 and set(defaults["pairing"]) == {"same round"}
    winners = store.query(both, "SELECT library, winner, candidates FROM winners")
    assert set(winners["library"]) == {"all", "mpich", "openmpi"}
    for library, rows in winners.groupby("library"):
        assert len(rows) == 4  # (2 group sizes) x (2 sizes)
        if library != "all":
            assert set(rows["winner"].map(lambda a: a in mine and mine[a])) == {library}
    alone = winners[winners["library"] != "all"]["candidates"].max()  # 3: one library's
    assert winners[winners["library"] == "all"]["candidates"].min() > alone  # both compete
    predicted = store.query(
        both,
        "SELECT DISTINCT pr.calibration_id FROM predictions pr JOIN points p USING (point_id) "
        "WHERE p.library = 'openmpi'",
    )
    assert set(predicted["calibration_id"]) and all(
        c.endswith("@openmpi") for c in predicted["calibration_id"]
    )


@pytest.mark.mpi
def test_the_dashboard_shows_both_autotuned_defaults(
    both: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs lists both libraries' versions; Curves offers a library picker and draws MPICH's
    and Open MPI's autotuned allreduce side by side, each library's points predicted by its
    own calibration; Override impact sets Open MPI's default against MPICH's."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(store.STORE_ENV, str(both))
    app = str(ROOT / "dashboard" / "app.py")
    at = AppTest.from_file(app, default_timeout=60).run()
    assert not at.exception
    at.switch_page("views/runs.py").run()
    runs = next(t.value for t in at.dataframe if "library" in t.value.columns)
    assert runs["library"].str.contains("MPICH 5.0").all()
    assert runs["library"].str.contains("Open MPI 5.0").all()
    at = AppTest.from_file(app, default_timeout=60)
    at.query_params.update({"ranks": "2"})
    at.run()
    at.switch_page("views/curves.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="lib").options == ["MPICH", "Open MPI"]
    assert {"mpi", "openmpi"} <= set(at.multiselect(key="alg").value)
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = {trace.get("name") for trace in figure["data"]}
    assert {"mpi", "openmpi", "ring", "ring@openmpi"} <= names
    at.multiselect(key="lib").set_value(["Open MPI"]).run()
    assert set(at.multiselect(key="alg").options) == {"ring@openmpi", "openmpi", "openmpi:ring"}
    at.switch_page("views/crossovers.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("views/override.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="forced").value == "openmpi"
    assert any("than the autotuned **mpi**" in m.value for m in at.markdown)


def test_an_unknown_or_missing_library_is_refused_before_any_rank_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unknown name: exit 2, one line naming the known ones, no store written. A library
    that is not installed is named with what is installed."""
    db = tmp_path / "none.duckdb"
    result = subprocess.run(
        [sys.executable, "-m", "runners.cli", "sweep", "--sizes", "8", "--ranks", "2",
         "--libraries", "mpich,ompi", "--store", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "unknown library ompi; known: impi, mpich, openmpi" in result.stderr
    assert not db.exists()
    here = libraries.prefix
    monkeypatch.setattr(
        libraries, "prefix", lambda lib: tmp_path / "nowhere" if lib is openmpi else here(lib)
    )
    problem = launch.libraries_problem(["mpich", "openmpi"])
    assert problem == (
        "library openmpi is not installed here (installed: mpich, impi); "
        "`make install` installs mpich, openmpi, impi-rt"
    )
