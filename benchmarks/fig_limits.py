"""Figure 5: physical limits (copy and reduction throughput) and each algorithm's busbw."""

from __future__ import annotations

from benchmarks.common import KIB, MIB, Check, Figure, log, run_python_job, table, us
from benchmarks.mode import Mode
from benchmarks.worker_jobs import Timing, time_points
from runners.domain.libraries.catalog import BASE_ALGORITHMS
from runners.domain.status import PointStatus
from runners.domain.sweep.stats import bandwidths, summarize
from runners.domain.units import format_bytes

LIMIT_BYTES = 64 * MIB
BUSBW_BYTES = 16 * MIB
SMOKE_BYTES = (1 * MIB, 64 * KIB)  # (limits, busbw) in a smoke run
RANKS = 2


def gbps(nbytes: int, seconds: float) -> float:
    """Bytes per second in GB/s (10^9)."""
    return nbytes / seconds / 1e9


def measure_limits(nbytes: int, budget_s: float) -> list[dict]:
    """Copy and per-dtype reduction throughput with every rank working at once."""
    log("figure 5: copy and reduction throughput")
    args = [str(nbytes), str(budget_s)]
    rows = run_python_job(RANKS, "benchmarks.limits_worker", args)
    for row in rows:
        row["gbps"] = gbps(row["bytes"], row["median_s"])
    return rows


def with_busbw(point: dict) -> dict:
    """A sweep worker's `point` event (its raw samples) with the columns the store adds:
    the median over the samples and nccl-tests' algbw and busbw (algbw x 2(p-1)/p)."""
    if point["status"] != PointStatus.OK:
        return point
    median_s = summarize(point["samples"]).median_s
    algbw, busbw = bandwidths(point["nbytes"], point["ranks"], median_s)
    return point | {"median_s": median_s, "algbw_gbps": algbw, "busbw_gbps": busbw}


def rate(row: dict) -> str:
    """A row's GB/s, two decimals."""
    return f"{row['gbps']:.2f}"


def limits_table(rows: list[dict]) -> list[str]:
    """One line per limit: time per call and per-rank rate."""
    body = [
        [f"{r['kind']} {r['dtype']}", format_bytes(r["bytes"]), us(r["median_s"]), rate(r)]
        for r in rows
    ]
    return table(["limit", "buffer", "us per call", "GB/s per rank"], body)


def busbw_table(points: list[dict], copy_bw: float, reduce_bw: float) -> list[str]:
    """Each algorithm's busbw and its fractions of the copy and float32 reduction rates."""
    rows = []
    for p in points:
        if p["status"] != PointStatus.OK:
            rows.append([p["algorithm"], "", "", "", "", p["reason"][:40]])
            continue
        busbw = p["busbw_gbps"]
        fractions = [f"{busbw / copy_bw:.2f}", f"{busbw / reduce_bw:.2f}"]
        rows.append([p["algorithm"], us(p["median_s"]), f"{busbw:.2f}", *fractions, ""])
    headers = ["algorithm", "us", "busbw GB/s", "/ copy", "/ reduce f32", "note"]
    return table(headers, rows)


def fraction_checks(points: list[dict], copy_bw: float) -> list[Check]:
    """Busbw as a fraction of the copy rate, per algorithm (reported, no target)."""
    return [
        Check(
            f"{p['algorithm']} busbw / copy bandwidth ({format_bytes(p['nbytes'])}, p={RANKS})",
            f"{p['busbw_gbps'] / copy_bw:.2f}",
            "(no target)",
            None,
        )
        for p in points
        if p["status"] == PointStatus.OK
    ]


def run(mode: Mode) -> Figure:
    """Measure the limits, then every algorithm at 16 MiB (smoke: 64 KiB), p=2, and compare."""
    limit_bytes, busbw_bytes = SMOKE_BYTES if mode is Mode.SMOKE else (LIMIT_BYTES, BUSBW_BYTES)
    rows = measure_limits(limit_bytes, mode.pick(1.5, 0.5, 0.05))
    copy_bw = next(r["gbps"] for r in rows if r["kind"] == "copy")
    reduce_bw = next(r["gbps"] for r in rows if r["kind"] != "copy" and r["dtype"] == "float32")
    log(f"figure 5: every algorithm at {format_bytes(busbw_bytes)}, p={RANKS}")
    timing = mode.pick(
        Timing(budget_s=1.5, passes=3),
        Timing(budget_s=0.6, passes=2),
        Timing(budget_s=0.05, passes=1, min_iterations=5),
    )
    events = time_points(RANKS, tuple(BASE_ALGORITHMS), (busbw_bytes,), timing)
    points = [with_busbw(p) for p in events]
    figure = Figure(
        5,
        "Physical limits",
        f"numpy.copyto and MPI_SUM Reduce_local on {format_bytes(limit_bytes)} buffers, "
        f"{RANKS} ranks working at once (per-rank rates); busbw of float32 SUM at "
        f"{format_bytes(busbw_bytes)}, p={RANKS}, every algorithm in one job",
    )
    figure.table = [*limits_table(rows), "", *busbw_table(points, copy_bw, reduce_bw)]
    figure.checks = fraction_checks(points, copy_bw)
    figure.notes += [
        "GB/s counts the bytes of one buffer per call (a copy reads and writes it: 2x traffic)",
        "busbw = algbw x 2(p-1)/p (nccl-tests), so at p=2 busbw = bytes / median time",
        "at p=2 ring and rabenseifner reduce n/2 bytes per rank (recursive doubling and the "
        "tree n), so their busbw may exceed the reduction rate; each also copies n bytes "
        "locally and moves n bytes each way through shared memory",
    ]
    return figure
