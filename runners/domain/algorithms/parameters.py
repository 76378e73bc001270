"""An algorithm's parameters in its name: the one home of the format (pure).

A family of algorithms that differ by a parameter (the node size of a hierarchical allreduce;
a segment size or a radix) is one `Family`; each member is named `family(key=value,...)`,
its parameters in the family's declared order, a parameter at its default left out, so one
member has one name in every table, chart, export and tuning file (`hierarchical(node=2)`).
A parameter may be taken from the sweep (`from_run`: the spec key that gives it, such as
`ranks_per_node`) when the name leaves it out. A size is written in the largest binary unit it
is a whole number of (`segment=64KiB`; `65536` and `64K` name the same member). A parameter
that allows it may be `auto`: the name then stands in (`Family.stand_in`) until a sweep
chooses the members at each point (runners.analysis.auto_parameters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.units import parse_bytes

OPEN, CLOSE, EQUALS, BETWEEN = "(", ")", "=", ","
MAX_INTEGER = 1 << 20
BYTES = "bytes"  # a parameter's unit: a size, written `64KiB`
AUTO = "auto"  # a value the sweep chooses: the model's best at each point and its neighbours
MAX_BYTES = 1 << 40
_BYTE_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def bytes_written(nbytes: int) -> str:
    """A size as a member's name writes it: the largest binary unit it is a whole number of
    (`64KiB`, `1MiB`, `1000`)."""
    for unit, size in _BYTE_UNITS:
        if nbytes % size == 0:
            return f"{nbytes // size}{unit}"
    return str(nbytes)


@dataclass(frozen=True)
class Parameter:
    """One parameter of a family: its name, its allowed values (() for a positive integer),
    its default ("" for none: the name must give it, or the run), the spec key giving it."""

    name: str
    choices: tuple[str, ...] = ()
    default: str = ""
    from_run: str = ""
    minimum: int = 1  # an integer parameter's smallest value (in bytes for a size)
    unit: str = ""  # BYTES for a size (`64KiB`, `65536`); "" for a plain integer
    auto: bool = False  # whether `auto` may name it (a sweep then chooses it per point)

    def parsed(self, text: str) -> str:
        """`text` as this parameter's canonical value; ValueError saying what is allowed."""
        text = text.strip()
        if self.auto and text == AUTO:
            return AUTO
        if self.choices:
            if text not in self.choices:
                raise ValueError(f"{self.name} must be one of {', '.join(self.choices)}")
            return text
        if self.unit == BYTES:
            return bytes_written(self._size(text))
        if not text.isdigit() or not self.minimum <= int(text) <= MAX_INTEGER:
            raise ValueError(f"{self.name} must be an integer from {self.minimum} to {MAX_INTEGER}")
        return str(int(text))

    def number(self, canonical: str) -> int:
        """A canonical integer value as a number (a size in bytes)."""
        return parse_bytes(canonical) if self.unit == BYTES else int(canonical)

    def _size(self, text: str) -> int:
        try:
            nbytes = parse_bytes(text)
        except ValueError:
            nbytes = -1
        if not self.minimum <= nbytes <= MAX_BYTES:
            low = bytes_written(self.minimum)
            raise ValueError(f"{self.name} must be a size from {low} to 1TiB (e.g. 64KiB)")
        return nbytes


@dataclass(frozen=True)
class Family:
    """Algorithms that differ by their parameters: `build` makes a member's descriptor from
    its canonical name and its values (every parameter given)."""

    name: str
    parameters: tuple[Parameter, ...]
    build: Callable[[str, Mapping[str, str]], AlgorithmSpec]
    help: str = ""
    example_values: tuple[tuple[str, str], ...] = ()  # a member's values, for what all share

    @property
    def example(self) -> AlgorithmSpec:
        """One member's descriptor (what every member shares: collective, library)."""
        values = self.values(dict(self.example_values), {})
        return self.build(self.member_name(values), values)

    @property
    def pattern(self) -> str:
        """How a member is written, for messages: `hierarchical(node=N,leaders=...)`."""
        shown = (f"{p.name}={'|'.join(p.choices) or _placeholder(p)}" for p in self.parameters)
        return f"{self.name}({BETWEEN.join(shown)})"

    def values(self, given: Mapping[str, str], run: Mapping[str, object]) -> dict[str, str]:
        """Every parameter's canonical value: given, else from the run, else its default;
        ValueError naming what is unknown, missing or out of range."""
        unknown = sorted(set(given) - {p.name for p in self.parameters})
        if unknown:
            raise ValueError(f"{self.name} has no parameter {', '.join(unknown)}")
        out = {}
        for parameter in self.parameters:
            text = given.get(parameter.name)
            if text is None and parameter.from_run and run.get(parameter.from_run):
                text = str(run[parameter.from_run])
            text = text if text is not None else parameter.default
            if not text:
                how = f" (or {parameter.from_run} in the sweep)" if parameter.from_run else ""
                raise ValueError(f"{self.name} needs {parameter.name}=...{how}")
            out[parameter.name] = parameter.parsed(text)
        if list(out.values()).count(AUTO) > 1:
            raise ValueError(f"{self.name}: name one parameter auto at a time")
        return out

    def stand_in(self, name: str, values: Mapping[str, str]) -> AlgorithmSpec:
        """The descriptor standing for a name with `auto` values until a sweep chooses them:
        what every member shares (collective, library), no schedule, nothing that forces."""
        concrete = {k: self._default(k) if v == AUTO else v for k, v in values.items()}
        member = self.build(self.member_name(concrete), concrete)
        chosen = ", ".join(k for k, v in values.items() if v == AUTO)
        return replace(
            member, name=name, auto=True, schedule=None, schedule_by_itemsize=None,
            settings=(), modelled_by="",
            description=f"{self.help}: {chosen} chosen by `collsweep sweep` at each point, the "
            "model's best on the run's calibration and its neighbours by a factor of 2",
        )  # fmt: skip

    def _default(self, name: str) -> str:
        parameter = next(p for p in self.parameters if p.name == name)
        return parameter.default or dict(self.example_values)[name]

    def member_name(self, values: Mapping[str, str]) -> str:
        """The canonical name of the member with these values (defaults left out)."""
        shown = {p.name: values[p.name] for p in self.parameters if values[p.name] != p.default}
        return written(self.name, shown)


def _placeholder(parameter: Parameter) -> str:
    return "SIZE" if parameter.unit == BYTES else "N"


def written(family: str, given: Mapping[str, str]) -> str:
    """A name of `family` giving these parameters, in this order (`ring` when none)."""
    shown = BETWEEN.join(f"{key}{EQUALS}{value}" for key, value in given.items())
    return f"{family}{OPEN}{shown}{CLOSE}" if shown else family


def member_of(name: str, families: Mapping[str, Family]) -> AlgorithmSpec | None:
    """The descriptor of the family member of this canonical name, or None (not a family's,
    malformed, out of range, or not written canonically)."""
    try:
        family, given = split_name(name)
        found = families.get(family)
        values = found.values(given, {}) if found else None
    except ValueError:
        return None
    if found is None or values is None or found.member_name(values) != name:
        return None
    if AUTO in values.values():
        return found.stand_in(name, values)
    return found.build(name, values)


def split_name(name: str) -> tuple[str, dict[str, str]]:
    """A name's family and the parameters it gives (`ring` -> ('ring', {})); ValueError for a
    malformed one."""
    name = name.strip()
    if OPEN not in name:
        return name, {}
    family, _, rest = name.partition(OPEN)
    if not rest.endswith(CLOSE) or OPEN in rest or not family:
        raise ValueError(f"malformed algorithm name {name!r}: write family(key=value,...)")
    given: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest[:-1].split(BETWEEN))):
        key, equals, value = part.partition(EQUALS)
        if not equals or not key.strip() or key.strip() in given:
            raise ValueError(f"malformed parameter {part!r} in {name!r}: write key=value once")
        given[key.strip()] = value.strip()
    return family.strip(), given


def split_names(text: str) -> list[str]:
    """A comma-separated list of names, the commas inside a name's parentheses kept:
    `ring,hierarchical(node=2,leaders=ring)` is two names."""
    names, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {OPEN: 1, CLOSE: -1}.get(char, 0)
        if char == BETWEEN and depth == 0:
            names.append(text[start:i])
            start = i + 1
    names.append(text[start:])
    return [n.strip() for n in names if n.strip()]


@dataclass(frozen=True)
class ParameterCurve:
    """Members of one family that differ by one integer parameter alone: the family, that
    parameter, the others' values, and each value's member name (at least two)."""

    family: str
    parameter: str
    fixed: tuple[tuple[str, str], ...]
    members: tuple[tuple[int, str], ...]
    unit: str = ""  # BYTES where the values are sizes

    def value_text(self, value: int) -> str:
        """One value as a member's name writes it (`64KiB` for a size)."""
        return bytes_written(value) if self.unit == BYTES else str(value)

    @property
    def title(self) -> str:
        """`knomial by radix` (with the fixed values where there are any)."""
        fixed = ", ".join(f"{k}={v}" for k, v in self.fixed)
        return f"{self.family} by {self.parameter}" + (f" ({fixed})" if fixed else "")


def parameter_curves(names: Iterable[str], families: Mapping[str, Family]) -> list[ParameterCurve]:
    """The curves a set of algorithm names holds: for each family and integer parameter, the
    members that agree on every other parameter, when two or more values were swept."""
    found: dict[tuple[str, Parameter, tuple[tuple[str, str], ...]], dict[int, str]] = {}
    for name in names:
        family_name, given = split_name(name)
        family = families.get(family_name)
        if family is None:
            continue
        values = family.values(given, {}) if _complete(family, given) else None
        if values is None or AUTO in values.values():
            continue
        for parameter in (p for p in family.parameters if not p.choices):
            fixed = tuple((k, v) for k, v in values.items() if k != parameter.name)
            found.setdefault((family_name, parameter, fixed), {})[
                parameter.number(values[parameter.name])
            ] = name
    return [
        ParameterCurve(family, p.name, fixed, tuple(sorted(members.items())), p.unit)
        for (family, p, fixed), members in found.items()
        if len(members) > 1
    ]


def _complete(family: Family, given: Mapping[str, str]) -> bool:
    """Whether `given` names every parameter without a default (so its values need no run)."""
    return all(p.default or p.name in given for p in family.parameters)
