"""Start the dashboard: ``streamlit run dashboard/asgi.py`` on 127.0.0.1 against one store.

`serve` is what ``collsweep dashboard`` calls. asgi.py serves app.py behind a Host-header check
(dashboard.hostcheck). The store reaches the app twice, as ``--store`` after ``--`` and as
$COLLSWEEP_STORE. Started by hand, use ``streamlit run dashboard/asgi.py --server.address
127.0.0.1``; anything else makes the app warn on every page.
Once the server answers, `serve` runs the app once through Streamlit's script health check:
that first run of app.py (its st.navigation) switches Streamlit off its legacy pages/-folder
mode, so even the first visitor's deep link (/curves?run=...) opens the right page.
This module imports neither Streamlit nor MPI.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from runners.process.children import python
from runners.process.lifetime import dies_with_parent

APP = Path(__file__).resolve().parent / "app.py"
ASGI = Path(__file__).resolve().parent / "asgi.py"
HOST = "127.0.0.1"
DEFAULT_PORT = 8501


def streamlit_command(store: Path, port: int = DEFAULT_PORT, open_browser: bool = False):
    """The command line that serves the app on 127.0.0.1:``port`` for ``store``.

    Headless unless ``open_browser``; no usage statistics, no file watcher, no run-on-save,
    no Deploy button.
    """
    return [
        *python("-m"),
        "streamlit",
        "run",
        str(ASGI),
        "--server.address",
        HOST,
        "--server.port",
        str(int(port)),
        "--server.headless",
        "false" if open_browser else "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        "--server.scriptHealthCheckEnabled",
        "true",
        "--client.toolbarMode",
        "minimal",
        "--",
        "--store",
        str(store),
    ]


def serve_env(store: Path) -> dict[str, str]:
    """This process's environment with COLLSWEEP_STORE set to ``store``."""
    return {**os.environ, "COLLSWEEP_STORE": str(store)}


def serve(store: Path, port: int = DEFAULT_PORT, open_browser: bool = False) -> int:
    """Serve the dashboard for ``store`` until interrupted; return the exit status.

    The store is made absolute so the app finds it whatever its working directory. A missing
    or unreadable store still starts the app, which then says what is wrong. Ctrl+C (or
    SIGTERM) stops the server too, and so does this process's death, however it dies (Linux).
    """
    store = Path(store).expanduser().resolve()
    print(f"collsweep dashboard: starting on http://{HOST}:{port} for {store}", flush=True)
    command = streamlit_command(store, port, open_browser)
    proc = subprocess.Popen(command, env=serve_env(store), preexec_fn=dies_with_parent())
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        if warm_up(port, proc):
            print(f"collsweep dashboard: ready at http://{HOST}:{port}", flush=True)
        return proc.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """Stop the server if it is still running."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _get(url: str, timeout: float) -> bytes:
    """GET ``url`` directly (never through a proxy from the environment)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as response:
        return response.read()


def wait_until_up(port: int, proc: subprocess.Popen | None = None, timeout: float = 60.0) -> bool:
    """Poll the server's health endpoint until it answers 'ok' (False on timeout or exit)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            if _get(f"http://{HOST}:{port}/_stcore/health", 2.0).strip() == b"ok":
                return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def warm_up(port: int, proc: subprocess.Popen | None = None, timeout: float = 60.0) -> bool:
    """Wait for the server, then run app.py once via the script health check (see above).

    True once the server answers; the script run itself is best effort.
    """
    if not wait_until_up(port, proc, timeout):
        return False
    with contextlib.suppress(OSError):
        _get(f"http://{HOST}:{port}/_stcore/script-health-check", timeout)
    return True


def store_from_args(argv: Sequence[str]) -> Path | None:
    """The ``--store`` given to the app (argv as `streamlit run app.py -- --store X` sets it).

    None unless argv[0] is this package's app.py (under pytest, argv is pytest's).
    """
    if not argv or Path(argv[0]).name != APP.name:
        return None
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--store")
    known, _ = parser.parse_known_args(list(argv[1:]))
    return Path(known.store) if known.store else None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dashboard.serve [--store PATH] [--port N] [--open]``."""
    from runners.store import default_store

    parser = argparse.ArgumentParser(prog="python -m dashboard.serve", description=__doc__)
    parser.add_argument("--store", help="results store (default: $COLLSWEEP_STORE or data/...)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--open", action="store_true", help="open a browser")
    args = parser.parse_args(argv)
    return serve(Path(args.store) if args.store else default_store(), args.port, args.open)


if __name__ == "__main__":
    sys.exit(main())
