"""Bytes and seconds as people read them; the one formatter the CLI, dashboard and benchmarks share.

No MPI, no pandas: plain numbers in, short strings out.
"""

from __future__ import annotations

import math

BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
SECOND_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def _digits(value: float) -> str:
    """Whole numbers exactly, others with three significant digits and no exponent."""
    if value == int(value):
        return str(int(value))
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def format_bytes(nbytes: float) -> str:
    """8 B, 1000 B, 64 KiB, 1.5 MiB, 4 GiB: binary units, never an exponent."""
    value = float(nbytes)
    if not math.isfinite(value):
        return f"{value} B"
    unit = BYTE_UNITS[0]
    for bigger in BYTE_UNITS[1:]:
        if abs(value) < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{_digits(value)} {unit}"


def format_seconds(seconds: float) -> str:
    """2.34 us, 850 ns, 1.5 ms, 12 s: the largest unit that keeps the number >= 1."""
    if not math.isfinite(seconds) or seconds == 0:
        return f"{seconds:g} s"
    for unit, scale in SECOND_UNITS:
        if abs(seconds) >= scale:
            return f"{_digits(seconds / scale)} {unit}"
    return f"{_digits(seconds / 1e-9)} ns"
