"""Sweeps as Slurm batch jobs: the job-array script `collsweep submit` hands to sbatch (pure).

One array task per group size of the spec. Every task runs the same spec narrowed to its group
size, under the same run id, into a shard store of its own (`<store>.shards/<run>/<job>_<task>
.duckdb`: DuckDB's lock does not hold across nodes, so no two tasks ever write one file), with
srun as the launcher inside its allocation. `collsweep merge` folds the shards into one run.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runners.domain.nodes.placement import ROUND_ROBIN, Placement
from runners.domain.sweep.launcher import RANKS_PER_NODE

LAUNCHER = "srun --mpi=pmi2 -n {ranks}"
ANYWHERE = Placement(real=True)  # no ranks per node asked: srun places the ranks as it likes
SHARDS_SUFFIX = ".shards"


@dataclass(frozen=True)
class Submission:
    """What one `collsweep submit` asks of Slurm."""

    run_id: str
    spec_file: Path  # the copy of the spec the tasks read (beside the shards)
    ranks: tuple[int, ...]  # one array task per group size
    shard_dir: Path
    python: str  # the interpreter that runs collsweep on the nodes
    workdir: Path
    partition: str = ""
    nodes: int = 1
    time: str = ""
    sbatch_args: tuple[str, ...] = ()
    oversubscribe: bool = False  # more ranks than the allocation's cores, asked for
    labels: tuple[str, ...] = ()  # every task's sweep options naming the run (--name, --tag)
    placement: Placement = ANYWHERE  # the spec's ranks per node, told to srun


def launcher(oversubscribe: bool = False, placement: Placement = ANYWHERE) -> str:
    """The launcher template a task's sweep uses inside its allocation: with ranks per node,
    srun told them (`--ntasks-per-node`; round-robin: `--distribution=cyclic`, rank r on node
    r mod nodes)."""
    text = LAUNCHER.replace("-n", "--overcommit -n") if oversubscribe else LAUNCHER
    if placement.placed:
        text += f" --ntasks-per-node={RANKS_PER_NODE}"
        text += " --distribution=cyclic" if placement.order == ROUND_ROBIN else ""
    return text


def shard_dir(store: Path, run_id: str) -> Path:
    """Where a job's shard stores, script and task logs go: beside the main store."""
    return store.parent / f"{store.name}{SHARDS_SUFFIX}" / run_id


def submission_problem(sub: Submission) -> str | None:
    """Why the script cannot carry these values (a control character: a newline would start a
    line of its own in the script), or None; every other value is quoted."""
    values = [
        ("run id", sub.run_id),
        ("spec file", str(sub.spec_file)),
        ("shard folder", str(sub.shard_dir)),
        ("python", sub.python),
        ("working folder", str(sub.workdir)),
        ("--partition", sub.partition),
        ("--time", sub.time),
        *(("--sbatch-arg", arg) for arg in sub.sbatch_args),
        *(("run label", label) for label in sub.labels),
    ]
    for what, value in values:
        if _has_control(value):
            return f"{what} {value!r} holds a control character; a job script cannot carry it"
    return None


def _has_control(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in text)


def sbatch_quote(value: str) -> str:
    """A value for an #SBATCH line as sbatch reads it back: double quotes group it (spaces and
    '#' included), a backslash escapes a quote or a backslash."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def batch_script(sub: Submission) -> str:
    """The sbatch script: a job array over the group sizes, each task a sweep into its shard."""
    q, sq = shlex.quote, sbatch_quote
    header = [
        "#!/bin/bash",
        f"#SBATCH --job-name={sq('collsweep-' + sub.run_id)}",
        f"#SBATCH --array=0-{len(sub.ranks) - 1}",
        f"#SBATCH --nodes={sub.nodes}",
        f"#SBATCH --ntasks={max(sub.ranks)}",
        f"#SBATCH --output={sq(str(sub.shard_dir) + '/%A_%a.out')}",
    ]
    header += [f"#SBATCH --partition={sq(sub.partition)}"] if sub.partition else []
    header += [f"#SBATCH --time={sq(sub.time)}"] if sub.time else []
    header += ["#SBATCH --overcommit"] if sub.oversubscribe else []
    header += [f"#SBATCH {sq(arg)}" for arg in sub.sbatch_args]
    shard = f"{q(str(sub.shard_dir))}/${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}.duckdb"
    # -P: the task never imports from its working directory; --verbose: a task's log (its
    # .out, what people tail) gets a line per finished point
    sweep = [
        q(sub.python), "-P", "-m", "runners.cli", "sweep", q(str(sub.spec_file)),
        "--ranks", '"$RANKS"', "--run-id", q(sub.run_id),
        "--store", shard, "--launcher", q(launcher(sub.oversubscribe, sub.placement)),
        "--verbose",
        *(q(label) for label in sub.labels),
    ]  # fmt: skip
    body = [
        "set -euo pipefail",
        f"cd {q(str(sub.workdir))}",
        f"SIZES=({' '.join(str(r) for r in sub.ranks)})",
        'RANKS="${SIZES[$SLURM_ARRAY_TASK_ID]}"',
        "exec " + " ".join(sweep),
    ]
    return "\n".join([*header, "", *body]) + "\n"


def partitions(sinfo_output: str) -> dict[str, int]:
    """Partition -> CPUs of its largest node, from `sinfo -h -o '%P %c'` ('debug*' is the
    default partition)."""
    out: dict[str, int] = {}
    for line in sinfo_output.splitlines():
        words = line.split()
        if len(words) == 2 and words[1].rstrip("+").isdigit():
            name = words[0].rstrip("*")
            out[name] = max(out.get(name, 0), int(words[1].rstrip("+")))
    return out


def default_partition(sinfo_output: str) -> str:
    """The partition sinfo marks as the default ('name*'), or ''."""
    for line in sinfo_output.splitlines():
        words = line.split()
        if words and words[0].endswith("*"):
            return words[0].rstrip("*")
    return ""


def capacity_problem(
    ranks: Sequence[int],
    cores: int,
    nodes: int,
    oversubscribe: bool,
    placement: Placement = ANYWHERE,
) -> str:
    """Why the largest group does not fit the allocation's nodes and cores, or ''."""
    largest, have = max(ranks), cores * nodes
    if placement.placed and placement.nodes(largest) > nodes:
        return (
            f"the largest group ({largest} ranks, {placement.ranks_per_node} a node) spans "
            f"{placement.nodes(largest)} nodes: ask for --nodes {placement.nodes(largest)}"
        )
    if placement.placed and placement.ranks_per_node > cores and not oversubscribe:
        return (
            f"{placement.ranks_per_node} ranks a node exceed a node's {cores} cores; pass "
            "--oversubscribe to time it anyway"
        )
    if largest <= have or oversubscribe:
        return ""
    return (
        f"the largest group ({largest} ranks) exceeds the allocation's {have} cores ({nodes} "
        f"node(s) of {cores}); ask for more --nodes, or pass --oversubscribe to time it anyway"
    )
