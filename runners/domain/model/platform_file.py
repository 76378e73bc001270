"""Platform files (TOML, docs/guide/simulation.md) read into a Platform, every key checked: a
file that describes no machine is PlatformError, one line (pure: the file's text in, no
SimGrid)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from runners.domain.model.platform import (
    MAX_FILE_BYTES,
    Dragonfly,
    Link,
    Platform,
    PlatformError,
    checked,
)

# --- files --------------------------------------------------------------------------------------


def load_platform(path: Path) -> Platform:
    """A platform file (TOML), checked; PlatformError for anything it cannot be."""
    try:
        if not path.is_file():
            raise PlatformError(f"{path}: not a platform file (no such regular file)")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise PlatformError(f"{path}: over {MAX_FILE_BYTES} bytes, too large for a platform")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlatformError(f"cannot read platform {path}: {exc}") from None
    return parse_platform(text, path.stem)


def parse_platform(text: str, default_name: str) -> Platform:
    """A platform from its TOML text (keys: docs/guide/simulation.md)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlatformError(f"platform {default_name}: not TOML ({exc})") from None
    unknown = set(raw) - set(_KEYS)
    if unknown:
        raise PlatformError(
            f"platform {default_name}: unknown key {sorted(unknown)[0]!r}; known: "
            f"{', '.join(_KEYS)}"
        )
    topology = _text(raw, "topology", "crossbar")
    for table in ("fat_tree", "torus", "dragonfly"):
        if table in raw and table != topology:
            raise PlatformError(
                f"platform {default_name}: [{table}] given, but topology is {topology!r}"
            )
    inside = raw.get("intra_node")
    return checked(
        Platform(
            name=_text(raw, "name", default_name),
            topology=topology,
            link=_link(raw.get("link"), "link"),
            gamma_s_per_byte=_number(raw, "gamma_ns_per_byte", 1.0) * 1e-9,
            ranks_per_node=int(_number(raw, "ranks_per_node", 1)),
            intra_node=None if inside is None else _link(inside, "intra_node"),
            source=_text(raw, "source", ""),
            fat_tree=_fat_tree(raw.get("fat_tree")) if topology == "fat_tree" else None,
            torus=_torus(raw.get("torus")) if topology == "torus" else None,
            dragonfly=_dragonfly(raw.get("dragonfly")) if topology == "dragonfly" else None,
        )
    )


_KEYS = (
    "name",
    "source",
    "topology",
    "ranks_per_node",
    "gamma_ns_per_byte",
    "link",
    "intra_node",
    "fat_tree",
    "torus",
    "dragonfly",
)


def _text(raw: dict[str, Any], key: str, default: str) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or len(value) > 2000:
        raise PlatformError(f"platform key {key}: give a string (at most 2000 characters)")
    return value


def _number(raw: dict[str, Any], key: str, default: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PlatformError(f"platform key {key}: give a number, not {value!r}")
    return float(value)


def _link(raw: Any, what: str) -> Link:
    if not isinstance(raw, dict) or set(raw) != {"latency_us", "bandwidth_GBps"}:
        raise PlatformError(f"platform [{what}]: give latency_us and bandwidth_GBps, nothing else")
    return Link(
        _number(raw, "latency_us", 0) * 1e-6,
        _number(raw, "bandwidth_GBps", 0) * 1e9,
    )


def _counts(raw: dict[str, Any], key: str, length: int | None) -> tuple[int, ...]:
    value = raw.get(key)
    if (
        not isinstance(value, list)
        or not value
        or any(isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 4096 for v in value)
        or (length is not None and len(value) != length)
    ):
        wanted = f"{length} " if length is not None else ""
        raise PlatformError(f"platform key {key}: give a list of {wanted}whole numbers 1..4096")
    return tuple(value)


def _fat_tree(raw: Any) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    if not isinstance(raw, dict) or set(raw) != {"levels", "down", "up", "link_count"}:
        raise PlatformError("platform [fat_tree]: give levels, down, up and link_count")
    levels = int(_number(raw, "levels", 0))
    if not 1 <= levels <= 6:
        raise PlatformError("platform [fat_tree] levels: give 1 to 6")
    return (
        levels,
        _counts(raw, "down", levels),
        _counts(raw, "up", levels),
        _counts(raw, "link_count", levels),
    )


def _torus(raw: Any) -> tuple[int, ...]:
    if not isinstance(raw, dict) or set(raw) != {"dimensions"}:
        raise PlatformError("platform [torus]: give dimensions")
    return _counts(raw, "dimensions", None)


DRAGONFLY_KEYS = {"groups", "chassis", "routers", "nodes"}


def _dragonfly(raw: Any) -> Dragonfly:
    """[dragonfly]: groups, chassis and routers as [count, links between two of them], nodes a
    router; SimGrid's route to another group leaves from the router numbered as that group,
    so a chassis needs a router for every group."""
    if not isinstance(raw, dict) or set(raw) != DRAGONFLY_KEYS:
        raise PlatformError("platform [dragonfly]: give groups, chassis, routers and nodes")
    groups, chassis, routers = (_counts(raw, key, 2) for key in ("groups", "chassis", "routers"))
    nodes = _counts({"nodes": [raw["nodes"]]}, "nodes", 1)[0]
    if routers[0] < groups[0]:
        raise PlatformError(
            f"platform [dragonfly]: {groups[0]} groups need at least {groups[0]} routers a "
            f"chassis (a group's link to each other group leaves from its router of that number)"
        )
    return (groups[0], groups[1]), (chassis[0], chassis[1]), (routers[0], routers[1]), nodes
