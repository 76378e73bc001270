"""`collsweep record` stopped while its program runs (SIGTERM, SIGHUP, SIGKILL): one line and a
true status where it can say one, and nothing left behind however it ends: no launcher, proxy
or rank, no records folder, no workload file (#50, item 6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, wait_until

PROGRAM = ROOT / "tests" / "mpi_programs" / "wait_forever.py"


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie left for a parent that never reaps it does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.mpi
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL], ids=str)
def test_a_stopped_record_leaves_nothing_behind(
    tmp_path: Path, sig: signal.Signals, reliability
) -> None:
    ready, scratch, out = tmp_path / "ready", tmp_path / "tmp", tmp_path / "w.json"
    ready.mkdir()
    scratch.mkdir()
    mpiexec = Path(sys.executable).with_name("mpiexec")
    argv = [sys.executable, "-m", "runners.cli", "record", "--out", str(out), "--"]
    argv += [str(mpiexec), "-n", "2", sys.executable, str(PROGRAM), str(ready)]
    env = {**os.environ, "TMPDIR": str(scratch)}
    errors = tmp_path / "stderr"  # a file: a pipe would stay open as long as any rank lives
    with errors.open("w") as sink:
        cli = subprocess.Popen(argv, cwd=ROOT, env=env, stderr=sink, text=True)
    try:
        started = wait_until(
            lambda: len(list(ready.glob("rank?"))) == 2 or cli.poll() is not None, 120
        )
        assert started and cli.poll() is None, errors.read_text()
        pids = {int(n) for f in ready.glob("rank?") for n in f.read_text().split()}
        assert list(scratch.glob("collsweep-record-*")), "the records folder exists meanwhile"
        cli.send_signal(sig)
        status = cli.wait(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
    said = errors.read_text()
    if sig != signal.SIGKILL:
        assert status == 128 + sig, said
        assert said.strip().splitlines() == [
            f"collsweep record: stopped by {sig.name}: the program was killed, nothing written"
        ]
    gone = wait_until(lambda: not any(alive(pid) for pid in pids), 30)
    cleared = wait_until(lambda: not list(scratch.glob("collsweep-record-*")), 30)
    left = sum(alive(pid) for pid in pids) + len(list(scratch.glob("collsweep-record-*")))
    reliability.stop(f"record stopped by {sig.name}", left + out.exists())
    assert gone, "a process outlived it"
    assert cleared and not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=str)
def test_a_stopped_import_leaves_no_staging_and_no_run(
    tmp_path: Path, sig: signal.Signals, reliability
) -> None:
    """`collsweep import` stopped with its staging store written, before the merge: no
    staging folder, the store without a run, one line and 128 + the signal where it can."""
    scratch, db, release = tmp_path / "tmp", tmp_path / "s.duckdb", tmp_path / "release"
    scratch.mkdir()
    osu = ROOT / "tests" / "fixtures" / "imports" / "osu_allreduce.txt"
    argv = [sys.executable, "-m", "runners.cli", "import", str(osu), "--ranks", "2"]
    argv += ["--library", "mpich"]
    env = {**os.environ, "TMPDIR": str(scratch), "COLLSWEEP_FAULT": "hold:import-staged"}
    env["COLLSWEEP_FAULT_RELEASE"] = str(release)
    errors = tmp_path / "stderr"
    with errors.open("w") as sink:
        cli = subprocess.Popen([*argv, "--store", str(db)], cwd=ROOT, env=env, stderr=sink)
    try:
        held = Path(f"{release}.held")
        assert wait_until(lambda: held.exists() or cli.poll() is not None, 120)
        assert held.exists(), errors.read_text()
        assert list(scratch.glob("collsweep-import-*")), "the staging folder exists meanwhile"
        cli.send_signal(sig)
        status = cli.wait(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
    if sig != signal.SIGKILL:
        assert status == 128 + sig
        said = errors.read_text().strip().splitlines()
        assert said == [f"collsweep import: stopped by {sig.name}: nothing imported"]
    cleared = wait_until(lambda: not list(scratch.glob("collsweep-import-*")), 30)
    reliability.stop(f"import stopped by {sig.name}", len(list(scratch.glob("collsweep-import-*"))))
    assert cleared
    if db.exists():
        import duckdb

        with duckdb.connect(str(db), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
