"""A run's name and tags: what people call a run, beside its id (pure: no store, no MPI).

One rule wherever a name or tag enters (`sweep --name/--tag`, `collsweep tag`, `submit`, a
merged shard's rows): a name is at most 200 printable characters (no control characters, no
line breaks: it is printed in one-line tables and headers); a tag is 1-64 letters, digits, '.',
'_', '-' or ':', and a run has at most 32. Bad values are bad input (exit 2), refused before
anything is written. `run_title` is how every command and page names a run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from runners.domain.errors import BadInput

NAME_MAX = 200
TAG = re.compile(r"[A-Za-z0-9._:-]{1,64}")
TAG_RULE = "1-64 letters, digits, '.', '_', '-' or ':'"
MAX_TAGS = 32


class BadLabel(BadInput):
    """A run name or tag that breaks the rule (exit 2, nothing written)."""


def name_problem(name: object) -> str | None:
    """Why `name` cannot name a run, or None ('' is no name)."""
    if not isinstance(name, str):
        return f"a run name must be text, got {name!r}"
    if len(name) > NAME_MAX:
        return f"a run name is at most {NAME_MAX} characters, got {len(name)}"
    if not name.isprintable():
        return f"a run name cannot hold a control character or line break: {name!r}"
    return None


def checked_name(name: str | None) -> str | None:
    """The name without surrounding spaces (None for no name, or an empty one); BadLabel when
    it breaks the rule."""
    if name is None:
        return None
    problem = name_problem(name)
    if problem:
        raise BadLabel(problem)
    return name.strip() or None


def tag_problem(tag: object) -> str | None:
    """Why `tag` cannot be a tag, or None."""
    if isinstance(tag, str) and TAG.fullmatch(tag):
        return None
    return f"a tag must be {TAG_RULE}, got {tag!r}"


def checked_tags(tags: Iterable[str]) -> list[str]:
    """The tags in order, each once; BadLabel for a bad tag or more than MAX_TAGS."""
    out: list[str] = []
    for tag in tags:
        problem = tag_problem(tag)
        if problem:
            raise BadLabel(problem)
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise BadLabel(f"a run has at most {MAX_TAGS} tags, got {len(out)}")
    return out


def labels_problem(name: object, tags: object) -> str | None:
    """Why a stored (name, tags) pair breaks the rule (a shard's rows), or None."""
    problem = None if name is None else name_problem(name)
    if problem:
        return problem
    try:
        checked_tags(stored_tags(tags))
    except (BadLabel, ValueError) as exc:
        return str(exc)
    return None


def stored_tags(value: Any) -> list[str]:
    """The tags of a runs row's `tags` column: a JSON list (text or decoded), or none."""
    if value is None or (isinstance(value, float) and value != value):
        return []
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else []
    if not isinstance(value, list | tuple) and not hasattr(value, "tolist"):
        raise ValueError(f"a run's tags are a JSON list, got {value!r}")
    return [str(tag) for tag in (value.tolist() if hasattr(value, "tolist") else value)]


def run_title(run_id: str, name: object = None, tags: Any = None) -> str:
    """How a run is named wherever it is listed or picked: 'name (run id)' when named, else
    the id; its tags after it in brackets ('nightly (r2026...) [ci, mpich]')."""
    named = name if isinstance(name, str) and name else ""
    title = f"{named} ({run_id})" if named else str(run_id)
    listed = stored_tags(tags)
    return f"{title} [{', '.join(listed)}]" if listed else title
