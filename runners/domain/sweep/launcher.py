"""How jobs are launched, as policy: the launcher template's rules and each job's knobs.

No processes are started here (runners.jobs.launch does that) and no MPI is imported: the spec
validates its launcher with these rules, the plan gives each job its knobs, and the ranks read
PARENT_ENV to know whom to outlive.
"""

from __future__ import annotations

import shlex
from pathlib import Path

DEFAULT_LAUNCHER = "mpiexec -n {ranks}"
SHELL_SYNTAX = frozenset(";|&<>$`()\n")
REMOTE_OPTIONS = ("-f", "-hosts", "-host", "--host", "-hostfile", "--hostfile", "-machinefile")
PARENT_ENV = "COLLSWEEP_PARENT_PID"  # "<host>:<pid>" of the collsweep process that launched


def is_oversubscribed(ranks: int, cores: int) -> bool:
    """True when more ranks than the machine's physical cores (runners.host.machine) would
    share it."""
    return ranks > cores


def default_knobs(ranks: int, thread_level: str = "single", *, cores: int) -> dict[str, str]:
    """Environment knobs a job needs for honest numbers on this machine.

    mpi4py asks for MPI_THREAD_MULTIPLE unless told otherwise, and MPICH then skips its fast
    shared-memory collectives, so the thread level is set explicitly. With more ranks than
    cores MPICH's shared-memory collectives spin (milliseconds per call), so oversubscribed
    jobs use the generic algorithms instead. `cores`: the physical cores of the machine the
    ranks start on.
    """
    knobs = {"MPI4PY_RC_THREAD_LEVEL": thread_level}
    if is_oversubscribed(ranks, cores):
        knobs["MPIR_CVAR_DEVICE_COLLECTIVES"] = "none"
    return knobs


RANKS_PER_NODE = "{ranks_per_node}"  # where a cluster's launcher is told the ranks per node


def launcher_text(template: str, ranks: int, ranks_per_node: int = 0) -> str:
    """The launcher template with its placeholders filled in."""
    return template.format(ranks=ranks, ranks_per_node=ranks_per_node)


MAX_LAUNCHER_CHARS = 4096  # a long srun line with its options is a few hundred


def launcher_syntax_problem(template: str, shell: bool = False) -> str | None:
    """Why a launcher template cannot be used as written, or None (no file system look-ups)."""
    if len(template) > MAX_LAUNCHER_CHARS:
        return f"launcher is {len(template)} characters long: at most {MAX_LAUNCHER_CHARS}"
    if "{ranks}" not in template:
        return "launcher must contain {ranks}, e.g. 'mpiexec -n {ranks}'"
    try:
        text = launcher_text(template, 2, 1)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError):
        return f"launcher {template!r} may use no placeholder but {{ranks}} and {RANKS_PER_NODE}"
    if any(ord(c) < 32 or ord(c) == 127 for c in template):
        return f"launcher {template!r} holds a control character"
    if shell:
        return None
    syntax = sorted(set(text) & SHELL_SYNTAX)
    if syntax:
        shown = " ".join(repr(c) for c in syntax)
        return (
            f"launcher {template!r} contains shell syntax ({shown}) but is not run through a "
            "shell; remove it, or add --launcher-shell to run it with sh -c"
        )
    try:
        words = shlex.split(text)
    except ValueError as exc:
        return f"launcher {template!r} cannot be split into words: {exc}"
    return None if words else "launcher is empty"


def runs_here(template: str) -> bool:
    """True when the launcher starts every rank on this machine (mpiexec without a host list)."""
    words = shlex.split(launcher_text(template, 2, 1))
    return bool(words) and Path(words[0]).name == "mpiexec" and not set(words) & set(REMOTE_OPTIONS)
