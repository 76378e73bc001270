"""The sweep spec's command-line flags and the overrides they make: each flag, its older alias
and its help come from its key in the spec's field table (runners.domain.sweep.spec.SPEC_KEYS)."""

from __future__ import annotations

import argparse
from typing import Any, get_args, get_origin

from runners.cli.common import UsageError, size_list
from runners.domain.algorithms.parameters import split_names
from runners.domain.sweep.spec import SPEC_KEYS
from runners.domain.sweep.spec_keys import SpecKey
from runners.domain.units import parse_bytes

FLAGGED = tuple(key for key in SPEC_KEYS if key.flag)  # the spec keys the command line sets


def _sizes_override(text: str) -> list[int] | dict[str, int]:
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise UsageError(f"--sizes range must be MIN:MAX[:FACTOR], got {text!r}")
        keys = ("min", "max", "factor")[: len(parts)]
        try:
            values = [parse_bytes(p) for p in parts[:2]] + [int(p) for p in parts[2:]]
        except ValueError:
            raise UsageError(
                f"--sizes range must be MIN:MAX[:FACTOR] sizes, got {text!r}"
            ) from None
        return dict(zip(keys, values, strict=True))
    return size_list(text)


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _override(key: SpecKey, text: str) -> Any:
    """A flag's text as the TOML-like value of its key (validated by the spec parser)."""
    if key.name == "sizes":
        return _sizes_override(text)
    if key.name == "segment_sizes":
        return size_list(text)
    if get_origin(key.hint) is tuple and get_args(key.hint)[0] is int:
        try:
            return [int(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise UsageError(f"{key.flag} expects comma-separated integers, got {text!r}") from None
    if get_origin(key.hint) is tuple:
        return split_names(text)  # a name's own commas, inside its parentheses, kept
    if key.hint in (int, float):
        try:
            return key.hint(text)
        except ValueError:
            noun = "an integer" if key.hint is int else "a number"
            raise UsageError(f"{key.flag} expects {noun}, got {text!r}") from None
    return text  # a str, or a switch's True


def spec_overrides(args: argparse.Namespace) -> dict:
    """The spec keys given on the command line, parsed to TOML-like values."""
    overrides: dict = {}
    for key in FLAGGED:
        text = getattr(args, _dest(key.flag), None)
        if text is not None:
            overrides[key.name] = _override(key, text)
    return overrides


def add_spec_flags(parser: argparse.ArgumentParser) -> None:
    """Every spec key's flag (and its older alias) on `parser`, with the key's help."""
    for key in FLAGGED:
        names = [key.flag, *([key.alias] if key.alias else [])]
        text = key.help.replace("%", "%%")  # argparse formats help with %
        if key.hint is bool:  # a switch: given, it sets the key true
            parser.add_argument(
                *names, dest=_dest(key.flag), action="store_const", const=True, help=text
            )
        else:
            parser.add_argument(*names, dest=_dest(key.flag), help=text)
