"""Whether SimGrid can be loaded here (Debian's python3-simgrid, which .ci/run installs)."""

from __future__ import annotations

import pytest

from runners.domain.errors import BadInput
from runners.simulator.simgrid_module import simgrid


def _installed() -> bool:
    try:
        simgrid()
    except BadInput:
        return False
    return True


needs_simgrid = pytest.mark.skipif(
    not _installed(), reason="needs SimGrid (apt-get install python3-simgrid)"
)
