"""Bytes and seconds as people write and read them (runners.domain.units)."""

from __future__ import annotations

import pytest

from runners.domain.units import (
    column_unit,
    counted,
    format_bytes,
    format_duration,
    format_per_byte,
    format_rate,
    format_ratio,
    format_seconds,
    parse_bytes,
    parse_seconds,
)


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        ("4096", 4096),
        ("64K", 65536),
        ("64 KiB", 65536),
        ("64kb", 65536),
        ("1.5M", 1572864),
        ("2 MiB", 2 * 2**20),
        ("1G", 2**30),
        ("8 B", 8),
        ("0", 0),
    ],
)
def test_sizes_are_read_with_binary_suffixes(text: str, nbytes: int) -> None:
    assert parse_bytes(text) == nbytes


@pytest.mark.parametrize("text", ["", "K", "x", "64Q", "1.5", "1.5B", "nan", "inf", "2 MiBs"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="bytes"):
        parse_bytes(text)


def test_what_is_printed_reads_back() -> None:
    for nbytes in (8, 1000, 65536, 1536 * 1024, 2**30):
        assert parse_bytes(format_bytes(nbytes)) == nbytes
    assert format_seconds(2.34e-6) == "2.34 us" and format_seconds(0.0015) == "1.5 ms"


def test_counts_take_the_right_number() -> None:
    assert counted(1, "point") == "1 point" and counted(0, "point") == "0 points"
    assert counted(3, "element") == "3 elements"
    assert counted(1, "launch", "launches") == "1 launch"
    assert counted(5, "launch", "launches") == "5 launches"


def _printed_value(text: str, units: dict[str, float]) -> tuple[float, float]:
    """(the value a formatted string says, half a unit of its last printed digit)."""
    number, unit = text.split(" ")
    decimals = len(number.partition(".")[2])
    return float(number) * units[unit], 0.5 * 10.0**-decimals * units[unit]


SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
BYTES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def _dense(low_exponent: float, high_exponent: float, count: int) -> list[float]:
    """Log-spaced values plus every decade and binary boundary, and a hair either side."""
    step = (high_exponent - low_exponent) / (count - 1)
    values = [10 ** (low_exponent + i * step) for i in range(count)]
    for exponent in range(int(low_exponent), int(high_exponent) + 1):
        for base in (10.0**exponent, 2.0 ** (exponent * 10 / 3)):
            values += [base, base * (1 - 1e-4), base * (1 + 1e-4), base * 0.99996, base * 1.1]
    return values


def test_every_time_reads_back_within_its_printed_precision() -> None:
    for seconds in _dense(-9, 6, 20_000):
        printed = format_seconds(seconds)
        value, half_digit = _printed_value(printed, SECONDS)
        assert abs(value - seconds) <= half_digit * (1 + 1e-9), (seconds, printed)
        assert 1 <= abs(float(printed.split()[0])) < 1000 or printed.endswith((" s", " ns"))
        assert parse_seconds(printed) == value


def test_every_size_reads_back_within_its_printed_precision() -> None:
    sizes = [*range(0, 5000), *(2**k + d for k in range(41) for d in (-1, 0, 1))]
    sizes += [round(v) for v in _dense(0, 12, 20_000)]
    sizes += [v for v in _dense(-1, 12, 5_000)]  # fractions of a byte: means of sizes
    for nbytes in sizes:
        printed = format_bytes(nbytes)
        value, half_digit = _printed_value(printed, BYTES)
        assert abs(value - nbytes) <= half_digit * (1 + 1e-9), (nbytes, printed)
        if nbytes == int(nbytes) and nbytes < 1024:
            assert printed == f"{int(nbytes)} B"


@pytest.mark.parametrize(
    ("seconds", "printed"),
    [
        (1e-4, "100 us"),
        (0.00011, "110 us"),
        (0.2504, "250 ms"),
        (1500.2, "1500 s"),
        (0.01, "10 ms"),
        (0.00099996, "1 ms"),
        (2.34e-6, "2.34 us"),
        (5e-10, "0.5 ns"),
    ],
)
def test_issue_24_times(seconds: float, printed: str) -> None:
    assert format_seconds(seconds) == printed


@pytest.mark.parametrize(
    ("nbytes", "printed"),
    [(102604.8, "100 KiB"), (910, "910 B"), (1000, "1000 B"), (1023.9, "1 KiB"), (2**20, "1 MiB")],
)
def test_issue_24_sizes(nbytes: float, printed: str) -> None:
    assert format_bytes(nbytes) == printed


def test_rates_ratios_and_per_byte_costs() -> None:
    assert format_rate(12.3e9) == "12.3 GB/s" and format_rate(100e9) == "100 GB/s"
    assert format_ratio(2.7) == "2.7x" and format_ratio(10.0) == "10x"
    assert format_ratio(100.4) == "100x" and format_ratio(float("nan")) == "-"
    assert format_per_byte(1e-10) == "0.1 ns/B (10 GB/s)"


def test_a_column_of_times_takes_the_unit_of_its_smallest_value() -> None:
    assert column_unit([13.0, 120.0]) == ("s", 1.0)
    assert column_unit([1e-4, 0.02, 0.0]) == ("us", 1e-6)
    assert column_unit([]) == ("s", 1.0) and column_unit([1e-12]) == ("ns", 1e-9)


@pytest.mark.parametrize(
    "seconds, text",
    [
        (28, "28 s"),
        (95, "95 s"),
        (782, "13 min"),
        (7300, "2.03 h"),
        (86400, "1 day"),
        (200000, "2.31 days"),
    ],
)
def test_durations_read_in_the_unit_people_use(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
