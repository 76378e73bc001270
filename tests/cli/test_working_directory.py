"""No child process of ours imports from the user's working directory (issue 50 item 2): a
booby-trapped module beside the user's files never runs, whatever command starts Python."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

COLLSWEEP = Path(sys.executable).with_name("collsweep")  # the console script people run
TRAPPED = ("json", "pickle", "runners")  # every child imports these first


def booby_trap(folder: Path) -> Path:
    """Modules in ``folder`` that shadow the standard library and collsweep itself; each leaves
    a mark in the returned file if it is ever imported."""
    mark = folder / "TRAP-RAN"
    for name in TRAPPED:
        (folder / f"{name}.py").write_text(
            f"open({str(mark)!r}, 'a').write({name!r} + '\\n')\nraise SystemExit(99)\n"
        )
    return mark


def run_in(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(COLLSWEEP), *argv], cwd=folder, capture_output=True, text=True, timeout=300
    )


def test_the_trap_is_armed(tmp_path: Path) -> None:
    """The check can fail: Python started in the folder without -P does run it."""
    mark = booby_trap(tmp_path)
    subprocess.run([sys.executable, "-c", "import json"], cwd=tmp_path, check=False)
    assert mark.read_text() == "json\n"


def test_query_and_report_children_never_import_from_the_working_directory(
    demo_store: Path, tmp_path: Path
) -> None:
    mark = booby_trap(tmp_path)
    store = ["--store", str(demo_store)]
    done = run_in(tmp_path, "query", "SELECT count(*) AS n FROM runs", *store)
    assert done.returncode == 0, done.stderr
    done = run_in(tmp_path, "report", "r20261202-120000-bbbb", "--out", "r.html", *store)
    assert done.returncode == 0, done.stderr
    assert not mark.exists()


@pytest.mark.mpi
def test_ranks_never_import_from_the_working_directory(tmp_path: Path) -> None:
    mark = booby_trap(tmp_path)
    done = run_in(tmp_path, "verify", "--ranks", "2", "--algorithms", "ring", "--counts", "3")
    assert done.returncode == 0, done.stderr
    assert not mark.exists()
