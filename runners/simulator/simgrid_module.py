"""Finding SimGrid's Python module: pip's `simgrid`, else Debian's `python3-simgrid`.

Debian installs the module into the system Python's dist-packages, which a virtual
environment does not see. Only that one file is loaded from there (not the whole folder on
sys.path, which would let the system's other packages shadow the environment's).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from runners.domain.errors import BadInput

DEBIAN_FOLDER = Path("/usr/lib/python3/dist-packages")
INSTALL_HINT = "apt-get install python3-simgrid (Debian) or pip install simgrid"


def simgrid() -> ModuleType:
    """The simgrid module (BadInput, one line, when it is installed nowhere)."""
    if "simgrid" in sys.modules:
        return sys.modules["simgrid"]
    with _quiet_stderr():  # its import says which thread contexts it uses, every time
        return _load()


def _load() -> ModuleType:
    try:
        return importlib.import_module("simgrid")
    except ImportError:
        pass
    found = _debian_module()
    if found is None:
        raise BadInput(f"SimGrid is not installed: {INSTALL_HINT}")
    loader = importlib.machinery.ExtensionFileLoader("simgrid", str(found))
    spec = importlib.util.spec_from_file_location("simgrid", found, loader=loader)
    if spec is None:
        raise BadInput(f"cannot load SimGrid from {found}: {INSTALL_HINT}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules["simgrid"] = module
    return module


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 sent to /dev/null for the block (SimGrid's C++ writes there)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _debian_module() -> Path | None:
    """Debian's build of the module for this Python, if installed."""
    tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}"
    found = sorted(DEBIAN_FOLDER.glob(f"simgrid.{tag}-*.so"))
    return found[0] if found else None


def version() -> str:
    """SimGrid's version, e.g. '3.32.0'."""
    return str(simgrid().simgrid_version)
