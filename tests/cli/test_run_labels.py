"""A run's name and tags (issue 32 item 6): the rule, `sweep --name/--tag`, `collsweep tag`,
and every place a run is listed or picked: `runs`, `compare`, `crossovers --summary`,
`report`, merged shards, `submit` and the dashboard's run pickers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT
from helpers import synthetic

from runners import store
from runners.cli.main import main
from runners.domain.sweep.run_labels import (
    MAX_TAGS,
    BadLabel,
    checked_name,
    checked_tags,
    labels_problem,
    run_title,
)

RUN_A, RUN_B = (spec.run_id for spec in synthetic.demo_specs())
TITLE_A = f"nightly MPICH ({RUN_A}) [ci, mpich-5.0]"


@pytest.fixture
def labelled(demo_store: Path, tmp_path: Path) -> Path:
    """A copy of the demo store whose run A is named and tagged by `collsweep tag`."""
    path = tmp_path / "labelled.duckdb"
    shutil.copyfile(demo_store, path)
    argv = ["tag", RUN_A, "--name", "nightly MPICH", "--add", "ci", "mpich-5.0"]
    assert main([*argv, "--store", str(path)]) == 0
    return path


# --- the rule ------------------------------------------------------------------------------------


def test_names_and_tags_follow_one_rule() -> None:
    assert checked_name("  nightly: MPICH 5.0, 2 cores ") == "nightly: MPICH 5.0, 2 cores"
    assert checked_name("") is None and checked_name(None) is None
    assert checked_name("ü" * 200) == "ü" * 200
    for bad in ("x" * 201, "a\nb", "bell\x07", "tab\there", "\x1b[31mred"):
        with pytest.raises(BadLabel):
            checked_name(bad)
    assert checked_tags(["ci", "mpich-5.0", "ci", "a:b_c.d"]) == ["ci", "mpich-5.0", "a:b_c.d"]
    for bad in ("", "x y", "a,b", "x" * 65, "é", "a/b"):
        with pytest.raises(BadLabel):
            checked_tags([bad])
    assert len(checked_tags([f"t{i}" for i in range(MAX_TAGS)])) == MAX_TAGS
    with pytest.raises(BadLabel, match="at most 32 tags"):
        checked_tags([f"t{i}" for i in range(MAX_TAGS + 1)])
    assert labels_problem(None, None) is None and labels_problem("ok", '["a"]') is None
    assert labels_problem("a\nb", None) and labels_problem(None, '["x y"]')
    assert labels_problem(None, "{not json")


def test_a_run_is_titled_name_then_id_then_tags() -> None:
    assert run_title("r1") == "r1"
    assert run_title("r1", "nightly") == "nightly (r1)"
    assert run_title("r1", None, '["ci", "x"]') == "r1 [ci, x]"
    assert run_title("r1", "n", ["a"]) == "n (r1) [a]"


# --- the commands --------------------------------------------------------------------------------


def test_tag_names_adds_and_removes_and_says_the_result(labelled: Path, capsys) -> None:
    run = store.get_run(labelled, RUN_A)
    assert run["name"] == "nightly MPICH" and run["tags"] == ["ci", "mpich-5.0"]
    capsys.readouterr()
    assert (
        main(["tag", RUN_A, "--remove", "ci", "gone", "--add", "p2", "--store", str(labelled)]) == 0
    )
    out, err = capsys.readouterr()
    assert out.strip() == f"nightly MPICH ({RUN_A}) [mpich-5.0, p2]"
    assert "has no tag gone" in err
    assert (
        main(["tag", RUN_A, "--name", "", "--remove", "mpich-5.0", "p2", "--store", str(labelled)])
        == 0
    )
    assert capsys.readouterr().out.strip() == RUN_A
    run = store.get_run(labelled, RUN_A)
    assert run["name"] is None and run["tags"] is None


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--name", "a\nb"], "control character"),
        (["--name", "x" * 201], "at most 200"),
        (["--add", "ci", "x y"], "a tag must be"),
        (["--add", *(f"t{i}" for i in range(31))], "at most 32 tags"),
        (["--remove", "x,y"], "a tag must be"),
    ],
)
def test_bad_labels_are_one_line_exit_2_and_change_nothing(
    labelled: Path, capsys, argv: list[str], said: str
) -> None:
    before = store.get_run(labelled, RUN_A)
    assert main(["tag", RUN_A, *argv, "--store", str(labelled)]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1
    after = store.get_run(labelled, RUN_A)
    assert (after["name"], after["tags"]) == (before["name"], before["tags"])


def test_tag_refuses_an_unknown_run(labelled: Path, capsys) -> None:
    assert main(["tag", "r20990101-000000-zzzz", "--name", "x", "--store", str(labelled)]) == 2
    assert "no run" in capsys.readouterr().err


def test_sweep_refuses_bad_labels_before_anything_is_written(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.duckdb"
    grid = ["--sizes", "8", "--ranks", "2", "--store", str(path)]
    for argv, said in (
        (["--tag", "x y"], "a tag must be"),
        (["--name", "a\x1bb"], "control character"),
        (["--resume", RUN_A, "--name", "x"], "collsweep tag"),
    ):
        assert main(["sweep", *grid, *argv]) == 2
        assert said in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_runs_lists_names_and_tags(labelled: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["runs", "--store", str(labelled)]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["run_id", "name", "tags"]
    (row,) = [r for r in rows if r.startswith(RUN_A)]
    assert "nightly MPICH" in row and "ci,mpich-5.0" in row
    assert main(["runs", "--store", str(labelled), "--format", "json"]) == 0
    listed = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed[RUN_A]["name"] == "nightly MPICH"
    assert listed[RUN_A]["tags"] == ["ci", "mpich-5.0"] and listed[RUN_B]["tags"] == []


def test_compare_and_the_verdict_name_the_run(labelled: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["compare", RUN_A, RUN_B, "--store", str(labelled)]) == 0
    assert capsys.readouterr().out.startswith(f"{RUN_B} against {TITLE_A}: ")
    assert main(["compare", RUN_A, RUN_B, "--store", str(labelled), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["run_a_name"], found["run_a_tags"]) == ("nightly MPICH", ["ci", "mpich-5.0"])
    assert (found["run_b_name"], found["run_b_tags"]) == (None, [])
    assert main(["crossovers", RUN_A, "--summary", "--store", str(labelled)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"verdict of {TITLE_A}" and lines[1].startswith("p=")
    assert main(["crossovers", RUN_B, "--summary", "--store", str(labelled)]) == 0
    assert capsys.readouterr().out.startswith("p=")  # an unnamed run: no header


@pytest.mark.parametrize(
    "argv",
    [
        ["crossovers", "nightly MPICH", "--summary"],
        ["compare", "nightly MPICH", RUN_B],
        ["tag", "nightly MPICH", "--add", "again"],
        ["analyze", "nightly MPICH"],
        ["export", "nightly MPICH", "--format", "csv"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_runs_name_is_accepted_wherever_its_id_is(
    labelled: Path, tmp_path: Path, capsys, argv: list[str]
) -> None:
    """The name and the id give the same output (exports and tags aside: they write)."""
    extra = ["--output", str(tmp_path / "by")] if argv[0] == "export" else []
    capsys.readouterr()
    assert main([*argv, *extra, "--store", str(labelled)]) == 0
    by_name = capsys.readouterr().out
    if argv[0] == "export":
        assert {f.name.split("_")[0] for f in (tmp_path / "by").iterdir()} == {RUN_A}
        return
    by_id = [RUN_A if word == "nightly MPICH" else word for word in argv]
    assert main([*by_id, "--store", str(labelled)]) == 0
    assert capsys.readouterr().out == by_name or argv[0] == "tag"


def test_a_name_two_runs_share_or_no_run_has_is_one_line_exit_2(labelled: Path, capsys) -> None:
    assert main(["tag", RUN_B, "--name", "nightly MPICH", "--store", str(labelled)]) == 0
    capsys.readouterr()
    assert main(["crossovers", "nightly MPICH", "--summary", "--store", str(labelled)]) == 2
    err = capsys.readouterr().err.strip()
    assert "2 runs are called 'nightly MPICH'" in err and RUN_A in err and RUN_B in err
    assert len(err.splitlines()) == 1
    assert main(["compare", "no such run", RUN_B, "--store", str(labelled)]) == 2
    err = capsys.readouterr().err.strip()
    assert "no run is named 'no such run', and a run id must be" in err
    assert len(err.splitlines()) == 1


def test_the_report_is_headed_by_the_runs_name(labelled: Path) -> None:
    from dashboard.report import report_html

    store.update_run(labelled, RUN_A, {"name": "<b>bold</b> & co"})
    page = report_html(labelled, RUN_A)
    assert (
        f"<h1>collsweep report: &lt;b&gt;bold&lt;/b&gt; &amp; co ({RUN_A}) [ci, mpich-5.0]</h1>"
        in page
    )
    assert "<b>bold</b>" not in page


# --- shards and batch jobs -----------------------------------------------------------------------


def _shard(folder: Path, name: object, tags: object) -> Path:
    """A finished shard of run 'r-shard' (no points) with this name and these tags."""
    path = folder / "1_0.duckdb"
    store.create_run(path, {"run_id": "r-shard", "status": "complete"})
    store.update_run(path, "r-shard", {"name": name, "tags": tags})
    return path


def test_a_merged_run_keeps_its_name_and_tags(tmp_path: Path) -> None:
    main_store = tmp_path / "main.duckdb"
    shard = _shard(tmp_path, "cluster job", ["slurm", "p64"])
    assert main(["merge", str(shard), "--store", str(main_store)]) == 1  # no points: not complete
    run = store.get_run(main_store, "r-shard")
    assert run["name"] == "cluster job" and run["tags"] == ["slurm", "p64"]


def test_a_shard_with_a_bad_label_merges_nothing(tmp_path: Path, capsys) -> None:
    main_store = tmp_path / "main.duckdb"
    shard = _shard(tmp_path, "x\x1b[2J", None)
    assert main(["merge", str(shard), "--store", str(main_store)]) != 0
    assert "control character" in capsys.readouterr().err
    assert not main_store.exists() or store.get_run(main_store, "r-shard") is None


def test_submit_passes_the_name_and_tags_to_every_task(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text("sizes = [8]\nranks = [2, 4]\n")
    argv = ["submit", str(spec), "--store", str(tmp_path / "m.duckdb"), "--dry-run"]
    assert main([*argv, "--name", "big job; rm -rf /", "--tag", "ci"]) == 0
    assert "--name 'big job; rm -rf /' --tag ci" in capsys.readouterr().out
    assert main([*argv, "--tag", "x y"]) == 2


# --- the dashboard -------------------------------------------------------------------------------


def test_every_run_picker_and_the_runs_page_show_the_name(
    labelled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(store.STORE_ENV, str(labelled))
    app = str(ROOT / "dashboard" / "app.py")
    for page, key in (
        ("views/verdict.py", "run"),
        ("views/curves.py", "run"),
        ("views/compare.py", "a"),
    ):
        at = AppTest.from_file(app, default_timeout=60)
        at.query_params.update({"run": RUN_A, "a": RUN_A})
        at.run()
        at.switch_page(page).run()
        assert not at.exception
        picker = at.selectbox(key=key)
        assert picker.value == RUN_A
        assert any(o.startswith(f"{TITLE_A} · synth-node") for o in picker.options), picker.options
        assert any(o.startswith(f"{RUN_B} · synth-node") for o in picker.options)
    at = AppTest.from_file(app, default_timeout=60)
    at.query_params.update({"sel": RUN_A})
    at.run()
    at.switch_page("views/runs.py").run()
    table = next(t.value for t in at.dataframe if "tags" in t.value.columns)
    row = table[table["run_id"] == RUN_A].iloc[0]
    assert (row["name"], row["tags"]) == ("nightly MPICH", "ci,mpich-5.0")
    shown = [h.value.replace("\\", "") for h in at.subheader]  # Markdown-escaped
    assert f"Run {TITLE_A}" in shown


@pytest.mark.mpi
def test_a_swept_run_carries_its_name_and_tags(calibrated_store: Path, cli) -> None:
    """`sweep --name --tag` on real ranks: the run is stored with them (a repeated tag once),
    and `runs` lists them."""
    grid = ["--sizes", "8", "--ranks", "2", "--algorithms", "ring", "--launches", "1"]
    labels = ["--name", "first try", "--tag", "ci", "--tag", "p2", "--tag", "ci"]
    done = cli("sweep", *grid, *labels, "--store", str(calibrated_store))
    assert done.returncode == 0, done.stderr
    (run,) = store.query(calibrated_store, "SELECT run_id, name, tags FROM runs").itertuples()
    assert run.name == "first try" and json.loads(run.tags) == ["ci", "p2"]
    listed = cli("runs", "--store", str(calibrated_store), "--format", "json")
    assert json.loads(listed.stdout)[0]["tags"] == ["ci", "p2"]


def test_a_run_named_in_an_older_store_is_migrated_by_the_command_that_writes(
    labelled: Path, capsys
) -> None:
    from runners.store.migrations_v10_on import NODE_TABLES

    """Resolving a run's name reads the store; a store of the previous schema cannot be read
    yet, so an id passes through to `analyze`, which migrates it as ever."""
    with duckdb.connect(str(labelled)) as con:
        for column in ("default_algorithm", "speedup", "speedup_low", "speedup_high"):
            con.execute(f"ALTER TABLE winners DROP COLUMN {column}")
        con.execute("ALTER TABLE winners DROP COLUMN speedup_verdict")
        con.execute("ALTER TABLE points DROP COLUMN ranks_per_node")  # schema 12's
        con.execute("ALTER TABLE probes DROP COLUMN node_map")
        con.execute("ALTER TABLE probes DROP COLUMN network_bytes")
        for table in NODE_TABLES:  # schema 13's
            con.execute(f"ALTER TABLE {table} DROP COLUMN ranks_per_node")
        con.execute("DROP TABLE cell_inferences")  # schema 14's
        con.execute("ALTER TABLE runs DROP COLUMN adaptive")
        con.execute("UPDATE schema_version SET version = 10")
    assert main(["crossovers", "nightly MPICH", "--summary", "--store", str(labelled)]) == 2
    assert "collsweep migrate" in capsys.readouterr().err  # a reader never migrates
    assert main(["analyze", RUN_A, "--store", str(labelled)]) == 0
    assert store.stored_schema_version(labelled) == store.SCHEMA_VERSION
    assert main(["crossovers", "nightly MPICH", "--summary", "--store", str(labelled)]) == 0
