"""The sweep spec's keys as one field table (no MPI, no I/O).

A spec key is a field of SweepSpec (runners.domain.sweep.spec) or of the TimingPolicy nested in it
(runners.domain.sweep.records), declared with `spec_key`: its type is the field's annotation, its
default the field's, and its command-line flag, older alias, help, largest value and whether a
resume may change it are the field's metadata. `keys_of` reads them into the flat table
(SPEC_KEYS) that the spec parser, the TOML writer, the CLI's flags and resume all read; this
module also reads a key's TOML value (`parsed`) and writes it back (`toml_value`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from typing import Any, get_args, get_origin, get_type_hints

from runners.domain.errors import BadInput


class SpecError(BadInput, ValueError):
    """A sweep spec that cannot run; the message lists every problem found."""


@dataclass(frozen=True)
class SpecKey:
    """One key of a sweep spec, as the TOML file, the command line and resume know it."""

    name: str
    hint: Any  # the field's type: int, float, str, bool, tuple[int, ...], tuple[str, ...], ...
    flag: str = ""  # its command-line flag ('' for none)
    help: str = ""  # what it means, for --help
    alias: str = ""  # an older flag name that keeps working
    resumable: bool = False  # how ranks start, or an adaptive budget: --resume may change it
    most: float | None = None  # the largest value a sweep accepts (a typo or an attack beyond)
    parse: Callable[[Any], Any] | None = None  # reads its TOML value where the type does not
    within: str = ""  # the nested record it lives in ('timing'), '' for the spec itself


def spec_key(
    default: Any = MISSING,
    *,
    flag: str = "",
    help: str = "",
    alias: str = "",
    resumable: bool = False,
    most: float | None = None,
    parse: Callable[[Any], Any] | None = None,
) -> Any:
    """A dataclass field that is a spec key (see SpecKey for what each argument says)."""
    meta = {"flag": flag, "help": help, "alias": alias, "resumable": resumable}
    return field(default=default, metadata={"spec_key": meta | {"most": most, "parse": parse}})


def keys_of(record: type) -> tuple[SpecKey, ...]:
    """The flat key table of a spec record, in field order: a nested record (a dataclass
    field) gives its own keys in its place."""
    hints = get_type_hints(record)
    keys: list[SpecKey] = []
    for f in fields(record):
        if is_dataclass(hints[f.name]):
            keys += [replace(key, within=f.name) for key in keys_of(hints[f.name])]
        else:
            keys.append(SpecKey(f.name, hints[f.name], **f.metadata.get("spec_key", {})))
    return tuple(keys)


def parsed(key: SpecKey, raw: Any) -> Any:
    """A key's value from TOML (or a command-line override), checked against its type; a
    key's own parser's ValueError is the spec's error (SpecError, the same words)."""
    if key.parse is not None:
        try:
            return key.parse(raw)
        except SpecError:
            raise
        except ValueError as exc:
            raise SpecError(str(exc)) from None
    if get_origin(key.hint) is tuple:
        return _as_tuple(raw, key.name, get_args(key.hint)[0])
    if key.hint is bool:
        if not isinstance(raw, bool):
            raise SpecError(f"{key.name} must be true or false, got {raw!r}")
        return raw
    if key.hint is str:
        return str(raw)
    return _number(raw, key.name, key.hint)


def _as_tuple(raw: Any, key: str, kind: type) -> tuple:
    items = raw if isinstance(raw, list) else [raw]
    if not items or not all(isinstance(v, kind) and not isinstance(v, bool) for v in items):
        raise SpecError(f"{key} must be a non-empty list of {kind.__name__} values, got {raw!r}")
    return tuple(items)


def _number(value: Any, key: str, kind: type) -> Any:
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SpecError(
            f"{key} must be {'an integer' if kind is int else 'a number'}, got {value!r}"
        )
    return value


def toml_value(value: Any) -> str:
    """A key's value as TOML text that `parsed` reads back equal."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # JSON's string escapes are TOML's (control characters too)
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return repr(value)


def expand_sizes(raw: Any) -> tuple[int, ...]:
    """A list of byte sizes, or {min, max, factor} expanded geometrically (max included)."""
    if isinstance(raw, dict):
        unknown = set(raw) - {"min", "max", "factor"}
        if unknown or not {"min", "max"} <= set(raw):
            raise SpecError("sizes as a table needs min, max and optionally factor (default 2)")
        lo, hi, factor = raw["min"], raw["max"], raw.get("factor", 2)
        if not all(isinstance(v, int) for v in (lo, hi, factor)) or lo < 1 or factor < 2:
            raise SpecError("sizes: min >= 1 and factor >= 2 must be integers")
        if hi < lo:
            raise SpecError(f"sizes: max ({hi}) is below min ({lo})")
        out = []
        while lo <= hi:
            out.append(lo)
            lo *= factor
        return tuple(out)
    if isinstance(raw, list) and raw and all(isinstance(v, int) for v in raw):
        return tuple(raw)
    raise SpecError(f"sizes must be a non-empty list of integers or a min/max table, got {raw!r}")
