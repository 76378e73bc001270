"""Every file a user hands over is read bounded and only when it is a regular file
(runners.domain.inputs): a FIFO, /dev/zero or JSON nested ten thousand deep is refused in one
line, exit 2, nothing written, where it used to block, read forever or end in a
RecursionError. Each case runs in a process of its own with a time limit, so a regression
fails instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

DEEP = "[" * 10_000 + "]" * 10_000


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """A FIFO nobody writes, the endless device, and a deeply nested JSON file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    return {"fifo": fifo, "device": Path("/dev/zero"), "deep": deep}


COMMANDS = {
    "sweep spec": lambda f, db: ["sweep", str(f), "--store", str(db)],
    "--tuning-file": lambda f, db: ["sweep", "--sizes", "8", "--ranks", "2", "--algorithms",
                                    "mpi", "--tuning-file", str(f), "--store", str(db)],
    "workload show": lambda f, db: ["workload", "show", str(f)],
    "workload from-param": lambda f, db: ["workload", "from-param", str(f), "--out",
                                          str(db.with_suffix(".json"))],
    "import": lambda f, db: ["import", str(f), "--store", str(db)],
}  # fmt: skip


CASES = [
    (command, kind)
    for command in sorted(COMMANDS)
    for kind in ("fifo", "device", "deep")
    if kind != "deep" or command not in ("sweep spec", "import")  # JSON inputs only
]


@pytest.mark.parametrize(("command", "kind"), CASES)
def test_an_input_that_is_no_regular_bounded_file_is_refused(
    inputs: dict[str, Path], tmp_path: Path, command: str, kind: str, reliability
) -> None:
    db = tmp_path / "s.duckdb"
    argv = COMMANDS[command](inputs[kind], db)
    try:
        done = run_cli(*argv, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} blocked on a {kind}")
    said = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(said) == 1 and "Traceback" not in done.stderr, said
    assert str(inputs[kind]) in said[0]
    assert not db.exists() and not db.with_suffix(".json").exists()
    reliability.bad_input(f"{command} given a {kind}", True)
