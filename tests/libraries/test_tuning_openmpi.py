"""An Open MPI rules file from collsweep's bands is honoured by real Open MPI ranks: the
counting user op shows the algorithm each rule names on both sides of a boundary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from helpers.fingerprints import calls_of

from runners.domain.libraries import tuning
from runners.domain.libraries.openmpi import LIBRARY as openmpi
from runners.domain.libraries.openmpi import OPENMPI_RULE_KNOBS, openmpi_rules
from runners.domain.libraries.tuning import Band
from runners.host import libraries
from runners.host.tuning_files import tuning_problem

pytestmark = pytest.mark.mpi

PROGRAM = ROOT / "tests" / "mpi_programs" / "library_fingerprint.py"


def reduction_calls(
    ranks: int, count: int, rules: Path | None, collective: str = "allreduce"
) -> dict[int, list[int]]:
    """Per rank, the element counts Open MPI's MPI_Allreduce (or `collective`) passed to a
    counting user op."""
    assert libraries.installed(openmpi), (
        f"Open MPI is not in {libraries.prefix(openmpi)}: run `make install`"
    )
    mca = {}
    if rules is not None:
        mca = dict(zip(OPENMPI_RULE_KNOBS, ("1", str(rules)), strict=True))
    env = {**os.environ, **libraries.launch_env(openmpi)}
    env["PYTHONPATH"] = f"{ROOT / 'tests' / 'mpi_programs'}:{ROOT}"
    argv = [sys.executable, str(PROGRAM), str(count), collective]
    command = libraries.command(openmpi, ranks, argv, exports=["PYTHONPATH"], mca=mca)
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return calls_of(result.stdout)


def test_open_mpi_follows_the_rules_file_on_both_sides_of_a_boundary(tmp_path: Path) -> None:
    """p=4, float64: up to 4 KiB recursive doubling (the full count, twice), above it ring (a
    quarter of the count, three times); without the file Open MPI decides otherwise."""
    rules = tmp_path / "rules.txt"
    per_ranks = {4: [Band(4096, "openmpi:recursive_doubling"), Band(None, "openmpi:ring")]}
    rules.write_text(openmpi_rules({"allreduce": per_ranks}))
    below, above = 256, 1024  # 2 KiB and 8 KiB of float64
    assert reduction_calls(4, below, rules) == {r: [256, 256] for r in range(4)}
    assert reduction_calls(4, above, rules) == {r: [256, 256, 256] for r in range(4)}
    assert reduction_calls(4, above, None) != reduction_calls(4, above, rules)


def test_open_mpi_follows_a_reduce_rule_beside_an_allreduce_rule(tmp_path: Path) -> None:
    """One rules file of two collectives, p=4 float64: reduce up to 4 KiB binomial (ranks 0
    and 2 reduce), above it Rabenseifner (every rank halves, then quarters)."""
    rules = tmp_path / "rules.txt"
    reduce = [Band(4096, "reduce.openmpi:binomial"), Band(None, "reduce.openmpi:rabenseifner")]
    per_collective = {"allreduce": {4: [Band(None, "openmpi:ring")]}, "reduce": {4: reduce}}
    rules.write_text(openmpi_rules(per_collective))
    assert tuning_problem(openmpi, rules) is None
    below, above = 256, 1024  # 2 KiB and 8 KiB of float64
    assert reduction_calls(4, below, rules, "reduce") == {0: [256, 256], 1: [], 2: [256], 3: []}
    assert reduction_calls(4, above, rules, "reduce") == {r: [512, 256] for r in range(4)}
    assert reduction_calls(4, above, rules) == {r: [256] * 3 for r in range(4)}  # ring


def test_a_rule_naming_a_pipeline_carries_its_segment_size(tmp_path: Path) -> None:
    """A reduce band naming reduce.openmpi:chain(segment=1KiB) writes the rule `0 3 0 1024`
    (the pipeline, its segment size): on 4 ranks 1024 float64 are reduced in eight 128-element
    segments on ranks 0..2, nothing on the chain's end, as reduce.chain(segment=1KiB)."""
    rules = tmp_path / "rules.txt"
    per_collective = {"reduce": {4: [Band(None, "reduce.openmpi:chain(segment=1KiB)")]}}
    rules.write_text(openmpi_rules(per_collective))
    assert "0 3 0 1024  # reduce.openmpi:chain(segment=1KiB)" in rules.read_text()
    expected = {0: [128] * 8, 1: [128] * 8, 2: [128] * 8, 3: []}
    assert reduction_calls(4, 1024, rules, "reduce") == expected


OPEN_RUN = "r20261203-130000-oooo"


def open_mpi_store(folder: Path) -> Path:
    """A synthetic Open MPI run at p=2, exact times: the default wins at 1 KiB, the forced
    ring by 2x at 1 MiB."""
    from helpers import synthetic

    times = {
        ("openmpi", 1024): 2e-6,
        ("openmpi:ring", 1024): 3e-6,
        ("openmpi", 1048576): 400e-6,
        ("openmpi:ring", 1048576): 200e-6,
    }
    spec = synthetic.RunSpec(
        run_id=OPEN_RUN,
        mpi_version=libraries.installed_version(openmpi) or "Open MPI 5.0.10",
        ranks=(2,),
        sizes=(1024, 1048576),
        algorithms=("openmpi", "openmpi:ring"),
        exact_times=times,
        timeout_point=False,
    )
    path = folder / "open.duckdb"
    synthetic.build_store(path, [spec])
    return path


def test_tune_writes_open_mpis_rules_and_openmpi_tuned_follows_them(
    tmp_path: Path, calibration_template: Path
) -> None:
    """`collsweep tune --library openmpi`: a rules file (the built-in decision up to the
    boundary, the ring above it) that passes the sweep's check; a sweep with it times
    openmpi:tuned in launches of its own, dynamic rules on and the file named."""
    import json
    import shutil

    from runners import store
    from runners.cli.main import main

    out = tmp_path / "rules.txt"
    argv = ["tune", OPEN_RUN, "--store", str(open_mpi_store(tmp_path)), "--out", str(out)]
    assert main([*argv, "--library", "openmpi"]) == 0
    rules = [line.split("#")[0].split() for line in out.read_text().splitlines()]
    rules = [words for words in rules if words]
    assert rules[:5] == [["1"], ["2"], ["1"], ["2"], ["2"]]  # allreduce; p=2 alone, two rules
    [low, high] = rules[5:7]
    assert low[:2] == ["0", "0"] and high[1] == "4" and 1024 < int(high[0]) <= 1048576
    assert tuning_problem(openmpi, out) is None
    provenance = tuning.provenance_path(out)  # JSON: text, but no rules
    assert "not an Open MPI rules file" in str(tuning_problem(openmpi, provenance))
    assert "not a readable text file" in str(tuning_problem(openmpi, tmp_path / "open.duckdb"))
    db = tmp_path / "v.duckdb"
    shutil.copyfile(calibration_template, db)
    result = subprocess.run(
        [sys.executable, "-m", "runners.cli", "sweep", "--sizes", "8,65536", "--ranks", "2",
         "--libraries", "openmpi", "--algorithms", "openmpi", "--tuning-file", str(out),
         "--launches", "2", "--budget-s", "0.05", "--store", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    points = store.query(db, "SELECT algorithm, status, job FROM points")
    tuned = points[points["algorithm"] == "openmpi:tuned"]
    assert len(tuned) == 2 and set(tuned["status"]) == {"ok"}
    [env] = store.query(db, "SELECT environment FROM runs")["environment"]
    [job] = [k for label, k in json.loads(env)["jobs"].items() if "openmpi:tuned" in label]
    assert job["OMPI_MCA_coll_tuned_dynamic_rules_filename"] == str(out.resolve())
    assert job["OMPI_MCA_coll_tuned_use_dynamic_rules"] == "1"
