"""A real sweep of every collective (issue 30): points per collective with the right op and
skip reasons, each collective analysed on its own, the verdict, `crossovers --summary` and the
dashboard's pages per collective, and the spec's names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from runners import store
from runners.domain.libraries.catalog import ALGORITHMS, BASE_OF_COLLECTIVE
from runners.domain.sweep.spec import SpecError, parse_spec, spec_from_mapping

pytestmark = pytest.mark.mpi
APP = ROOT / "dashboard" / "app.py"


@pytest.fixture(scope="module")
def swept(
    tmp_path_factory: pytest.TempPathFactory, calibration_template: Path
) -> tuple[Path, str, str]:
    """One real sweep of all five collectives at p = 2 and 3 (12 B: 3 float32 elements, which
    p = 3 can cut into equal blocks; 8 B cannot), into a store holding the host's calibration,
    and its terminal output."""
    from conftest import run_cli

    path = tmp_path_factory.mktemp("collectives") / "s.duckdb"
    shutil.copyfile(calibration_template, path)
    args = ["sweep", "--collectives", "all", "--sizes", "8,12,4K", "--ranks", "2,3"]
    args += ["--launches", "1", "--budget-s", "0.05", "--store", str(path)]
    done = run_cli(*args, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (run_id,) = store.query(path, "SELECT run_id FROM runs").run_id
    return path, run_id, done.stdout + done.stderr


def test_every_collective_is_measured_with_its_own_op_and_skip_reasons(swept) -> None:
    path, run_id, _ = swept
    points = store.query(path, "SELECT * FROM points WHERE run_id = ?", [run_id])
    assert set(points.collective) == set(BASE_OF_COLLECTIVE)
    pairs = zip(points.algorithm, points.collective, strict=True)
    assert all(ALGORITHMS[a].collective == c for a, c in pairs)
    by_op = points.groupby("collective").op.unique().map(set).to_dict()
    assert by_op["allgather"] == by_op["bcast"] == {"none"}
    assert by_op["reduce"] == by_op["reduce_scatter"] == by_op["allreduce"] == {"sum"}
    uneven = points[(points.ranks == 3) & (points.bytes == 8)]
    blocked = uneven[uneven.collective.isin(["allgather", "reduce_scatter"])]
    assert len(blocked) and set(blocked.status) == {"skipped"}
    assert all("equal blocks" in r or "power-of-two" in r for r in blocked.reason)
    assert sum("2 elements is not a multiple of 3" in r for r in blocked.reason) == 7
    fine = points[(points.ranks == 3) & (points.bytes == 12) & (points.collective == "allgather")]
    assert "ok" in set(fine.status)
    ok = points[points.status == "ok"]
    expected = {"allreduce": 1.0, "reduce_scatter": 0.5, "allgather": 0.5, "bcast": 1.0}
    for collective, factor in expected.items():  # nccl-tests' busbw at p = 2
        mine = ok[(ok.collective == collective) & (ok.ranks == 2)]
        assert (mine.busbw_gbps / mine.algbw_gbps).round(9).eq(factor).all(), collective


def test_each_collective_is_analysed_on_its_own(swept) -> None:
    path, run_id, output = swept
    winners = store.query(path, "SELECT * FROM winners WHERE run_id = ?", [run_id])
    assert set(winners.collective) == set(BASE_OF_COLLECTIVE)
    for row in winners.itertuples():
        assert ALGORITHMS[row.winner].collective == row.collective
        assert ALGORITHMS[row.runner_up].collective == row.collective
    for table in ("agreement", "model_accuracy", "best_choices"):
        found = store.query(
            path, f"SELECT DISTINCT collective FROM {table} WHERE run_id = ?", [run_id]
        )
        assert "allreduce" in set(found.collective) and len(found) > 1, table
    predicted = store.query(
        path,
        "SELECT p.algorithm FROM predictions m JOIN points p USING (point_id) "
        "WHERE p.collective = 'reduce_scatter' AND m.predicted_s > 0",
    )
    assert {"reduce_scatter.ring", "reduce_scatter.pairwise"} <= set(predicted.algorithm)
    assert "\nallgather p=2 float32" in output and "\nreduce_scatter p=2 float32 sum" in output


def test_the_summary_names_each_collective_and_its_algorithms_within_it(swept, cli) -> None:
    path, run_id, _ = swept
    done = cli("crossovers", run_id, "--summary", "--store", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    groups = {line.split(":")[0].removesuffix(" (provisional)") for line in lines if ": " in line}
    groups = {g for g in groups if not g.startswith(("provisional", " "))}
    assert {"p=2 float32 sum", "allgather p=2 float32", "bcast p=2 float32"} <= groups
    assert not any("allgather." in line for line in lines if line.startswith("allgather"))


def test_the_curves_page_asks_which_collective(swept, monkeypatch: pytest.MonkeyPatch) -> None:
    path, run_id, _ = swept
    monkeypatch.setenv(store.STORE_ENV, str(path))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"run": run_id, "coll": "allgather"})
    at.run()
    at.switch_page("views/curves.py").run()
    assert not at.exception
    assert at.selectbox(key="coll").value == "allgather"
    assert set(at.multiselect(key="alg").value) <= set(BASE_OF_COLLECTIVE["allgather"])
    assert at.selectbox(key="op").value == "none"


def test_specs_name_algorithms_within_their_collectives() -> None:
    spec = spec_from_mapping(
        {
            "sizes": [64],
            "ranks": [2],
            "collectives": ["allgather", "bcast"],
            "algorithms": ["ring", "mpi"],
        }
    )
    assert spec.algorithms == ("allgather.ring", "allgather.mpi", "bcast.mpi")
    assert parse_spec(spec.to_toml()) == spec
    assert spec_from_mapping({"sizes": [64], "ranks": [2]}).collectives == ("allreduce",)
    every = spec_from_mapping({"sizes": [64], "ranks": [2], "collectives": ["all"]})
    assert set(every.algorithms) == {a for names in BASE_OF_COLLECTIVE.values() for a in names}
    with pytest.raises(SpecError, match="unknown collective alltoall"):
        spec_from_mapping({"sizes": [64], "ranks": [2], "collectives": ["alltoall"]})
    with pytest.raises(SpecError, match="not of the collectives swept"):
        spec_from_mapping(
            {
                "sizes": [64],
                "ranks": [2],
                "collectives": ["bcast"],
                "algorithms": ["allgather.ring"],
            }
        )
    assert json.loads(json.dumps(list(spec.collectives))) == ["allgather", "bcast"]


def test_override_impact_shows_a_forced_algorithm_of_another_collective(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MPICH's forced binomial bcast, switched through MPI_T in the default's own launch, is
    held against MPICH's own bcast (not allreduce's `mpi`): the Override impact page asks for
    the collective and shows its rows, paired within the launch."""
    from conftest import run_cli

    path = tmp_path / "s.duckdb"
    args = ["sweep", "--collectives", "bcast,allreduce", "--algorithms", "mpi,mpi:binomial"]
    args += ["--sizes", "4K,64K", "--ranks", "2", "--launches", "2", "--budget-s", "0.05"]
    done = run_cli(*args, "--store", str(path), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = store.query(path, "SELECT algorithm, baseline, pairing FROM against_default")
    mine = rows[rows.algorithm == "bcast.mpi:binomial"]
    assert len(mine) == 2 and set(mine.baseline) == {"bcast.mpi"}
    assert set(mine.pairing) == {"same launch"}
    (run_id,) = store.query(path, "SELECT run_id FROM runs").run_id
    monkeypatch.setenv(store.STORE_ENV, str(path))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"run": run_id, "coll": "bcast", "forced": "bcast.mpi:binomial"})
    at.run()
    at.switch_page("views/override.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="coll").value == "bcast"
    assert at.selectbox(key="forced").value == "bcast.mpi:binomial"
    assert any("bcast.mpi:binomial" in m.value for m in at.markdown)
