"""`collsweep verify`: run every algorithm x dtype x op x count on real ranks and compare."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from runners.domain import launcher
from runners.domain.catalog import BASE_ALGORITHMS, DTYPES, OPS
from runners.domain.events import Checked, MalformedEvent, parse_event
from runners.domain.inputs import default_counts
from runners.jobs import launch


@dataclass(frozen=True)
class VerifyPlan:
    """What to check: the group sizes and the algorithm x dtype x op matrix."""

    ranks: tuple[int, ...]
    algorithms: tuple[str, ...] = tuple(BASE_ALGORITHMS)
    dtypes: tuple[str, ...] = tuple(DTYPES)
    ops: tuple[str, ...] = tuple(OPS)
    counts: tuple[int, ...] = ()  # empty: 1, p-1, p, an odd count, a large count
    timeout_s: float = 600.0


def _job(plan: VerifyPlan) -> dict:
    """The ranks' job file: the matrix to check."""
    return {
        "algorithms": list(plan.algorithms),
        "dtypes": list(plan.dtypes),
        "ops": list(plan.ops),
        "counts": list(plan.counts),
    }


def _job_failure(ranks: int, result: launch.JobResult) -> dict:
    why = "timed out" if result.timed_out else f"job exited with {result.returncode}"
    tail = " | ".join(result.stderr.strip().splitlines()[-3:])
    return {
        "algorithm": "*",
        "dtype": "*",
        "op": "*",
        "count": 0,
        "ranks": ranks,
        "status": "error",
        "detail": f"{why}: {tail}",
    }


def _checked(line: str) -> Checked | None:
    """The check a printed line reports; None for other lines (a malformed one included,
    which then counts as a missing check and fails the job)."""
    try:
        event = parse_event(line)
    except MalformedEvent:
        return None
    return event if isinstance(event, Checked) else None


def verify_ranks(plan: VerifyPlan, ranks: int) -> list[dict]:
    """Launch `ranks` ranks once and return one row per checked combination."""
    with launch.job_file(_job(plan)) as path:
        knobs = launcher.default_knobs(ranks)
        job = launch.Job(ranks, launch.RANKS_ENTRY, ["verify", path], knobs)
        result = launch.run(job, plan.timeout_s)
    rows = [asdict(e) for e in map(_checked, result.stdout.splitlines()) if e is not None]
    counts = plan.counts or default_counts(ranks)
    expected = len(plan.algorithms) * len(plan.dtypes) * len(plan.ops) * len(counts)
    if result.returncode != 0 or len(rows) < expected:
        rows.append(_job_failure(ranks, result))
    return rows


def verify(plan: VerifyPlan, progress: Callable[[str], None] = print) -> list[dict]:
    """Check every group size of the plan, reporting progress as each job finishes."""
    rows: list[dict] = []
    for ranks in plan.ranks:
        found = verify_ranks(plan, ranks)
        bad = sum(row["status"] in ("mismatch", "error") for row in found)
        progress(f"ranks={ranks}: {len(found)} checks, {bad} failed")
        rows += found
    return rows


def failed(rows: Iterable[dict]) -> list[dict]:
    """The rows that are neither correct nor a declared refusal."""
    return [row for row in rows if row["status"] not in ("ok", "refused")]


def summary_table(rows: list[dict]) -> str:
    """A text table: per ranks x algorithm, how many checks were ok, refused or wrong."""
    cells: dict[tuple[int, str], dict[str, int]] = {}
    for row in rows:
        cell = cells.setdefault((row["ranks"], row["algorithm"]), {})
        cell[row["status"]] = cell.get(row["status"], 0) + 1
    header = f"{'ranks':>5}  {'algorithm':<20} {'ok':>5} {'refused':>8} {'wrong':>6}  verdict"
    lines = [header, "-" * len(header)]
    for (ranks, algorithm), cell in sorted(cells.items()):
        wrong = cell.get("mismatch", 0) + cell.get("error", 0)
        verdict = "CORRECT" if not wrong else "FAILED"
        lines.append(
            f"{ranks:>5}  {algorithm:<20} {cell.get('ok', 0):>5} "
            f"{cell.get('refused', 0):>8} {wrong:>6}  {verdict}"
        )
    return "\n".join(lines)
