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


_SUFFIXES = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_bytes(text: str) -> int:
    """'4096', '64K', '64 KiB', '1.5M', '2 MiB', '1G': a whole number of bytes. Suffixes are
    binary (K = KiB = 1024), case-insensitive, with an optional 'iB' or 'B'. ValueError for
    anything else (a fraction of a byte included)."""
    cleaned = text.strip().lower().replace(" ", "").replace("_", "")
    for tail in ("ib", "b"):
        if cleaned.endswith(tail) and cleaned[: -len(tail)][-1:].isalpha():
            cleaned = cleaned[: -len(tail)]
            break
    number, suffix = (cleaned[:-1], cleaned[-1]) if cleaned[-1:].isalpha() else (cleaned, "")
    if suffix not in _SUFFIXES or not number:
        raise ValueError(f"not a size in bytes: {text!r} (e.g. 4096, 64K, 2 MiB)")
    value = float(number) * _SUFFIXES[suffix]
    if not value.is_integer():
        raise ValueError(f"not a whole number of bytes: {text!r}")
    return int(value)


def counted(number: int, noun: str, plural: str = "") -> str:
    """'1 point', '3 points', '1 launch', '5 launches': a count with its noun in the right
    number (`plural` where adding an s is wrong)."""
    return f"{number} {noun}" if number == 1 else f"{number} {plural or noun + 's'}"
