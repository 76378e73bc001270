"""`collsweep dashboard`: the Streamlit dashboard over the store."""

from __future__ import annotations

import argparse
import errno
import signal
import socket
import subprocess

from runners.cli.common import (
    UsageError,
    add_store_option,
    store_path,
)
from runners.process.children import python
from runners.process.lifetime import dies_with_parent


def run(args: argparse.Namespace) -> int:
    """Serve the Streamlit dashboard on 127.0.0.1 for one store (python -m dashboard.serve)."""
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port must be 1..65535, got {args.port}")
    taken = port_in_use(args.port)
    if taken:
        raise UsageError(f"port {args.port} on {HOST} is {taken}: choose another with --port")
    command = python("-m", "dashboard.serve", "--store", str(store_path(args)))
    command += ["--port", str(args.port), *(["--open"] if args.open else [])]
    server = subprocess.Popen(command, preexec_fn=dies_with_parent())  # SIGKILL of us too
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())  # serve stops Streamlit too
    try:
        return server.wait()
    except KeyboardInterrupt:
        server.send_signal(signal.SIGINT)  # a terminal's Ctrl-C reached it already; no harm
        server.wait()
        return 130


HOST = "127.0.0.1"  # the dashboard never listens on any other address


def port_in_use(port: int) -> str:
    """Why the dashboard cannot listen on ``port`` ("taken by another server", ...), or ""."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Tornado binds
        try:
            probe.bind((HOST, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return "taken by another server"
            return f"not free ({exc.strerror or exc})"
    return ""


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "dashboard",
        help="browse results in the Streamlit dashboard (127.0.0.1 only)",
        description="Start the dashboard on http://127.0.0.1:PORT. It reads the store through "
        "short read-only connections with file access disabled, so it never blocks a running "
        "sweep. Ctrl-C stops it.",
    )
    add_store_option(parser)
    parser.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    parser.add_argument("--open", action="store_true", help="open a browser tab as well")
    parser.set_defaults(handler=run)
