"""MPI_T control variables written at run time, through ctypes on the MPI library in use.

mpi4py has no MPI_T bindings; MPICH's libmpi exports them (MPI 3.1): MPI_T_init_thread,
MPI_T_cvar_get_index, MPI_T_cvar_handle_alloc, MPI_T_cvar_write. A `Switch` opens a handle per
control variable once; `apply` writes integers (enum values, booleans), the same on every rank.

`python -m runners.ranks probe` (one rank) prints one JSON line saying whether the running
library can switch the allreduce algorithm at run time, and why not.
"""

from __future__ import annotations

import ctypes
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from mpi4py import MPI

from runners.domain.libraries import short_library_version, switching


class SwitchUnavailable(RuntimeError):
    """The library cannot have these control variables written at run time."""


def _libmpi() -> ctypes.CDLL:
    """The MPI library this process loaded (the one mpi4py uses)."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1] if line.split() else ""
        if Path(path).name.startswith("libmpi.so"):
            return ctypes.CDLL(path)
    raise SwitchUnavailable("no libmpi.so mapped into this process")


class Switch:
    """Handles on named control variables, written with MPI_T_cvar_write."""

    def __init__(self, names: Sequence[str]) -> None:
        self._lib = _libmpi()
        provided = ctypes.c_int()
        self._call("MPI_T_init_thread", MPI.THREAD_SINGLE, ctypes.byref(provided))
        self._handles = {name: self._handle(name) for name in names}

    def _call(self, function: str, *args: object) -> None:
        try:
            code = getattr(self._lib, function)(*args)
        except AttributeError:
            raise SwitchUnavailable(f"the MPI library has no {function}") from None
        if code != 0:
            raise SwitchUnavailable(f"{function} failed with MPI_T error {code}")

    def _handle(self, name: str) -> ctypes.c_void_p:
        index, count, handle = ctypes.c_int(), ctypes.c_int(), ctypes.c_void_p()
        self._call("MPI_T_cvar_get_index", name.encode(), ctypes.byref(index))
        self._call(
            "MPI_T_cvar_handle_alloc", index, None, ctypes.byref(handle), ctypes.byref(count)
        )
        return handle

    def apply(self, values: Mapping[str, int]) -> None:
        """Write every value (an int: enum value or boolean) to its control variable."""
        for name, value in values.items():
            self._call("MPI_T_cvar_write", self._handles[name], ctypes.byref(ctypes.c_int(value)))

    def read(self, name: str) -> int:
        """A control variable's current value."""
        value = ctypes.c_int()
        self._call("MPI_T_cvar_read", self._handles[name], ctypes.byref(value))
        return value.value


def allreduce_switch() -> Switch:
    """The switch for the allreduce algorithm, the settings left as they were; SwitchUnavailable
    when the library's enum order is not the verified one or MPI_T cannot write it."""
    version = short_library_version(MPI.Get_library_version())
    if not switching.supported(version):
        raise SwitchUnavailable(f"{version}: its allreduce cvar values are not verified")
    switch = Switch(switching.CVARS)
    before = {name: switch.read(name) for name in switching.CVARS}
    probe = switching.settings("mpi:ring")
    switch.apply(probe)
    if switch.read(switching.ALGORITHM_CVAR) != probe[switching.ALGORITHM_CVAR]:
        raise SwitchUnavailable("MPI_T_cvar_write did not change the allreduce algorithm")
    switch.apply(before)  # as the launch's environment set them
    return switch


def forced_communicators(
    comm: MPI.Comm, switches: Mapping[str, Mapping[str, int]], defaults: Mapping[str, int]
) -> dict[str, MPI.Comm]:
    """A duplicate of `comm` per algorithm, each made right after writing that algorithm's
    values (Open MPI's coll/tuned reads them when a communicator is created); the control
    variables get `defaults` back at the end."""
    if not switches:
        return {}
    switch = Switch(list(defaults))
    comms = {}
    for algorithm, values in switches.items():
        switch.apply({**defaults, **values})  # nothing forced for another algorithm stays
        comms[algorithm] = comm.Dup()
    switch.apply(defaults)
    return comms


def run(_job: None = None) -> None:
    """Print whether run-time switching works here, as one JSON line
    (`python -m runners.ranks probe`)."""
    try:
        allreduce_switch()
        print(json.dumps({"available": True, "reason": ""}), flush=True)
    except SwitchUnavailable as exc:
        print(json.dumps({"available": False, "reason": str(exc)}), flush=True)
