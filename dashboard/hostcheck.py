"""Serve only requests addressed to this machine's loopback name: a guard against DNS rebinding.

A web page on another site can make a browser resolve its own host name to 127.0.0.1 and then
talk to a local server as if it were that site; the request still carries the other site's
name in its Host header. The dashboard therefore answers only requests whose Host is a loopback
name or address (localhost, 127.x.y.z, [::1]); anything else gets 403. No Streamlit here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HOST_CHECK_ENV = "COLLSWEEP_HOST_CHECK"
REFUSED = b"collsweep dashboard: refused, the Host header does not name this machine's loopback"


# A Host header as RFC 9110 allows it: a name or IPv4 address, or an IPv6 address in brackets,
# then an optional port; nothing else ('127.0.0.1:8501@evil.com' is no loopback name).
HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9.-]+))(?::\d{1,5})?")


def host_name(host_header: str) -> str:
    """The name or address of a Host header, without its port or IPv6 brackets; '' for a
    header that is not a host and port."""
    host = host_header.strip().lower()
    found = HOST.fullmatch(host)
    if found:
        return found["v6"] or found["name"]
    try:  # a bare IPv6 address, as some clients send it
        return str(ipaddress.IPv6Address(host))
    except ValueError:
        return ""


def is_loopback_host(host_header: str) -> bool:
    """True when the Host header names the loopback interface (with or without a port)."""
    name = host_name(host_header)
    if name in ("localhost", "localhost.") or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_loopback_address(address: str) -> bool:
    """True when a bind address (Streamlit's server.address) serves loopback only."""
    return bool(address) and is_loopback_host(address)


def exposure_warning(address: str | None, host_header: str, checked: bool) -> str | None:
    """What to tell the person at the page when the server is reachable beyond this machine
    or runs without the Host check; None when it serves loopback only, checked."""
    problems = []
    if not is_loopback_address(address or ""):
        where = address or "every interface"
        problems.append(f"this dashboard listens on {where}, so other machines can reach it")
    if not checked:
        problems.append("it was started without collsweep's Host check (DNS rebinding)")
    if not problems or not host_header:
        return None
    text = "; ".join(problems)
    return (
        text[0].upper() + text[1:] + ". Start it with `collsweep dashboard`, which serves "
        "127.0.0.1 only and refuses requests addressed to any other name."
    )


def _host_of(scope: Scope) -> str:
    for key, value in scope.get("headers", []):
        if key == b"host":
            return value.decode("latin-1")
    return ""


class LoopbackHostMiddleware:
    """ASGI middleware that refuses HTTP and WebSocket requests not addressed to loopback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass loopback-addressed requests on; answer the others 403 (or close the socket)."""
        if scope["type"] not in ("http", "websocket") or is_loopback_host(_host_of(scope)):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")],
            }
        )
        await send({"type": "http.response.body", "body": REFUSED})
