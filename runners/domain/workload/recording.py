"""What `collsweep record`'s recorder wrote, one file per rank, read back (no MPI).

The recorder (runners/ranks/recorder/collsweep_record.c) writes, per rank, a text file of lines:

    collsweep-record 1
    rank <world rank> <world size> <pid>
    library <MPI_Get_library_version's first line>
    comm <index> <size> <this rank's rank in it> <inter 0|1> world|<world ranks, comma-separated>
    call <collective> <comm index> <bytes> <dtype> <op> <root, -1 where none> <calls>
    other <MPI name>[:inter|:empty] <calls>
    order <call index> <times in a row>
    dropped <calls made after the order was cut>
    end

`call` lines are numbered from 0 in file order; `order` refers to those numbers. Communicator 0
is MPI_COMM_WORLD. `other` counts the collectives the recorder does not record: those collsweep
does not sweep (MPI_Alltoall, MPI_Barrier, the nonblocking ones, ...), a recorded one on an
intercommunicator (`:inter`) or of 0 bytes (`:empty`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runners.domain.collectives.collective import COLLECTIVES, NO_OP
from runners.domain.errors import CollsweepError
from runners.domain.units import counted, format_bytes

HEADER = "collsweep-record 1"
MAX_RECORD_BYTES = 256 * 2**20  # a million order runs is about 20 MB


class RecordError(CollsweepError):
    """A rank's record that cannot be read, or records that do not make one MPI job (exit 1)."""


@dataclass(frozen=True)
class Comm:
    """A communicator one rank made recorded calls on: its size, the rank's rank in it, and its
    members' world ranks in communicator-rank order."""

    size: int
    rank: int
    inter: bool
    members: tuple[int, ...]


@dataclass(frozen=True)
class RecordedCall:
    """One distinct call of one rank: the collective, on which of the rank's communicators,
    the whole vector's bytes, datatype and op names, root (None where none) and how often."""

    collective: str
    comm: int
    nbytes: int
    dtype: str
    op: str
    root: int | None
    calls: int


CallKey = tuple[str, int, str, str, int, int | None]  # collective, bytes, dtype, op, ranks, root


@dataclass(frozen=True)
class RankRecord:
    """Everything one rank's recorder saw."""

    world_rank: int
    world_size: int
    pid: int
    library: str
    comms: tuple[Comm, ...]
    calls: tuple[RecordedCall, ...]
    others: dict[str, int] = field(default_factory=dict)
    order: tuple[tuple[int, int], ...] = ()
    dropped: int = 0

    def key(self, index: int) -> CallKey:
        """The call's key as ranks compare it and a workload counts it."""
        call = self.calls[index]
        size = self.comms[call.comm].size
        return (call.collective, call.nbytes, call.dtype, call.op, size, call.root)


def key_text(key: CallKey) -> str:
    """A call's key in a note: `allreduce 4 B float32 sum`, `bcast 1 KiB float32 root 1`."""
    collective, nbytes, dtype, op, _, root = key
    words = [collective, format_bytes(nbytes), dtype]
    words += [] if op == NO_OP else [op]
    words += [] if root is None else [f"root {root}"]
    return " ".join(words)


def comm_text(members: tuple[int, ...], world_size: int) -> str:
    """A communicator in a note, by its members' world ranks."""
    if members == tuple(range(world_size)):
        return f"the world communicator ({counted(world_size, 'rank')})"
    shown = ",".join(map(str, members[:8])) + (",..." if len(members) > 8 else "")
    return f"the communicator of world ranks {shown} ({counted(len(members), 'rank')})"


# --- reading ------------------------------------------------------------------------------------


def _ints(words: list[str], where: str, least: int = 0) -> list[int]:
    try:
        values = [int(word) for word in words]
    except ValueError:
        raise RecordError(f"{where}: expected integers, got {' '.join(words)!r}") from None
    if any(value < least for value in values):
        raise RecordError(f"{where}: expected integers >= {least}, got {' '.join(words)!r}")
    return values


def _name(word: str, where: str) -> str:
    if not word or len(word) > 40 or not word.isprintable():
        raise RecordError(f"{where}: {word!r} is not a short name")
    return word


def _comm(words: list[str], world_size: int, number: int, where: str) -> Comm:
    if len(words) != 5:
        raise RecordError(f"{where}: a comm line has 5 fields")
    index, size, rank, inter = _ints(words[:4], where)
    if index != number or size < 1 or rank >= size or inter > 1:
        raise RecordError(f"{where}: communicator {index} is malformed")
    if words[4] == "world":
        members = tuple(range(world_size))
    else:
        members = tuple(_ints(words[4].split(","), where, least=-1))
    if len(members) != size:
        raise RecordError(f"{where}: communicator {index} lists {len(members)} of {size} ranks")
    return Comm(size, rank, bool(inter), members)


def _call(words: list[str], comms: int, where: str) -> RecordedCall:
    if len(words) != 7 or words[0] not in COLLECTIVES:
        raise RecordError(f"{where}: a call line is: collective comm bytes dtype op root calls")
    comm, nbytes = _ints(words[1:3], where)
    root, calls = _ints(words[5:7], where, least=-1)
    if comm >= comms or nbytes < 1 or calls < 1:
        raise RecordError(f"{where}: call of an unknown communicator, 0 bytes or no calls")
    rooted = words[0] in ("bcast", "reduce")
    return RecordedCall(
        words[0],
        comm,
        nbytes,
        _name(words[3], where),
        _name(words[4], where),
        root if rooted and root >= 0 else None,
        calls,
    )


def parse_record(text: str, where: str) -> RankRecord:
    """One rank's record; RecordError naming the first line that is not as written above."""
    lines = text.splitlines()
    if not lines or lines[0] != HEADER:
        raise RecordError(f"{where} is not a collsweep recorder file")
    if lines[-1] != "end":
        raise RecordError(f"{where} is cut short (no `end` line)")
    head: dict[str, list[str]] = {}
    comms: list[Comm] = []
    calls: list[RecordedCall] = []
    others: dict[str, int] = {}
    order: list[tuple[int, int]] = []
    for number, line in enumerate(lines[1:-1], start=2):
        at = f"{where}, line {number}"
        kind, _, rest = line.partition(" ")
        words = rest.split()
        if kind in ("rank", "library", "dropped"):
            head[kind] = [rest] if kind == "library" else words
        elif kind == "comm":
            world_size = _ints(head.get("rank", ["0", "0", "0"])[1:2], at, least=1)[0]
            comms.append(_comm(words, world_size, len(comms), at))
        elif kind == "call":
            calls.append(_call(words, len(comms), at))
        elif kind == "other" and len(words) == 2:
            others[_name(words[0], at)] = _ints(words[1:], at, least=1)[0]
        elif kind == "order" and len(words) == 2:
            index, times = _ints(words, at)
            if index >= len(calls) or times < 1:
                raise RecordError(f"{at}: order entry of an unknown call")
            order.append((index, times))
        else:
            raise RecordError(f"{at}: unknown line {line[:60]!r}")
    if len(head.get("rank", [])) != 3 or len(head.get("dropped", [])) != 1 or not comms:
        raise RecordError(f"{where} lacks its rank, dropped or communicator lines")
    rank, size, pid = _ints(head["rank"], where)
    if size < 1 or rank >= size:
        raise RecordError(f"{where}: world rank {rank} of {size}")
    return RankRecord(
        rank,
        size,
        pid,
        head.get("library", [""])[0].strip(),
        tuple(comms),
        tuple(calls),
        others,
        tuple(order),
        _ints(head["dropped"], where)[0],
    )


def read_records(folder: Path) -> list[RankRecord]:
    """Every rank's record in `folder`, by world rank; RecordError when there is none, when one
    cannot be read, or when they come from more than one MPI job."""
    records: dict[int, RankRecord] = {}
    for path in sorted(folder.glob("rank-*.txt")):
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise RecordError(f"recorder file {path.name} is larger than 256 MiB")
        record = parse_record(path.read_text(encoding="utf-8", errors="replace"), path.name)
        prior = records.get(record.world_rank)
        if prior is not None or (records and record.world_size != _any(records).world_size):
            raise RecordError(
                "the command started more than one MPI job (two records of world rank "
                f"{record.world_rank}, or of different world sizes): record one job at a time"
            )
        records[record.world_rank] = record
    if not records:
        raise RecordError(
            "the recorder saw no MPI rank: the program did not initialise MPI, was not "
            "dynamically linked with this MPI library, or the launcher did not pass LD_PRELOAD "
            "on to the ranks"
        )
    return [records[rank] for rank in sorted(records)]


def _any(records: dict[int, RankRecord]) -> RankRecord:
    return next(iter(records.values()))


def other_note(name: str, calls: int) -> str:
    """Why calls the recorder only counted are not in the workload."""
    base, _, qualifier = name.partition(":")
    times = counted(calls, "call")
    if qualifier == "inter":
        return f"{base} on an intercommunicator: {times}, not recorded"
    if qualifier == "empty":
        return f"{base} of 0 bytes: {times}, not recorded"
    if base.startswith("MPI_I"):
        return f"{base}: {times}, not recorded: nonblocking collectives are counted only"
    return f"{base}: {times}, not recorded: collsweep does not sweep it"
