"""`collsweep simulate` as a user runs it: JSON per point, platforms by name or file, bad input
in one line with exit 2 before anything is simulated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from helpers.simgrid_here import needs_simgrid

from runners.domain.model.platform import PlatformError
from runners.domain.model.platform_file import load_platform, parse_platform

PLATFORMS = Path(__file__).resolve().parents[2] / "data" / "platforms"
KEYS = {"collective", "algorithm", "ranks", "bytes", "dtype", "op", "simulated_s", "predicted_s"}


@needs_simgrid
@pytest.mark.slow
def test_json_is_one_object_per_point_with_the_issues_keys() -> None:
    done = run_cli(
        "simulate",
        "--sizes",
        "8,1M",
        "--ranks",
        "6,8",
        "--algorithms",
        "ring,mpi:ring,mpi",
        "--json",
        "--no-store",
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 12
    assert all(set(row) >= KEYS for row in rows)
    forced = [r for r in rows if r["algorithm"] == "mpi:ring"]
    assert {r["modelled_by"] for r in forced} == {"ring"}
    # MPICH's own choice: what its shipped selection table names for each call
    chosen = {(r["ranks"], r["bytes"]): r["chosen"] for r in rows if r["algorithm"] == "mpi"}
    assert chosen == {
        (6, 8): "mpi:recursive_doubling",  # avg_msg_size <= 8
        (8, 8): "mpi:recursive_doubling",
        (6, 2**20): "mpi:reduce_scatter_allgather",  # count >= pof2, a built-in op
        (8, 2**20): "mpi:reduce_scatter_allgather",
    }
    for row in rows:
        assert row["simulated_s"] == pytest.approx(row["predicted_s"], rel=0.01)


@needs_simgrid
@pytest.mark.slow
def test_a_built_in_platform_by_name_says_what_it_is() -> None:
    done = run_cli(
        "simulate",
        "--platform",
        "fat-tree-edr-2to1",
        "--sizes",
        "1M",
        "--ranks",
        "32",
        "--algorithms",
        "recursive_doubling",
        "--no-store",
    )
    assert done.returncode == 0, done.stderr
    assert "fat-tree-edr-2to1: fat_tree" in done.stdout
    assert "(simulated, not measured)" in done.stdout


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("topology = 'crossbar'", "[link]: give latency_us and bandwidth_GBps"),
        ("[link]\nlatency_us = 1\nbandwidth_GBps = 0", "bandwidth 0.0 B/s"),
        ("colour = 'red'", "unknown key 'colour'"),
        ("topology = 'mesh'\n[link]\nlatency_us = 1\nbandwidth_GBps = 1", "topology 'mesh'"),
        ("topology = 'fat_tree'\n[link]\nlatency_us = 1\nbandwidth_GBps = 1", "[fat_tree]"),
        ("not toml at all [", "not TOML"),
        ("[torus]\ndimensions = [2]\n[link]\nlatency_us = 1\nbandwidth_GBps = 1", "topology is"),
        ("[link]\nlatency_us = 1e400\nbandwidth_GBps = 1", "latency"),
    ],
)
def test_a_platform_that_is_no_machine_is_refused(text: str, said: str) -> None:
    with pytest.raises(PlatformError) as refused:
        parse_platform(text, "mine")
    assert said in str(refused.value)
    assert "\n" not in str(refused.value)


def test_every_shipped_platform_loads_and_names_its_source() -> None:
    shipped = sorted(PLATFORMS.glob("*.toml"))
    assert len(shipped) >= 3
    for path in shipped:
        platform = load_platform(path)
        assert platform.name == path.stem and len(platform.source) > 40


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--platform", "nowhere"], "unknown platform 'nowhere'"),
        (["--platform", "torus-3d", "--ranks", "600"], "holds 512 ranks"),
        (["--algorithms", "openmpi"], "nothing to simulate: openmpi is the library's own"),
        (["--beta", "0"], "beta = 0.0: give a number above 0"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(extra: list[str], said: str, tmp_path: Path) -> None:
    words = ["simulate", "--sizes", "8", "--ranks", "8", "--algorithms", "ring", *extra]
    done = run_cli(*words)
    assert done.returncode == 2
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""


def test_a_platform_file_path_is_read(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(
        "topology = 'torus'\n[link]\nlatency_us = 1\nbandwidth_GBps = 1\n"
        "[torus]\ndimensions = [2]\n"
    )
    done = run_cli("simulate", "--platform", str(mine), "--sizes", "8", "--ranks", "8")
    assert done.returncode == 2 and "platform mine holds 2 ranks" in done.stderr
