"""Bytes, seconds, rates and ratios as people read them; the one formatter the CLI, dashboard and
benchmarks share.

No MPI, no pandas: plain numbers in, short strings out. Three significant digits (whole numbers
below the next unit exactly), never an exponent; a value that rounds up to the next unit is shown
in that unit (999.96 us is "1 ms", not "1000 us").
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence

BYTE_UNITS = (("B", 1.0), ("KiB", 2.0**10), ("MiB", 2.0**20), ("GiB", 2.0**30), ("TiB", 2.0**40))
SECOND_UNITS = (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0))
SIGNIFICANT = 3


def _digits(value: float) -> str:
    """Whole numbers exactly, others with three significant digits and no exponent. Zeros are
    stripped only after a decimal point, never from a whole number's own digits."""
    if value == int(value):
        return str(int(value))
    decimals = max(0, SIGNIFICANT - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _rounds_to(value: float) -> float:
    """The value _digits prints, as a number (what decides that 999.96 becomes the next unit)."""
    return float(_digits(value))


def _scaled(value: float, units: tuple[tuple[str, float], ...], step: float) -> str:
    """The value in the largest unit that keeps it >= 1 once rounded (the smallest unit for
    anything smaller), and below `step` of that unit unless it is the largest."""
    chosen = units[0]
    for unit in units:
        if abs(value) >= unit[1] or abs(_rounds_to(value / unit[1])) >= step:
            chosen = unit
    name, scale = chosen
    shown = value / scale
    if name != units[-1][0] and abs(_rounds_to(shown)) >= step:
        name, scale = units[units.index(chosen) + 1]
        shown = value / scale
    return f"{_digits(shown)} {name}"


def format_bytes(nbytes: float) -> str:
    """8 B, 1000 B, 64 KiB, 1.5 MiB, 4 GiB: binary units, never an exponent."""
    value = float(nbytes)
    if not math.isfinite(value):
        return f"{value} B"
    if abs(value) < 1024 and value == int(value):
        return f"{int(value)} B"
    return _scaled(value, BYTE_UNITS, 1024)


def format_seconds(seconds: float) -> str:
    """2.34 us, 850 ns, 1.5 ms, 12 s, 1500 s: the largest unit that keeps the number >= 1."""
    value = float(seconds)
    if not math.isfinite(value) or value == 0:
        return f"{value:g} s"
    return _scaled(value, SECOND_UNITS, 1000)


def format_duration(seconds: float) -> str:
    """A wall-clock span for people: seconds up to two minutes, then minutes, hours, days
    ("95 s", "13 min", "2.5 h", "1 day")."""
    for unit, size, plural in (("day", 86400.0, "days"), ("h", 3600.0, "h"), ("min", 60.0, "min")):
        if seconds >= 2 * size or (unit == "day" and seconds >= size):
            value = _digits(seconds / size)
            return f"{value} {unit if value == '1' else plural}"
    return format_seconds(seconds)


def format_rate(bytes_per_second: float) -> str:
    """A bandwidth in decimal gigabytes a second (the unit nccl-tests and OSU print): 12.3 GB/s,
    0.85 GB/s."""
    value = float(bytes_per_second)
    if not math.isfinite(value):
        return f"{value} GB/s"
    return f"{_digits(value / 1e9) if value else '0'} GB/s"


def format_ratio(ratio: float) -> str:
    """A ratio of two times as a factor: 2.7x, 1.04x, 0.5x (nan as '-')."""
    value = float(ratio)
    if not math.isfinite(value):
        return "-"
    return f"{_digits(value) if value else '0'}x"


def format_per_byte(seconds_per_byte: float) -> str:
    """A per-byte cost (beta, gamma) in ns/B with its bandwidth: '0.0812 ns/B (12.3 GB/s)'."""
    value = float(seconds_per_byte)
    if not math.isfinite(value) or value <= 0:
        return f"{value:g} s/B"
    return f"{_digits(value * 1e9)} ns/B ({format_rate(1 / value)})"


def column_unit(seconds: list[float]) -> tuple[str, float]:
    """The one time unit for a column of seconds: the largest that keeps its smallest nonzero
    value >= 1 (seconds for an empty column), as (name, scale)."""
    nonzero = [abs(s) for s in seconds if s and math.isfinite(s)]
    smallest = min(nonzero, default=1.0)
    fitting = [unit for unit in SECOND_UNITS if smallest >= unit[1]]
    return fitting[-1] if fitting else SECOND_UNITS[0]


def seconds_column(column: str, seconds: list[float]) -> tuple[str, float]:
    """How a table shows a column of seconds named `*_s`: its header with the unit column_unit
    picks ('median_s' -> 'median (us)') and the scale to divide its values by. The CLI's text
    tables and the dashboard's both follow it."""
    unit, scale = column_unit(seconds)
    return f"{column.removesuffix('_s')} ({unit})", scale


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


_SECONDS = dict(SECOND_UNITS)


def parse_seconds(text: str) -> float:
    """'2.34 us', '1.5 ms', '12 s': what format_seconds prints, back as seconds. ValueError for
    anything else."""
    number, _, unit = text.strip().partition(" ")
    if unit not in _SECONDS:
        raise ValueError(f"not a time: {text!r} (e.g. 2.5 us, 1.5 ms, 12 s)")
    return float(number) * _SECONDS[unit]


def counted(number: int, noun: str, plural: str = "") -> str:
    """'1 point', '3 points', '1 launch', '5 launches': a count with its noun in the right
    number (`plural` where adding an s is wrong)."""
    return f"{number} {noun}" if number == 1 else f"{number} {plural or noun + 's'}"


def aligned_lines(table: Sequence[Sequence[object]], indent: str = "  ") -> list[str]:
    """One line per row (the header is a row like the others), each cell padded to its
    column's widest, trailing blanks dropped."""
    widths = [max(len(str(row[i])) for row in table) for i in range(len(table[0]))]
    return [
        indent + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]


TERMINAL_WIDTH = 120  # no line collsweep prints for people is longer


def wrapped(line: str, width: int = TERMINAL_WIDTH) -> str:
    """A line of prose folded at word boundaries to ``width``, its continuation indented four
    spaces past its own indent; a line that fits (a table's row) is left as it is."""
    if len(line) <= width:
        return line
    indent = line[: len(line) - len(line.lstrip())]
    return textwrap.fill(
        line,
        width,
        subsequent_indent=indent + "    ",
        break_long_words=False,
        break_on_hyphens=False,
    )


# Text from a file or a store can hold terminal escapes (ESC [ ...) that recolour, move the
# cursor or rewrite a line, and bidirectional overrides that reorder what is read: everything a
# command prints goes through `visible` (runners.process.terminal wraps the CLI's streams).
# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides/isolates
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character (but newline and tab) written as its escape."""
    return _HIDDEN.sub(_escape, text)
