"""The Tuning page: mpi:tuned against the autotuned mpi, slower sizes in red, and the file."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from conftest import ROOT
from helpers import synthetic
from streamlit.testing.v1 import AppTest

from dashboard import queries
from runners import store
from runners.domain.libraries import tuning
from runners.domain.libraries.tuning import Band

APP = ROOT / "dashboard" / "app.py"
RUN = "r20261203-120000-tttt"


def tuned_store(folder: Path, slowdown: float) -> Path:
    """A store with one run that timed mpi:tuned (`slowdown` times the autotuned mpi's true
    time) following a real tuning file in `folder`."""
    per_ranks = {2: [Band(64, "mpi:recursive_doubling"), Band(None, None)]}
    path = synthetic.write_tuning_file(folder, per_ranks)
    bands = [{"upto_bytes": 64, "algorithm": "mpi:recursive_doubling"}]
    bands.append({"upto_bytes": None, "algorithm": "mpi (library default)"})
    groups = {"2": {"bands": bands}}
    provenance = {"run_id": "r-source", "collectives": {"allreduce": {"groups": groups}}}
    tuning.provenance_path(path).write_text(json.dumps(provenance))
    spec = synthetic.RunSpec(
        run_id=RUN,
        started_at=datetime(2026, 12, 3, 12, 0, 0),
        ranks=(2,),
        algorithms=("mpi", "mpi:recursive_doubling", "mpi:tuned"),
        slowdown={"mpi:tuned": slowdown},
        timeout_point=False,
        tuning_file=str(path),
    )
    db = folder / "tuned.duckdb"
    synthetic.build_store(db, [spec])
    return db


def open_tuning(db: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv(store.STORE_ENV, str(db))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("views/tuning.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_slower_tuned_file_is_flagged_in_red_with_its_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tuned_store(tmp_path, slowdown=1.6)
    at = open_tuning(db, monkeypatch)
    ratios = queries.tuning_ratios(db, queries.Scope(RUN, dtype="float32", op="sum"))
    slower = int((ratios["verdict"] == "slower").sum())
    assert slower > 0 and (ratios["ratio_low"] <= ratios["ratio"]).all()
    assert (ratios["ratio"] <= ratios["ratio_high"]).all()
    [error] = at.error
    assert f"(decided by the paired launches) at {slower} of" in error.value
    assert len(at.get("plotly_chart")) == 1
    code = at.get("code")[0].proto.code_text
    assert "MPIR_Allreduce_intra_recursive_doubling" in code
    assert at.get("download_button")
    bands = next(t.value for t in at.dataframe if "algorithm" in t.value.columns)
    assert bands["sizes"].tolist() == ["up to 64 B", "above 64 B and larger"]
    assert bands["algorithm"].tolist() == ["mpi:recursive_doubling", "mpi (library default)"]


def test_a_file_no_longer_on_disk_is_said_so_and_no_slowdown_is_green(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tuned_store(tmp_path, slowdown=1.0)
    (tmp_path / "tuned.json").unlink()
    at = open_tuning(db, monkeypatch)
    ratios = queries.tuning_ratios(db, queries.Scope(RUN, dtype="float32", op="sum"))
    if (ratios["verdict"] == "slower").any():  # noise can part two equal medians' intervals
        assert at.error
    else:
        assert "nowhere slower" in at.success[0].value
    assert any("no longer on this machine" in i.value for i in at.info)
    assert not at.get("download_button")


def test_without_a_tuned_run_the_page_says_how_to_make_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "plain.duckdb"
    synthetic.build_store(db, [synthetic.RunSpec(ranks=(2,), timeout_point=False)])
    at = open_tuning(db, monkeypatch)
    assert "collsweep tune RUN --library mpich --out tuned.json" in at.info[0].value
    assert "impi:tuned" in at.info[0].value
