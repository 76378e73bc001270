"""Every command's --help reads as written: no doubled percent signs, no line over 120."""

from __future__ import annotations

import argparse

import pytest

from runners.cli.main import COMMANDS, build_parser


def _help_of(command: str) -> str:
    parser = build_parser(command)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices[command].format_help()


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_escaped_percent_and_no_long_line(command: str) -> None:
    text = _help_of(command)
    assert "%%" not in text
    assert max(map(len, text.splitlines())) <= 120
