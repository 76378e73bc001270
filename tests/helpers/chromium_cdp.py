"""A minimal Chrome DevTools Protocol client for the browser tests (websockets, sync API).

Starts headless Chromium from Debian's package with a fresh profile, opens one page target
and drives it: navigate, evaluate JavaScript, wait for a condition, take a screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import subprocess
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1400,1000",
    "--remote-debugging-port=0",
)


class CdpError(RuntimeError):
    """The browser answered a command with an error, or a wait timed out."""


class Page:
    """One browser tab spoken to over its DevTools websocket."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command and return its result, skipping events in between."""
        msg_id = next(self._ids)
        self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self._ws.recv(timeout=60))
            if reply.get("id") != msg_id:
                continue
            if "error" in reply:
                raise CdpError(f"{method}: {reply['error']}")
            return reply.get("result", {})

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise CdpError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def navigate(self, url: str) -> None:
        """Load ``url`` in this tab."""
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout: float = 30.0, what: str = "") -> Any:
        """Poll a JavaScript expression until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise CdpError(f"timed out after {timeout:g} s waiting for {what or expression}")

    def screenshot(self, path: Path) -> Path:
        """Save a PNG of the whole page."""
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        path.write_bytes(base64.b64decode(data["data"]))
        return path


class Browser:
    """Headless Chromium with a DevTools port; a context manager that always stops it."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.process: subprocess.Popen | None = None
        self._sockets = contextlib.ExitStack()

    def __enter__(self) -> Browser:
        self.process = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self._sockets.close()
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def _port(self, timeout: float = 30.0) -> int:
        """The DevTools port Chromium wrote into the profile."""
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise CdpError(f"chromium exited with status {self.process.returncode}")
            lines = marker.read_text().splitlines() if marker.exists() else []
            if lines and lines[0].strip().isdigit():
                return int(lines[0])
            time.sleep(0.1)
        raise CdpError("chromium did not open its DevTools port")

    def new_page(self) -> Page:
        """A fresh tab, with the Page domain enabled."""
        port = self._port()
        root = self._connect(f"ws://127.0.0.1:{port}/devtools/browser")
        target = Page(root).call("Target.createTarget", url="about:blank")["targetId"]
        page = Page(self._connect(f"ws://127.0.0.1:{port}/devtools/page/{target}"))
        page.call("Page.enable")
        return page

    def _connect(self, url: str) -> ClientConnection:
        """A websocket to the browser, bypassing any proxy from the environment."""
        if url.endswith("/devtools/browser"):
            url = self._browser_url(url)
        return self._sockets.enter_context(connect(url, proxy=None, max_size=None, open_timeout=30))

    def _browser_url(self, url: str) -> str:
        """The browser endpoint's full path, from the second line of DevToolsActivePort."""
        lines = (self.profile / "DevToolsActivePort").read_text().splitlines()
        return url.rsplit("/devtools/browser", 1)[0] + lines[1].strip()
