"""`collsweep submit`: a spec as a Slurm job array, one task per group size
(runners.domain.sweep.slurm).

Everything is checked before anything is submitted or written: the spec, sbatch on PATH, the
partition (asked of sinfo), and whether the largest group fits the allocation's cores. Then the
spec copy and the script go beside the shards, and sbatch gets the script.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from runners.domain.errors import BadInput
from runners.domain.libraries.catalog import auto_refused
from runners.domain.nodes.placement import Placement
from runners.domain.sweep import slurm
from runners.domain.sweep.spec import SweepSpec, load_spec

SINFO_TIMEOUT_S = 30


class SubmitError(BadInput):
    """A job that cannot be submitted: one line, exit status 2, nothing submitted or written."""


@dataclass(frozen=True)
class SubmitRequest:
    """What `collsweep submit` was asked."""

    spec: SweepSpec
    store: Path
    run_id: str
    partition: str = ""
    nodes: int = 1
    time: str = ""
    sbatch_args: tuple[str, ...] = ()
    oversubscribe: bool = False
    labels: tuple[str, ...] = ()  # the tasks' sweep options naming the run: --name, --tag


def _sinfo(*fields: str) -> str:
    try:
        result = subprocess.run(
            ["sinfo", "-h", "-o", " ".join(fields)],
            capture_output=True,
            text=True,
            timeout=SINFO_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SubmitError(f"cannot ask sinfo for the cluster's partitions: {exc}") from None
    if result.returncode != 0:
        raise SubmitError(f"sinfo failed: {result.stderr.strip() or result.returncode}")
    return result.stdout


ADAPTIVE_NOT_YET = (
    "adaptive: not under submit yet: each round's points follow from the round before, merged "
    "and analysed, which a job array cannot wait for; inside one allocation (salloc) run "
    "`collsweep sweep SPEC --adaptive --launcher 'srun -n {ranks}'`, whose every round launches "
    "through srun"
)


def cluster_spec(path: Path, oversubscribe: bool) -> SweepSpec:
    """The spec file as its tasks run it: srun the launcher, told the spec's ranks per node
    (its nodes real: no emulation, no network of this host's); SpecError as a sweep's."""
    told = slurm.launcher(oversubscribe, Placement(1))  # {ranks_per_node} before it is known
    spec = load_spec(path, {"launcher": told})
    if len(spec.ranks_per_node) > 1:
        raise SubmitError("submit one ranks_per_node at a time, a job each")
    try:  # each task would choose on its own node's calibration: not yet
        auto_refused(spec.algorithms, "submit")
    except ValueError as exc:
        raise SubmitError(str(exc)) from None
    if spec.adaptive:
        raise SubmitError(ADAPTIVE_NOT_YET)
    return spec.with_values(launcher=slurm.launcher(oversubscribe, spec.nodes))


def check_cluster(request: SubmitRequest) -> str:
    """The partition the job goes to, after checking that Slurm is there, the partition
    exists and the largest group fits its cores (unless oversubscribing is asked for)."""
    if shutil.which("sbatch") is None:
        raise SubmitError("no sbatch on PATH: collsweep submit needs Slurm's client commands")
    listing = _sinfo("%P", "%c")
    known = slurm.partitions(listing)
    partition = request.partition or slurm.default_partition(listing)
    if partition not in known:
        names = ", ".join(sorted(known)) or "none"
        raise SubmitError(f"unknown partition {partition or '(no default)'!r}; sinfo lists {names}")
    problem = slurm.capacity_problem(
        request.spec.ranks, known[partition], request.nodes, request.oversubscribe,
        request.spec.nodes,
    )  # fmt: skip
    if problem:
        raise SubmitError(problem)
    return partition


def submission(request: SubmitRequest, partition: str) -> slurm.Submission:
    """The job the request makes, its files beside the main store's shards; SubmitError when
    a value cannot go into a job script."""
    folder = slurm.shard_dir(request.store, request.run_id)
    sub = slurm.Submission(
        run_id=request.run_id,
        spec_file=folder / "spec.toml",
        ranks=tuple(request.spec.ranks),
        shard_dir=folder,
        python=sys.executable,
        workdir=Path.cwd(),
        partition=partition,
        nodes=request.nodes,
        time=request.time,
        sbatch_args=request.sbatch_args,
        oversubscribe=request.oversubscribe,
        labels=request.labels,
        placement=request.spec.nodes,
    )
    problem = slurm.submission_problem(sub)
    if problem:
        raise SubmitError(problem)
    return sub


def submit(request: SubmitRequest, sub: slurm.Submission) -> str:
    """Write the spec copy and the script beside the shards and submit it; the job id."""
    sub.shard_dir.mkdir(parents=True, exist_ok=False)
    sub.spec_file.write_text(request.spec.to_toml())
    script = sub.shard_dir / "job.sbatch"
    script.write_text(slurm.batch_script(sub))
    result = subprocess.run(
        ["sbatch", "--parsable", str(script)], capture_output=True, text=True, timeout=60
    )
    if result.returncode != 0:
        raise SubmitError(f"sbatch refused the job: {result.stderr.strip()}")
    return result.stdout.strip().split(";")[0]
