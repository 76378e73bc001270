"""Bytes and seconds as people write and read them (runners.domain.units)."""

from __future__ import annotations

import pytest

from runners.domain.units import counted, format_bytes, format_seconds, parse_bytes


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
