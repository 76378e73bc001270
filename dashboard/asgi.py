"""The dashboard as an ASGI app: app.py behind a check of the Host header (DNS rebinding).

``collsweep dashboard`` serves this file (``streamlit run dashboard/asgi.py``), so every request,
the page, its assets and its WebSocket, passes `LoopbackHostMiddleware` first. Serving app.py
directly skips the check; app.py then says so on its first page.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

try:
    from dashboard.hostcheck import HOST_CHECK_ENV, LoopbackHostMiddleware
except ModuleNotFoundError:  # a checkout that is not pip-installed: add the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from dashboard.hostcheck import HOST_CHECK_ENV, LoopbackHostMiddleware

os.environ[HOST_CHECK_ENV] = "on"  # app.py, in this process, knows requests were checked
app = st.App(Path(__file__).with_name("app.py"), middleware=[Middleware(LoopbackHostMiddleware)])
