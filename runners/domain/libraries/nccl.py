"""NCCL: a GPU library whose results collsweep imports (nccl-tests output) and never runs.

It has no wheel, launcher or libmpi here (`runnable` False): no sweep, tune, record, verify or
calibration launches it, and its algorithms (runners.domain.algorithms.nccl) are refused where
a command would run them. Its points come from `collsweep import`, named by the NCCL_ALGO its
log or report shows (NCCL_ALGO=Ring: `nccl:ring`); a value the catalog does not list keeps its
own name, so the file is stored and drawn but its run is not analysed.

Its reductions run inside the kernels that copy the data (`reduces_while_copying`): at one
group size, and with a ring whose bytes reduced are half its bytes sent at every size, no fit
can tell gamma from beta, so the calibration fitted to its points takes gamma = 0 and says so.
"""

from __future__ import annotations

from collections.abc import Mapping

from runners.domain.algorithms.nccl import ALGO_VARIABLE
from runners.domain.collectives.collective import qualified
from runners.domain.collectives.descriptor import NCCL, AlgorithmSpec
from runners.domain.libraries.base import LibrarySpec


class Nccl(LibrarySpec):
    """NCCL, imported only."""

    def forcing_env(self, spec: AlgorithmSpec) -> dict[str, str]:
        """NCCL_ALGO=<its algorithm> for a forced entry, as a file shows it was run."""
        return {ALGO_VARIABLE: spec.forced} if spec.forced else {}

    def forcing_text(self, spec: AlgorithmSpec) -> str:
        """NCCL_ALGO=<its algorithm>."""
        return " ".join(f"{k}={v}" for k, v in self.forcing_env(spec).items())

    def unlisted_forcing(self, collective: str, selectors: Mapping[str, str]) -> str | None:
        """`nccl:<value>` (lower case, as NCCL reads it) for an NCCL_ALGO the catalog lacks."""
        value = next((v for k, v in selectors.items() if k.upper() == ALGO_VARIABLE), "")
        return qualified(collective, f"{NCCL}:{value.lower()}") if value else None


LIBRARY = Nccl(
    NCCL,
    "NCCL",
    NCCL,
    package="",
    calibration_suffix=f"@{NCCL}",
    version_prefix="NCCL version",  # never an MPI library's: its results are imported
    tuning_collectives=(),
    runnable=False,
    reduces_while_copying=True,
)
