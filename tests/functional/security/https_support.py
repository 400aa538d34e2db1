"""Servers whose PUBLIC_URL is https (the deployment the low findings are about), over real HTTP.

The servers listen on plain http on loopback, as behind a TLS-terminating proxy; what they
build from PUBLIC_URL (links, the issuer, HSTS, secure cookies) is what is looked at.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests

from auth_server.app import create_app as create_auth
from common.settings import AuthSettings, ResourceSettings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests.pages import serving
from tests.servers import CHECKED_PORTS, LiveServer

PUBLIC_URL = "https://catalog.example.org"
FORGED_HOST = "evil.example"


@contextmanager
def https_auth(settings: AuthSettings, stores: Stores, **changes: Any) -> Iterator[LiveServer]:
    """Serve an auth server whose PUBLIC_URL is https (responses checked against the document)."""
    app = create_auth(dataclasses.replace(settings, public_url=PUBLIC_URL, **changes), stores)
    with checked(app) as live:
        yield live


@contextmanager
def https_resource(
    settings: ResourceSettings, stores: Stores, **changes: Any
) -> Iterator[LiveServer]:
    """Serve a resource server whose PUBLIC_URL is https."""
    app = create_resource(dataclasses.replace(settings, public_url=PUBLIC_URL, **changes), stores)
    with checked(app) as live:
        yield live


@contextmanager
def checked(app: Any) -> Iterator[LiveServer]:
    """Serve ``app`` for a while, every response checked against the OpenAPI document."""
    with serving(app) as live:
        port = live.server.effective_port
        CHECKED_PORTS.add(int(port))
        try:
            yield live
        finally:
            CHECKED_PORTS.discard(int(port))


def call(method: str, url: str, **kw: Any) -> requests.Response:
    """Send one request on a connection of its own, closed after the answer.

    A kept-alive connection would hold a server of one test open until its deadline.
    """
    headers = {"Connection": "close", **kw.pop("headers", {})}
    return requests.request(method, url, headers=headers, timeout=10, **kw)
