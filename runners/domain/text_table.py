"""Plain-text tables for the terminal: columns left-aligned, two spaces apart (pure)."""

from __future__ import annotations

from collections.abc import Sequence


def aligned_lines(table: Sequence[Sequence[object]], indent: str = "  ") -> list[str]:
    """One line per row (the header is a row like the others), each cell padded to its
    column's widest, trailing blanks dropped."""
    widths = [max(len(str(row[i])) for row in table) for i in range(len(table[0]))]
    return [
        indent + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
