"""A calibration's id (and source) and a gamma's key as types, formatted and parsed here only.

The forms a store holds (calibrations.calibration_id and .source, runs.calibration_id,
predictions.calibration_id, model_accuracy.calibration_id):

- `c20261201-192000-ab12`: made by `collsweep calibrate` (or before a sweep), kind CALIBRATE;
  the text is its `job`; its source is fitting.PINGPONG_SOURCE
- `launch:<run>:<job>:<launch>`: one launch's own (the sweep job's label, the launch index);
  its source `launch:<run>`
- `launches:<run>`: a run's launches' calibrations combined (id and source)
- `fitted:<run>`: fitted to a run's own timings (id and source)
- `imported:<run>`: an imported run's, from its tool's file; its source `imported:<tool>`
- `platform:<run>`: a simulated run's platform (its network link's alpha and beta, its
  gammas); its source `platform:<platform name>`

each ending with its library's suffix (LibrarySpec.calibration_suffix: `@openmpi`, `@impi`;
none for MPICH) when another library's ranks measured it. Pure: no MPI, no I/O.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum

from runners.domain.libraries import DEFAULT, LIBRARIES

SEPARATOR = ":"  # between a kind and its run, and the parts of a launch's id


class CalibrationKind(StrEnum):
    """Where a calibration comes from (the word its id starts with; none for CALIBRATE)."""

    CALIBRATE = "calibrate"  # a ping-pong calibration job's (collsweep calibrate)
    LAUNCH = "launch"  # one launch of a sweep measured it on its own ranks
    LAUNCHES = "launches"  # a run's launches' calibrations combined
    FITTED = "fitted"  # fitted to a run's own collective timings
    IMPORTED = "imported"  # fitted from an imported file's ping-pong and reductions
    PLATFORM = "platform"  # the modelled platform a simulated run ran on (nothing measured)

    @property
    def prefix(self) -> str:
        """What ids of this kind start with ('' for CALIBRATE), e.g. 'fitted:'."""
        return "" if self is CalibrationKind.CALIBRATE else f"{self.value}{SEPARATOR}"

    @property
    def caveat(self) -> str:
        """What a reader of this kind's predictions must know ('' for none): a fitted one
        predicts the very points it was fitted on, so their agreement tests no model."""
        return "fitted on the same points it predicts" if self is CalibrationKind.FITTED else ""


_PREFIXED = tuple(kind for kind in CalibrationKind if kind.prefix)


@dataclass(frozen=True)
class CalibrationId:
    """One calibration's id. `run`: the run it belongs to (an imported source's: the tool);
    `job`: the sweep job of a launch's, or a calibration job's own name; `launch`: the index
    of a launch's; `library`: the library whose ranks measured it."""

    kind: CalibrationKind
    run: str = ""
    job: str = ""
    launch: int | None = None
    library: str = DEFAULT.name

    def __str__(self) -> str:
        suffix = LIBRARIES[self.library].calibration_suffix
        if self.kind is CalibrationKind.CALIBRATE:
            return f"{self.job}{suffix}"
        body = self.run
        if self.launch is not None:
            body = SEPARATOR.join((self.run, self.job, str(self.launch)))
        return f"{self.kind.prefix}{body}{suffix}"

    @classmethod
    def parse(cls, text: str) -> CalibrationId:
        """The id `text` names; text without a kind's prefix is a calibration job's. Raises
        ValueError for a launch's id that is not `launch:<run>[:<job>:<launch>]`."""
        body, library = _without_suffix(text)
        kind = next((k for k in _PREFIXED if body.startswith(k.prefix)), CalibrationKind.CALIBRATE)
        if kind is CalibrationKind.CALIBRATE:
            return cls(kind, job=body, library=library)
        body = body.removeprefix(kind.prefix)
        if kind is not CalibrationKind.LAUNCH or SEPARATOR not in body:
            return cls(kind, run=body, library=library)
        run, _, rest = body.partition(SEPARATOR)
        job, _, launch = rest.rpartition(SEPARATOR)
        if not launch.isdigit() or not job:
            raise ValueError(f"a launch's calibration id is launch:<run>:<job>:<index>: {text!r}")
        return cls(kind, run=run, job=job, launch=int(launch), library=library)

    @classmethod
    def new_job(cls, now: datetime | None = None) -> CalibrationId:
        """A new calibration job's id: short, unique, sorting by creation time
        (c20261201-192000-ab12)."""
        stamp = (now or datetime.now(UTC)).strftime("c%Y%m%d-%H%M%S-")
        return cls(CalibrationKind.CALIBRATE, job=stamp + secrets.token_hex(2))

    @classmethod
    def imported_source(cls, tool: str) -> CalibrationId:
        """The source of an imported run's calibration: the tool whose file it came from."""
        return cls(CalibrationKind.IMPORTED, run=tool)

    def source(self) -> CalibrationId:
        """The source of a launch's calibration (launch:<run> and the suffix); else itself."""
        return replace(self, job="", launch=None) if self.launch is not None else self

    def on_library(self, library: str) -> CalibrationId:
        """The same calibration measured on another library's ranks (its own namesake)."""
        return replace(self, library=library)


def with_caveat(calibration_id: str) -> str:
    """The id as a reader sees it: with its kind's caveat where it has one
    ('fitted:<run>@nccl (fitted on the same points it predicts)')."""
    caveat = CalibrationId.parse(calibration_id).kind.caveat
    return f"{calibration_id} ({caveat})" if caveat else calibration_id


def own_calibrations(calibration_id: str | None) -> list[str] | None:
    """The calibration and its namesakes measured on every library's ranks (`<id>`,
    `<id>@openmpi`, ...): each library's points are predicted with its own; None for None."""
    if calibration_id is None:
        return None
    parsed = CalibrationId.parse(calibration_id)
    return [str(parsed.on_library(name)) for name in LIBRARIES]


def library_free(calibration_id: str) -> str:
    """The id without its library's suffix: the MPICH namesake other libraries' come with."""
    return str(CalibrationId.parse(calibration_id).on_library(DEFAULT.name))


# The same in SQL: regexp_replace(id, LIBRARY_SUFFIX_PATTERN, '') is library_free(id); a
# query binds it as a parameter.
_SUFFIXES = [lib.calibration_suffix for lib in LIBRARIES.values() if lib.calibration_suffix]
LIBRARY_SUFFIX_PATTERN = "(" + "|".join(map(re.escape, _SUFFIXES)) + ")$"


def _without_suffix(text: str) -> tuple[str, str]:
    """The id without its library suffix, and that library's name (MPICH without one)."""
    for lib in LIBRARIES.values():
        if lib.calibration_suffix and text.endswith(lib.calibration_suffix):
            return text.removesuffix(lib.calibration_suffix), lib.name
    return text, DEFAULT.name


@dataclass(frozen=True)
class GammaKey:
    """The key of one gamma in a calibration's gammas: its dtype and op ('float64/sum')."""

    dtype: str
    op: str

    def __str__(self) -> str:
        return f"{self.dtype}/{self.op}"

    @classmethod
    def parse(cls, text: str) -> GammaKey:
        """The key `text` names (`<dtype>/<op>`)."""
        dtype, sep, op = text.partition("/")
        if not sep or not dtype or not op:
            raise ValueError(f"a gamma's key is <dtype>/<op>: {text!r}")
        return cls(dtype, op)
