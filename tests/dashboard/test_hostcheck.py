"""The dashboard's Host-header guard and its exposure warning (pure functions, no server)."""

from __future__ import annotations

import asyncio

import pytest

from dashboard.hostcheck import LoopbackHostMiddleware, exposure_warning, is_loopback_host


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1:8501", True),
        ("127.1.2.3", True),
        ("localhost:8501", True),
        ("LOCALHOST", True),
        ("[::1]:8501", True),
        ("::1", True),
        ("evil.example:8501", False),
        ("127.0.0.1.evil.example", False),
        ("localhost.evil.example:80", False),
        ("0.0.0.0:8501", False),
        ("127.0.0.1:8501@evil.com", False),  # userinfo-like: no host name has an '@'
        ("127.0.0.1:8501/evil.com", False),
        ("localhost:80:90", False),
        ("127.0.0.1 evil.com", False),
        ("192.168.1.10", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


def test_exposure_warning_names_the_problem() -> None:
    assert exposure_warning("127.0.0.1", "127.0.0.1:8501", checked=True) is None
    anywhere = exposure_warning(None, "10.0.0.5:8501", checked=True)
    assert anywhere and "every interface" in anywhere and "collsweep dashboard" in anywhere
    unchecked = exposure_warning("127.0.0.1", "localhost:8501", checked=False)
    assert unchecked and "Host check" in unchecked
    assert exposure_warning(None, "", checked=False) is None  # AppTest: no request, no warning


def _call(host: str, kind: str = "http") -> list[dict]:
    """Messages the middleware sends for one request, and whether the app was reached."""
    sent: list[dict] = []

    async def app(scope, receive, send) -> None:
        sent.append({"type": "reached"})

    async def send(message) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {}

    scope = {"type": kind, "headers": [(b"host", host.encode())]}
    asyncio.run(LoopbackHostMiddleware(app)(scope, receive, send))
    return sent


def test_middleware_refuses_other_hosts_for_pages_and_websockets() -> None:
    assert _call("127.0.0.1:8501") == [{"type": "reached"}]
    refused = _call("evil.example:8501")
    assert refused[0]["status"] == 403 and {"type": "reached"} not in refused
    assert _call("evil.example", "websocket") == [{"type": "websocket.close", "code": 1008}]
