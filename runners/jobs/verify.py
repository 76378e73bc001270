"""`collsweep verify`: run every algorithm x dtype x op x count on real ranks and compare."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.collectives.inputs import default_counts, verified_ops
from runners.domain.libraries import RUNNABLE
from runners.domain.libraries.catalog import ALGORITHMS, BASE_ALGORITHMS, library_knobs
from runners.domain.status import CheckStatus
from runners.domain.sweep import launcher
from runners.domain.sweep.events import Checked, MalformedEvent, parse_event
from runners.domain.sweep.job_file import VerifyJob
from runners.host.machine import physical_cores
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


WRONG = (CheckStatus.MISMATCH, CheckStatus.ERROR)  # the checks that fail an algorithm


# Every algorithm verify can check: all but those configured by a file (mpi:tuned) and those
# of a library collsweep only imports results of (NCCL's).
def is_verifiable(name: str) -> bool:
    """Whether verify can check `name` (a family's member too: hierarchical(node=2))."""
    spec = ALGORITHMS.get(name)
    return spec is not None and not spec.own_launch and spec.runs_on in RUNNABLE


VERIFIABLE = {name: spec for name, spec in ALGORITHMS.items() if is_verifiable(name)}


@dataclass(frozen=True)
class VerifyLaunch:
    """One launch of a check: a library's ranks, the environment that forces its algorithm
    (none for hand-written and autotuned ones, which share a launch), the algorithms."""

    library: str
    knobs: dict[str, str]
    algorithms: tuple[str, ...]


def launches(algorithms: Iterable[str]) -> list[VerifyLaunch]:
    """Per library, one launch for its unforced algorithms and one per forced algorithm,
    forced by environment as a sweep forces it without run-time switching."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for name in algorithms:
        spec = ALGORITHMS[name]
        grouped.setdefault((spec.runs_on, spec.forced and name), []).append(name)
    return [
        VerifyLaunch(library, library_knobs(forced) if forced else {}, tuple(names))
        for (library, forced), names in grouped.items()
    ]


def _job(plan: VerifyPlan, algorithms: Iterable[str]) -> VerifyJob:
    """The ranks' job file: the matrix to check."""
    return VerifyJob(tuple(algorithms), plan.dtypes, plan.ops, plan.counts)


def _job_failure(ranks: int, result: launch.JobResult) -> dict:
    why = "timed out" if result.timed_out else f"job exited with {result.returncode}"
    tail = " | ".join(result.stderr.strip().splitlines()[-3:])
    return {
        "algorithm": "*",
        "dtype": "*",
        "op": "*",
        "count": 0,
        "ranks": ranks,
        "status": CheckStatus.ERROR,
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
    """Launch `ranks` ranks once per library configuration and return one row per checked
    combination."""
    rows: list[dict] = []
    for planned in launches(plan.algorithms):
        with launch.job_file(_job(plan, planned.algorithms)) as path:
            knobs = {**launcher.default_knobs(ranks, cores=physical_cores()), **planned.knobs}
            job = launch.Job(
                ranks, launch.RANKS_ENTRY, ["verify", path], knobs, library=planned.library
            )
            result = launch.run(job, plan.timeout_s)
        found = [asdict(e) for e in map(_checked, result.stdout.splitlines()) if e is not None]
        counts = plan.counts or default_counts(ranks)
        per_count = sum(
            len(verified_ops(ALGORITHMS[a].collective, plan.ops)) for a in planned.algorithms
        )
        expected = per_count * len(plan.dtypes) * len(counts)
        if result.returncode != 0 or len(found) < expected:
            found.append(_job_failure(ranks, result))
        rows += found
    return rows


def verify(plan: VerifyPlan, progress: Callable[[str], None] = print) -> list[dict]:
    """Check every group size of the plan, reporting progress as each job finishes."""
    rows: list[dict] = []
    for ranks in plan.ranks:
        found = verify_ranks(plan, ranks)
        bad = sum(row["status"] in WRONG for row in found)
        progress(f"ranks={ranks}: {len(found)} checks, {bad} failed")
        rows += found
    return rows


def failed(rows: Iterable[dict]) -> list[dict]:
    """The rows that are neither correct nor a declared refusal."""
    return [row for row in rows if row["status"] not in (CheckStatus.OK, CheckStatus.REFUSED)]


def summary_table(rows: list[dict]) -> str:
    """A text table: per ranks x algorithm, how many checks were ok, refused or wrong."""
    cells: dict[tuple[int, str], dict[str, int]] = {}
    for row in rows:
        cell = cells.setdefault((row["ranks"], row["algorithm"]), {})
        cell[row["status"]] = cell.get(row["status"], 0) + 1
    width = max((len(algorithm) for _, algorithm in cells), default=9)
    header = f"{'ranks':>5}  {'algorithm':<{width}} {'ok':>5} {'refused':>8} {'wrong':>6}  verdict"
    lines = [header, "-" * len(header)]
    for (ranks, algorithm), cell in sorted(cells.items()):
        wrong = sum(cell.get(status, 0) for status in WRONG)
        verdict = "CORRECT" if not wrong else "FAILED"
        lines.append(
            f"{ranks:>5}  {algorithm:<{width}} {cell.get(CheckStatus.OK, 0):>5} "
            f"{cell.get(CheckStatus.REFUSED, 0):>8} {wrong:>6}  {verdict}"
        )
    return "\n".join(lines)
