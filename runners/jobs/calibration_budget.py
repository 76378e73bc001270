"""How long the calibration a sweep makes by itself times (runners.jobs.calibrate): two
seconds, or $COLLSWEEP_CALIBRATION_BUDGET_S (a quicker one on a CI machine, a longer one for
steadier predictions), checked before any rank starts."""

from __future__ import annotations

import math
import os

from runners.domain.errors import BadInput

AUTO_CALIBRATION_BUDGET_S = 2.0
BUDGET_ENV = "COLLSWEEP_CALIBRATION_BUDGET_S"  # another budget for the automatic calibration
MAX_AUTO_BUDGET_S = 60.0


def auto_calibration_budget() -> float:
    """The automatic calibration's timing budget: $COLLSWEEP_CALIBRATION_BUDGET_S seconds (a
    quicker one for a CI machine, a longer one for steadier predictions), else
    AUTO_CALIBRATION_BUDGET_S; BadInput for anything but seconds in (0, 60]."""
    text = os.environ.get(BUDGET_ENV, "").strip()
    if not text:
        return AUTO_CALIBRATION_BUDGET_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_AUTO_BUDGET_S:
        raise BadInput(f"{BUDGET_ENV}={text!r}: give seconds above 0 and at most 60")
    return seconds
