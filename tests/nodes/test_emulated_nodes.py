"""Sweeps on emulated nodes (`--ranks-per-node`, `--network`): the ranks split into nodes that
share no memory, as MPICH itself sees them, talking over a private network namespace's shaped
loopback; the calibration of both levels; nothing left behind by a SIGKILL; refused in one line
where the machine cannot make the namespace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HeldPoint, run_cli, wait_until
from helpers.simgrid_here import needs_simgrid
from helpers.sweep_runs import rank_processes, start, write_spec

from runners import store

pytestmark = pytest.mark.mpi

RATE_BPS = 4e9  # the shaped network: slow enough that its bound dwarfs shared memory's times
NETWORK = "bandwidth=4Gbit"
LARGE = 512 * 2**10
NODES_2X1 = ["--ranks", "2", "--ranks-per-node", "1", "--network", NETWORK]
QUICK = ["--budget-s", "0.05", "--min-iterations", "3", "--max-iterations", "20"]


def sweep(db: Path, *extra: str) -> subprocess.CompletedProcess:
    """A short sweep into `db` (a real one: ranks, namespace, calibration, analysis)."""
    return run_cli("sweep", "--store", str(db), "--algorithms", "ring,mpi", *QUICK, *extra)


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One sweep of 2 emulated nodes x 1 rank on a 4 Gbit/s network, 8 B and 512 KiB, two
    launches (its calibration of both levels measured first)."""
    db = tmp_path_factory.mktemp("nodes") / "s.duckdb"
    done = sweep(db, "--sizes", f"8,{LARGE}", *NODES_2X1, "--launches", "2")
    assert done.returncode == 0, done.stderr
    return db


def test_each_rank_sits_on_a_node_of_its_own_as_mpich_sees_it(two_nodes: Path) -> None:
    """MPI_Comm_split_type(SHARED) inside the launch: two nodes of one rank each."""
    probes = store.query(two_nodes, "SELECT nodes, ranks_per_node, node_map FROM probes")
    assert len(probes) == 4  # start and end of two launches
    assert set(probes["node_map"]) == {"0,1"}
    assert set(probes["nodes"]) == {2} and set(probes["ranks_per_node"]) == {1}
    points = store.query(two_nodes, "SELECT DISTINCT ranks_per_node FROM points")
    assert points["ranks_per_node"].tolist() == [1]
    checks = store.query(two_nodes, "SELECT name, state FROM assumptions WHERE point_id IS NULL")
    states = dict(zip(checks["name"], checks["state"], strict=True))
    assert states["emulated_nodes"] == "holds" and states["shared_network"] == "violated"
    assert states["single_node"] == "violated"  # two nodes: the one-node model is off


def test_the_traffic_between_the_nodes_crosses_the_shaped_loopback(two_nodes: Path) -> None:
    """The namespace's loopback carried at least every byte of the 512 KiB calls, and a call
    took at least what the shaper lets through: the ring at p=2 puts 2 x 512 KiB on the
    shared link per call, 2.1 ms at 4 Gbit/s (shared memory: about 0.2 ms)."""
    moved = store.query(
        two_nodes,
        "SELECT launch, max(network_bytes) - min(network_bytes) AS bytes FROM probes "
        "GROUP BY launch",
    )
    calls = store.query(
        two_nodes,
        f"SELECT min(iterations) AS n, min(median_s) AS fastest FROM points WHERE bytes = {LARGE}",
    )
    assert (moved["bytes"] >= 2 * LARGE * int(calls["n"][0])).all(), moved
    assert calls["fastest"][0] >= 0.9 * 2 * LARGE * 8 / RATE_BPS


def test_the_calibration_has_both_levels_and_the_network_is_the_stated_one(
    two_nodes: Path,
) -> None:
    run = store.query(two_nodes, "SELECT calibration_id, spec_toml FROM runs")
    assert f'network = "{NETWORK}"' in run["spec_toml"][0]
    cal = store.get_calibration(two_nodes, run["calibration_id"][0])
    assert cal is not None and cal["source"] == f"pingpong-network:{NETWORK}"
    levels = cal["details"]["levels"]
    node = store.get_calibration(two_nodes, levels["node"]["calibration_id"])
    assert node is not None and node["source"] == "pingpong"
    network_beta = levels["network"]["beta_s_per_byte"]
    assert 0.5 * 8 / RATE_BPS < network_beta < 1.5 * 8 / RATE_BPS  # the shaper's rate
    assert network_beta > 10 * levels["node"]["beta_s_per_byte"]  # shared memory is not it


def _two_level_predictions(db: Path) -> dict[tuple[int, str], tuple[str, float]]:
    """(variant, predicted_s) of each point's prediction with its run's calibration of both
    levels, by (bytes, algorithm)."""
    rows = store.query(
        db,
        "SELECT p.bytes, p.algorithm, pr.variant, pr.predicted_s FROM predictions pr "
        "JOIN points p USING (point_id) JOIN runs r ON r.run_id = p.run_id "
        "WHERE pr.calibration_id = r.calibration_id",
    )
    return {(int(r.bytes), r.algorithm): (r.variant, r.predicted_s) for r in rows.itertuples()}


def test_the_runs_own_predictions_put_every_message_between_nodes_on_one_bus(
    two_nodes: Path,
) -> None:
    """The ring at p=2 on 2 x 1: both ranks send n/2 across in each of its two rounds, so the
    shared network carries 2n a call, which the two_level variant charges (each message alone
    would be n); so does the autotuned mpi, priced as the fastest of MPICH's algorithms, each
    on both levels."""
    predicted = _two_level_predictions(two_nodes)
    run = store.query(two_nodes, "SELECT calibration_id FROM runs")
    levels = store.get_calibration(two_nodes, run["calibration_id"][0])["details"]["levels"]
    variant, seconds = predicted[LARGE, "ring"]
    assert variant == "two_level"
    assert seconds >= 2 * LARGE * levels["network"]["beta_s_per_byte"]
    variant, fastest = predicted[LARGE, "mpi"]
    assert variant == "two_level" and fastest >= 2 * LARGE * levels["network"]["beta_s_per_byte"]


@pytest.mark.parametrize(("placement", "node_map"), [("block", "0,0,1,1"),
                                                     ("round-robin", "0,1,0,1")])  # fmt: skip
def test_a_placement_puts_each_rank_on_the_node_it_names(
    two_nodes: Path, tmp_path: Path, placement: str, node_map: str
) -> None:
    """4 ranks on 2 nodes of 2 (oversubscribed here: only where the ranks sit is checked)."""
    db = tmp_path / "s.duckdb"
    shutil.copyfile(two_nodes, db)  # both calibrations are reused
    done = sweep(db, "--sizes", "8", "--ranks", "4", "--ranks-per-node", "2", "--network",
                 NETWORK, "--placement", placement, "--launches", "1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    probes = store.query(db, "SELECT node_map FROM probes WHERE ranks = 4")
    assert set(probes["node_map"]) == {node_map}
    assert _two_level_predictions(db)[8, "ring"][0] == "two_level"  # priced on these nodes


def _network_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def _in_namespace(namespace: str) -> list[int]:
    """Every process whose network namespace is `namespace`."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _network_namespace(int(entry.name)) == namespace
    ]


def _sweep_ranks(parent: int) -> list[int]:
    """The sweep's rank programs (Python, not their launcher) once they run."""
    words = b"runners.ranks\0sweep"
    found = [(pid, _command_line(pid)) for pid in rank_processes(parent)]
    return [pid for pid, line in found if words in line and b"python" in line.split(b"\0")[0]]


def _command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _loopback_qdisc() -> str:
    return subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip


@pytest.mark.parametrize("when", ["parked", "starting"])
def test_a_sigkilled_sweep_leaves_no_namespace_qdisc_or_process(
    two_nodes: Path, tmp_path: Path, reliability, when: str
) -> None:
    """The sweep SIGKILLed with its ranks parked mid-point in their own namespace, or as soon
    as they exist (still in MPI_Init, before their watch of the sweep runs: a CI run once left
    the launcher, its proxy and a rank behind there): every process of that namespace ends
    (so does the namespace, and its qdisc with it); this host's loopback never had one."""
    db = tmp_path / "s.duckdb"
    shutil.copyfile(two_nodes, db)  # both calibrations are reused: straight to the ranks
    ours, qdisc_before = _network_namespace(os.getpid()), _loopback_qdisc()
    held = HeldPoint(tmp_path, "ring")
    spec = write_spec(tmp_path, 'sizes = [8]\nranks = [2]\nalgorithms = ["ring"]\n'
                      f'ranks_per_node = 1\nnetwork = "{NETWORK}"\n')  # fmt: skip
    sweeping = start(db, spec, env=held.env, log=tmp_path / "sweep.err")
    try:
        started = wait_until(lambda: len(_sweep_ranks(sweeping.pid)) == 2, 120, every_s=0.01)
        if when == "parked":
            started = wait_until(held.held_file.exists, 120)
        assert started, (tmp_path / "sweep.err").read_text()
        ranks = rank_processes(sweeping.pid)
        namespaces = {_network_namespace(pid) for pid in ranks} - {None}
        assert len(namespaces) == 1 and ours not in namespaces  # a namespace of their own
        (namespace,) = namespaces
        assert namespace is not None and _in_namespace(namespace)
        sweeping.kill()
        sweeping.wait()
        wait_until(lambda: not _in_namespace(namespace), 60)
        left = _in_namespace(namespace)
    finally:
        held.release()
        if sweeping.poll() is None:
            sweeping.kill()
    qdisc_left = _loopback_qdisc() != qdisc_before
    reliability.stop(f"a sweep on emulated nodes SIGKILLed, ranks {when}", len(left) + qdisc_left)
    assert not left and not rank_processes(sweeping.pid)
    assert not qdisc_left and "tbf" not in qdisc_before


def test_without_the_privilege_to_make_a_namespace_it_is_one_line_before_any_rank(
    tmp_path: Path, reliability
) -> None:
    """CAP_SYS_ADMIN taken away (setpriv): exit 2, one line, no store written."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    db = tmp_path / "s.duckdb"
    done = subprocess.run(
        ["setpriv", "--bounding-set=-sys_admin", sys.executable, "-m", "runners.cli", "sweep",
         "--store", str(db),
         "--sizes", "8", *NODES_2X1],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    clean = done.returncode == 2 and done.stderr.count("\n") == 1 and not db.exists()
    reliability.bad_input("sweep on emulated nodes without CAP_SYS_ADMIN", clean)
    assert clean, done.stderr
    assert "cannot make a private network namespace" in done.stderr


def test_the_spec_stored_with_the_run_says_where_the_ranks_were(two_nodes: Path) -> None:
    environment = json.loads(
        store.query(two_nodes, "SELECT environment FROM runs")["environment"][0]
    )
    knobs = next(iter(environment["jobs"].values()))
    assert knobs["MPIR_CVAR_NUM_CLIQUES"] == "2" and knobs["FI_PROVIDER"] == "tcp"


@needs_simgrid
def test_the_emulated_nodes_are_a_platform_the_simulator_runs(
    two_nodes: Path, tmp_path: Path
) -> None:
    """`simulate --platform emulated-nodes`: a bus whose link is the calibration's network
    level (the same spec keys pick the same calibration), round-robin placement for one group
    size at a time."""
    db = tmp_path / "s.duckdb"
    shutil.copyfile(two_nodes, db)
    done = run_cli("simulate", "--store", str(db), "--sizes", "8,1M", *NODES_2X1,
                   "--algorithms", "ring", "--platform", "emulated-nodes")  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = store.query(db, "SELECT environment, calibration_id FROM runs")
    kinds = {"simulated" in json.loads(env): cal for env, cal in runs.itertuples(index=False)}
    environment = runs[runs["calibration_id"] == kinds[True]]["environment"].iloc[0]
    simulated = json.loads(environment)["simulated"]["platform"]
    measured = store.get_calibration(db, kinds[False])
    assert measured is not None and simulated["topology"] == "bus"
    network = measured["details"]["levels"]["network"]
    assert simulated["link"]["latency_s"] == pytest.approx(network["alpha_s"])
    assert 1 / simulated["link"]["bandwidth_Bps"] == pytest.approx(network["beta_s_per_byte"])
    refused = run_cli("simulate", "--store", str(db), "--sizes", "8", "--ranks", "2",
                      "--platform", "emulated-nodes")  # fmt: skip
    assert refused.returncode == 2 and "give --ranks-per-node" in refused.stderr
    round_robin = [
        "--ranks-per-node",
        "2",
        "--placement",
        "round-robin",
        "--network",
        NETWORK,
        "--platform",
        "emulated-nodes",
        "--algorithms",
        "ring",
        "--sizes",
        "8",
    ]
    both = run_cli("simulate", "--store", str(db), "--ranks", "2,4", *round_robin)
    assert both.returncode == 2 and "one group size at a time" in both.stderr
    placed = run_cli("simulate", "--store", str(db), "--ranks", "4", "--json", *round_robin)
    assert placed.returncode == 0, placed.stderr
    environments = store.query(db, "SELECT environment FROM runs")["environment"]
    maps = [
        json.loads(e).get("simulated", {}).get("platform", {}).get("node_map") for e in environments
    ]
    assert [0, 1, 0, 1] in maps  # round-robin, as the measured runs place it


def test_the_verdict_says_first_that_the_run_was_on_emulated_nodes(two_nodes: Path) -> None:
    (run_id,) = store.query(two_nodes, "SELECT run_id FROM runs")["run_id"]
    said = run_cli("crossovers", run_id, "--summary", "--store", str(two_nodes))
    assert said.returncode == 0, said.stderr
    first = said.stdout.splitlines()[0]
    assert first.startswith("emulated nodes of 1 rank (block) on this host"), said.stdout
    assert "4 Gbit/s shared by all traffic between nodes" in " ".join(said.stdout.split())


def test_two_placements_are_two_runs_compared_at_the_end(two_nodes: Path, tmp_path: Path) -> None:
    """A sweep of several ranks_per_node: a run each (one host, 2 emulated nodes x 1), each
    with its calibration (the fixture's, reused), analysis and verdict, then their winners side
    by side; every analysis row says how many ranks shared a node, as its points do. The
    node-aware allreduces sweep there beside a flat one: `hierarchical` takes its node size
    from the sweep, MPICH's composition runs in a launch of its own, recorded as forced by its
    environment, and its fallback where it cannot apply (one rank a node) is said, never
    timed."""
    db = tmp_path / "s.duckdb"
    shutil.copy(two_nodes, db)
    before = set(store.query(db, "SELECT run_id FROM runs").run_id)
    done = run_cli(
        "sweep", "--store", str(db), "--sizes", "8,4096", "--ranks", "2", "--ranks-per-node",
        "0,1", "--network", "bandwidth=4Gbit", "--algorithms",
        "hierarchical,recursive_doubling,mpi:composition_alpha",
        *QUICK, "--launches", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = store.query(db, "SELECT run_id, name, spec_toml FROM runs ORDER BY started_at")
    runs = runs[~runs.run_id.isin(before)].reset_index()
    assert "calibrated in" not in done.stderr  # both levels' calibrations reused
    assert len(runs) == 2 and list(runs.name) == ["ranks_per_node=0", "ranks_per_node=1"]
    assert "ranks_per_node = [0]" in runs.spec_toml[0] and 'network = ""' in runs.spec_toml[0]
    assert "ranks_per_node = [1]" in runs.spec_toml[1] and "4Gbit" in runs.spec_toml[1]
    first, second = runs.run_id
    assert f"p=2 float32 sum: one host ({first}) | 2 nodes x 1 ({second})" in done.stdout
    placed = store.query(
        db, "SELECT run_id, list(DISTINCT ranks_per_node) AS n FROM winners GROUP BY run_id"
    )
    found = dict(zip(placed.run_id, placed.n, strict=True))
    assert (found[first], found[second]) == ([2], [1])
    points = store.query(db, "SELECT * FROM points WHERE run_id = ?", [second])
    rows = {r.algorithm: r for r in points.itertuples()}
    assert set(rows) == {"hierarchical(node=1)", "recursive_doubling", "mpi:composition_alpha"}
    flat = [rows["hierarchical(node=1)"], rows["recursive_doubling"]]
    assert all(r.status == "ok" and r.verified for r in flat)
    alpha = rows["mpi:composition_alpha"]  # forced by its environment, a launch of its own
    assert "MPIR_CVAR_ALLREDUCE_COMPOSITION=1" in alpha.library_config
    # one rank a node leaves alpha no node to reduce in: MPICH falls back, said, never timed
    assert alpha.status == "skipped" and "could not apply composition_alpha" in alpha.reason
