"""Synthetic results stores: a fixture of the tests and of the dashboard-data benchmark.

The measurement side (runs, points, raw samples and a ping-pong calibration) is made up here
and written through runners.store's public write functions; the model side (predictions,
fitted calibration, crossovers, best choices, agreement, assumptions) is then computed by the
real analysis, runners.analysis.analyze_run, exactly as after a sweep. Timings come from the
alpha-beta-gamma models with a systematic, size-dependent error and log-normal noise; points
with more ranks than `physical_cores` are oversubscribed (slower and noisier).

The dashboard never imports this module (it lives under tests/): it only reads stores.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from runners import store
from runners.domain.collectives.datatypes import DTYPES, ops_of
from runners.domain.libraries import mpich_tuning
from runners.domain.libraries.catalog import collective_of, library_of
from runners.domain.libraries.tuning import Band
from runners.domain.model.closed_form import model_for, predict
from runners.domain.model.fitting import fit_linear, fit_piecewise
from runners.domain.status import PointStatus
from runners.domain.sweep.point_row import Measurement, PointRow
from runners.domain.sweep.records import PointKey
from runners.domain.sweep.repetition import Repetition, point_summary
from runners.domain.sweep.spec_keys import toml_value
from runners.host.tuning_files import file_record

ALGORITHMS = (
    "recursive_doubling",
    "binomial_tree",
    "rabenseifner",
    "ring",
    "mpi",
    "mpi:recursive_doubling",
    "mpi:ring",
)
SIZES = (8, 64, 512, 4096, 32768, 262144, 2097152)
ALPHA_S = 2.0e-6
BETA_S_PER_BYTE = 4.0e-10
GAMMA_S_PER_BYTE = 2.5e-10
PROTOCOL_SWITCH = 65536  # the ping-pong's eager -> rendezvous switch, bytes
PINGPONG_SIZES = tuple(2**k for k in range(3, 23))


@dataclass(frozen=True)
class RunSpec:
    """One synthetic run: its grid, samples per point and any per-algorithm slow-down."""

    run_id: str = "r20261201-120000-aaaa"
    started_at: datetime = datetime(2026, 12, 1, 12, 0, 0)
    host: str = "synth-node"
    mpi_version: str = "MPICH 5.0.2"
    ranks: tuple[int, ...] = (2, 3, 4, 8)
    sizes: tuple[int, ...] = SIZES
    dtypes: tuple[str, ...] = ("float32",)
    ops: tuple[str, ...] = ("sum",)
    algorithms: tuple[str, ...] = ALGORITHMS
    samples: int = 30
    passes: int = 2
    launches: int = 3
    physical_cores: int = 2
    slowdown: dict[str, float] = field(default_factory=dict)
    seed: int = 0
    timeout_point: bool = True  # one point of the largest grid cell ends in a timeout
    tuning_file: str = ""  # the run's tuning file (a real file: its record is read from it)
    ranks_per_node: int = 0  # > 0: the run's spec says emulated nodes of that many ranks
    # (algorithm, bytes) -> seconds: every sample of that cell exactly this time, no noise
    exact_times: dict[tuple[str, int], float] = field(default_factory=dict)
    # an adaptive run's chosen points (runners.domain.sweep.adaptive_spec): only these are
    # stored, the spec says adaptive, runs.adaptive how its rounds ended
    adaptive_points: tuple[tuple[str, int, int, str, str, int, str], ...] = ()


def demo_specs() -> list[RunSpec]:
    """Two runs a day apart on one host; in the second, ring is 30% slower on a newer MPICH."""
    return [
        RunSpec(),
        RunSpec(
            run_id="r20261202-120000-bbbb",
            started_at=datetime(2026, 12, 2, 12, 0, 0),
            mpi_version="MPICH 5.0.3",
            slowdown={"ring": 1.3},
            seed=1,
        ),
    ]


def placed_spec() -> RunSpec:
    """Run A's grid at p=2 on 2 emulated nodes of 1 rank, three days later, its default 2x
    slower (so its decided winners differ from the host's)."""
    return RunSpec(
        run_id="r20261204-120000-cccc",
        started_at=datetime(2026, 12, 4, 12, 0, 0),
        ranks=(2,),
        ranks_per_node=1,
        slowdown={"mpi": 2.0},
    )


def with_placed_run(demo_store: Path, folder: Path) -> Path:
    """A copy of the demo store in `folder` with placed_spec's run added."""
    db = Path(folder) / "placed.duckdb"
    shutil.copy(demo_store, db)
    build_store(db, [placed_spec()])
    return db


def adaptive_spec() -> RunSpec:
    """An adaptive run at p=2 a day after run B: every algorithm at 8 B (round 0), three at
    the largest size (round 0) and two at 4 KiB (round 1, where the winner changes); the other
    sizes are left to the analysis to infer."""
    every = [
        (a, 2, 8, "float32", "sum", 0, "the smallest size: every algorithm") for a in ALGORITHMS
    ]
    largest = [
        (a, 2, SIZES[-1], "float32", "sum", 0, "the largest size")
        for a in ("rabenseifner", "ring", "mpi")
    ]
    middle = [
        (a, 2, 4096, "float32", "sum", 1, "between 8 B and 2 MiB: where the best choice changes")
        for a in ("mpi", "mpi:recursive_doubling")
    ]
    return RunSpec(
        run_id="r20261203-120000-dddd",
        started_at=datetime(2026, 12, 3, 12, 0, 0),
        ranks=(2,),
        adaptive_points=(*every, *largest, *middle),
        seed=3,
    )


def with_adaptive_run(demo_store: Path, folder: Path) -> Path:
    """A copy of the demo store in `folder` with adaptive_spec's run added and analysed."""
    db = Path(folder) / "adaptive.duckdb"
    shutil.copy(demo_store, db)
    build_store(db, [adaptive_spec()])
    return db


def decade_spec() -> RunSpec:
    """A run whose sizes and times sit on decade boundaries (1000 B, 10000 B, 100 KiB; 10 us,
    100 us, 1 ms, 10 ms, 1 s): where a formatter that strips a whole number's zeros prints 1 us
    for 100 us. The library's forced ring wins at 1000 B, recursive doubling above."""
    times = {
        ("ring", 1000): 100e-6,
        ("ring", 10000): 1e-3,
        ("ring", 102400): 100e-3,
        ("recursive_doubling", 1000): 1e-3,
        ("recursive_doubling", 10000): 100e-6,
        ("recursive_doubling", 102400): 10e-3,
        ("mpi", 1000): 1000e-6,
        ("mpi", 10000): 10e-3,
        ("mpi", 102400): 100e-3,
        ("mpi:ring", 1000): 10e-6,
        ("mpi:ring", 10000): 1e-3,
        ("mpi:ring", 102400): 1.0,
    }
    return RunSpec(
        run_id="r20261203-100000-dddd",
        ranks=(2,),
        sizes=(1000, 10000, 102400),
        algorithms=("recursive_doubling", "ring", "mpi", "mpi:ring"),
        exact_times=times,
        timeout_point=False,
    )


def calibration_id(host: str) -> str:
    """The id of the synthetic ping-pong calibration of ``host``."""
    return f"k-pingpong-{host}"


def build_store(path: Path | str, specs: Sequence[RunSpec] | None = None) -> list[str]:
    """Write a ping-pong calibration and, per spec, a complete, analysed run; return run ids.

    Without ``specs``, the two runs of demo_specs().
    """
    specs = demo_specs() if specs is None else specs
    for host in dict.fromkeys(spec.host for spec in specs):
        store.add_calibration(path, pingpong_calibration(host))
    for spec in specs:
        write_run(path, spec)
        analyze(path, spec.run_id)
    return [spec.run_id for spec in specs]


def demo_store(folder: Path) -> Path:
    """The demo store (build_store() with demo_specs()) in ``folder``, built on first use.

    Built under a temporary name and renamed into place, so callers that share the folder
    (test modules of one session) never see a half-written store. Treat it as read-only.
    """
    path = Path(folder) / "collsweep-demo.duckdb"
    if not path.exists():
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.unlink(missing_ok=True)
        build_store(partial)
        os.replace(partial, path)
    return path


def write_run(path: Path | str, spec: RunSpec, batch_samples: int = 200_000) -> None:
    """Create the run, store its points and samples in batches, and finish it."""
    store.create_run(path, run_row(spec))
    for points, samples in _batches(spec, batch_samples):
        store.add_points(path, points, samples)
    store.write_batch(path, [], [], {}, probes=probes(spec))
    store.finish_run(path, spec.run_id, "complete")
    store.update_run(path, spec.run_id, {"finished_at": spec.started_at + timedelta(minutes=3)})


def probes(spec: RunSpec) -> list[dict[str, Any]]:
    """The machine-state probe at the start and end of every launch of every job, steady."""
    rng = np.random.default_rng(spec.seed + 100)
    rows = []
    for ranks, launch, moment in itertools.product(
        spec.ranks, range(spec.launches), ("start", "end")
    ):
        minute = spec.started_at + timedelta(seconds=20 * launch + 10 * (moment == "end") + ranks)
        rows.append(
            {
                "run_id": spec.run_id,
                "job": f"ranks={ranks} config=default",
                "ranks": ranks,
                "launch": launch,
                "moment": moment,
                "pingpong_s": 2.1e-6 * (1 + 0.05 * rng.random()),
                "copy_gbps": 10.0 * (1 + 0.05 * rng.random()),
                "measured_at": minute,
            }
        )
    return rows


def analyze(path: Path | str, run_id: str) -> None:
    """Fill the run's model-side tables with the real analysis (no MPI: the run's calibration
    is stored, so nothing is measured)."""
    from runners.analysis.run_analysis import analyze_run

    analyze_run(Path(path), run_id, progress=lambda _line: None)


def spec_toml(spec: RunSpec) -> str:
    """The sweep specification a real run of this grid would record."""
    return "\n".join(
        [
            f"sizes = {list(spec.sizes)}",
            f"ranks = {list(spec.ranks)}",
            f"dtypes = {list(spec.dtypes)}".replace("'", '"'),
            f"ops = {list(spec.ops)}".replace("'", '"'),
            f"algorithms = {list(spec.algorithms)}".replace("'", '"'),
            f"collectives = {_collectives(spec)}".replace("'", '"'),
            f"passes = {spec.passes}",
            f"launches = {spec.launches}",
            'launcher = "mpiexec -n {ranks}"',
            *([f'tuning_file = "{spec.tuning_file}"'] if spec.tuning_file else []),
            *(
                [f"ranks_per_node = {spec.ranks_per_node}", 'network = "bandwidth=1Gbit"']
                if spec.ranks_per_node
                else []
            ),
            *(_adaptive_keys(spec) if spec.adaptive_points else []),
            "",
        ]
    )


def _adaptive_keys(spec: RunSpec) -> list[str]:
    """An adaptive run's spec keys, as a sweep's TOML writes them."""
    return ["adaptive = true", f"adaptive_points = {toml_value(list(spec.adaptive_points))}"]


def _collectives(spec: RunSpec) -> list[str]:
    return list(dict.fromkeys(collective_of(a) for a in spec.algorithms))


def run_row(spec: RunSpec) -> dict[str, Any]:
    """The runs row: provenance as a real sweep records it."""
    return {
        "run_id": spec.run_id,
        "started_at": spec.started_at,
        "spec_toml": spec_toml(spec),
        "command_line": "collsweep sweep data/quick.toml",
        "host": spec.host,
        "cpu_model": "Synthetic CPU",
        "physical_cores": spec.physical_cores,
        "mpi_library": f"{spec.mpi_version} (synthetic)",
        "mpi_version": spec.mpi_version,
        "libraries": {
            library: {
                "mpi_library": f"{spec.mpi_version} (synthetic)",
                "mpi_version": spec.mpi_version,
            }
            for library in dict.fromkeys(library_of(a) for a in spec.algorithms)
        },
        "mpi4py_version": "4.1.2",
        "numpy_version": np.__version__,
        "python_version": "3.11",
        "code_version": "collsweep 0.1.0 synthetic",
        "environment": {
            "MPI4PY_RC_THREAD_LEVEL": "single",
            **({"tuning_file": file_record(spec.tuning_file)} if spec.tuning_file else {}),
        },
        "thread_level": "single",
        "memory_setting": "THP madvise",
        "calibration_id": calibration_id(spec.host),
        **({"adaptive": _rounds(spec)} if spec.adaptive_points else {}),
    }


def _rounds(spec: RunSpec) -> dict[str, Any]:
    """runs.adaptive of a synthetic adaptive run: its rounds stopped by their budget."""
    return {
        "rounds": 1 + max(p[5] for p in spec.adaptive_points), "stop": "budget spent",
        "spent_s": 4.2, "estimated_s": 4.0, "launches": 6, "budget": "40%",
        "budget_words": "40% of the full grid's 10 s: 4 s", "full_grid_s": 10.0,
        "measured": len(spec.adaptive_points),
        "grid_points": len(spec.sizes) * len(spec.algorithms) * len(spec.ranks),
    }  # fmt: skip


def point_id(spec: RunSpec, algorithm: str, ranks: int, nbytes: int, dtype: str, op: str) -> str:
    """The deterministic point id, as the sweep builds it
    (runners.domain.sweep.records.PointKey)."""
    return PointKey(spec.run_id, algorithm, ranks, nbytes, dtype, op).point_id()


def _cells(spec: RunSpec) -> Iterator[tuple[str, int, int, str, str]]:
    """Every (algorithm, ranks, bytes, dtype, op) of the run's grid (op `none` for an
    algorithm of a collective that reduces nothing); an adaptive run's chosen points alone."""
    chosen = {p[:5] for p in spec.adaptive_points}
    for algorithm in spec.algorithms:
        ops = ops_of(collective_of(algorithm), spec.ops)
        for cell in itertools.product(spec.ranks, spec.sizes, spec.dtypes, ops):
            if not chosen or (algorithm, *cell) in chosen:
                yield (algorithm, *cell)


def true_time(algorithm: str, ranks: int, nbytes: int, dtype: str) -> float:
    """The noiseless time of one cell: the model with a smooth, size-dependent error."""
    itemsize = DTYPES[dtype].itemsize
    model = model_for(algorithm)
    if model is None:  # the library's autotuned choice: MPICH-like size thresholds
        chosen = "recursive_doubling" if nbytes < 65536 else "rabenseifner"
        return 0.95 * true_time(chosen, ranks, nbytes, dtype)
    base = predict(model, ranks, nbytes, ALPHA_S, BETA_S_PER_BYTE, GAMMA_S_PER_BYTE, itemsize)
    error = 1.0 + 0.25 * math.sin(math.log(nbytes) / 2.0 + len(algorithm))
    forced = 1.04 if algorithm.startswith("mpi:") else 1.0
    return (base.total_s + 1.0e-6) * error * forced


def _samples_of(spec: RunSpec, cell: tuple[str, int, int, str, str], rng: Any) -> np.ndarray:
    """The cell's per-iteration times: log-normal noise, worse when oversubscribed."""
    algorithm, ranks, nbytes, dtype, _ = cell
    if (algorithm, nbytes) in spec.exact_times:
        return np.full(spec.samples, spec.exact_times[algorithm, nbytes])
    over = ranks > spec.physical_cores
    center = true_time(algorithm, ranks, nbytes, dtype) * spec.slowdown.get(algorithm, 1.0)
    center *= 1.6 if over else 1.0
    return center * rng.lognormal(0.0, 0.25 if over else 0.08, spec.samples)


def _origins(spec: RunSpec, count: int) -> tuple[list[int], list[int]]:
    """Each sample's (pass, launch): launches in turn, passes within them."""
    launches = [i % spec.launches for i in range(count)]
    passes = [(i // spec.launches) % spec.passes for i in range(count)]
    return passes, launches


def _summary(spec: RunSpec, seconds: np.ndarray, nbytes: int, ranks: int) -> dict[str, Any]:
    """The timing columns of an ok point, from its samples, as a sweep computes them."""
    rep = Repetition.of(list(seconds), *_origins(spec, seconds.size))
    return point_summary(rep, nbytes, ranks, target_rel_ci=0.05)


def _point(spec: RunSpec, cell: tuple[str, int, int, str, str], seconds: np.ndarray | None):
    """A points row, built as a sweep builds it (runners.domain.sweep.point_row); ``seconds`` None
    makes it a timed-out point without timings."""
    key = PointKey(spec.run_id, *cell)
    measured = Measurement(
        warmup=3,
        sync_cadence="MPI_Barrier before every iteration; iteration time = max over ranks",
        cache_mode="hot",
        verified=seconds is not None,
        started_at=spec.started_at,
        finished_at=spec.started_at + timedelta(seconds=1),
    )
    cores = spec.physical_cores
    if seconds is None:
        why = "watchdog: no progress for 60 s"
        return PointRow(key, PointStatus.TIMEOUT, why, cores, measured=measured, launches=0)
    stats = _summary(spec, seconds, key.nbytes, key.ranks)
    return PointRow(key, PointStatus.OK, "", cores, measured=measured, statistics=stats)


def _is_timeout_cell(spec: RunSpec, cell: tuple[str, int, int, str, str]) -> bool:
    """The one cell that times out, when the spec asks for one."""
    algorithm, ranks, nbytes, _, _ = cell
    return spec.timeout_point and (algorithm, ranks, nbytes) == (
        "binomial_tree",
        max(spec.ranks),
        max(spec.sizes),
    )


def _batches(spec: RunSpec, batch_samples: int) -> Iterator[tuple[list[dict], list[dict]]]:
    """Points and their samples, in batches of about ``batch_samples`` samples."""
    rng = np.random.default_rng(spec.seed)
    points: list[dict] = []
    samples: list[dict] = []
    for cell in _cells(spec):
        seconds = None if _is_timeout_cell(spec, cell) else _samples_of(spec, cell, rng)
        points.append(_point(spec, cell, seconds).columns())
        if seconds is not None:
            pid = points[-1]["point_id"]
            passes, launches = _origins(spec, seconds.size)
            samples.extend(
                {"point_id": pid, "iteration": i, "seconds": float(s), "pass": p, "launch": la}
                for i, (s, p, la) in enumerate(zip(seconds, passes, launches, strict=True))
            )
        if len(samples) >= batch_samples:
            yield points, samples
            points, samples = [], []
    if points:
        yield points, samples


def pingpong_calibration(host: str) -> dict[str, Any]:
    """A ping-pong calibration with a protocol switch, fitted by runners.domain.model.fitting."""
    sizes = list(PINGPONG_SIZES)
    rng = np.random.default_rng(7)
    times = [
        (ALPHA_S + n * BETA_S_PER_BYTE) * (1.0 if n < PROTOCOL_SWITCH else 1.3)
        + (0.0 if n < PROTOCOL_SWITCH else 3 * ALPHA_S)
        for n in sizes
    ]
    times = [t * float(rng.lognormal(0.0, 0.03)) for t in times]
    whole, piecewise = fit_linear(sizes, times), fit_piecewise(sizes, times)
    return {
        "calibration_id": calibration_id(host),
        "created_at": datetime(2026, 12, 1, 11, 0, 0),
        "host": host,
        "mpi_library": "MPICH Version: 5.0.2",
        "ranks": 2,
        "alpha_s": whole.alpha,
        "beta_s_per_byte": whole.beta,
        "r_squared": whole.r_squared,
        "min_bytes": min(sizes),
        "max_bytes": max(sizes),
        "breakpoints": piecewise.breakpoints,
        "segments": [
            {
                "min_bytes": s.min_bytes,
                "max_bytes": s.max_bytes,
                "alpha_s": s.alpha,
                "beta_s_per_byte": s.beta,
                "r_squared": s.r_squared,
            }
            for s in piecewise.segments
        ],
        "gammas": {"float32/sum": GAMMA_S_PER_BYTE, "float64/sum": GAMMA_S_PER_BYTE * 0.6},
        "source": "pingpong",
        "details": {
            "pingpong": {"bytes": sizes, "one_way_median_s": times},
            "piecewise_r_squared": piecewise.r_squared,
        },
    }


def write_tuning_file(
    folder: Path, per_ranks: dict[int, list[Band]], collective: str = "allreduce"
) -> Path:
    """A tuning file and its shared-memory table, as collsweep tune writes them (one
    collective's subtree tuned)."""
    path = Path(folder) / "tuned.json"
    mpir, posix = mpich_tuning.mpich_tables({0: {collective: per_ranks}})
    path.write_text(json.dumps(mpir))
    mpich_tuning.posix_path(path).write_text(json.dumps(posix))
    return path


def add_simulated_run(
    path: Path,
    ranks: Sequence[int] = (8, 64, 256),
    sizes: Sequence[int] = SIZES,
    algorithms: Sequence[str] = ("recursive_doubling", "rabenseifner", "ring"),
) -> str:
    """A simulated run stored and analysed as `collsweep simulate` stores one, its times the
    model's on the crossbar (each schedule's critical path at alpha, beta, gamma: what
    SimGrid gives within 1% there, tests/simulator/test_crossbar.py), so that no test of the
    store's readers needs SimGrid; its id."""
    from runners.analysis.run_analysis import analyze_run
    from runners.domain.model.platform import crossbar
    from runners.domain.sweep.simulated_run import DEFAULT_MARGIN, SimulationFacts
    from runners.domain.sweep.simulation import simulation_calls
    from runners.domain.sweep.spec import SweepSpec
    from runners.jobs.simulated_run import schedule_version, store_simulated_run

    spec = SweepSpec(sizes=tuple(sizes), ranks=tuple(ranks), algorithms=tuple(algorithms))
    platform = crossbar()
    calls, _ = simulation_calls(spec)
    facts = SimulationFacts(
        "SimGrid 3.32.0", "auto", DEFAULT_MARGIN, platform, schedule_version(calls)
    )
    simulated = [(call, call.closed_form_s(platform)) for call in calls]
    run_id = store_simulated_run(path, spec, facts, simulated, "synthetic", datetime.now())
    analyze_run(path, run_id, lambda _line: None)
    return run_id
