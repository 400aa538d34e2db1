"""Every attack of this folder is performed over real HTTP: the servers under their usual names
are the real ones here (waitress on loopback ports), not the apps served in-process."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oauth_support import serve_auth
from tests.servers import LiveServer


@pytest.fixture(scope="session")
def auth_server(http_auth_server: LiveServer) -> LiveServer:
    """The auth server alone, over real HTTP."""
    return http_auth_server


@pytest.fixture(scope="session")
def resource_server(http_resource_server: LiveServer) -> LiveServer:
    """The resource server alone, over real HTTP."""
    return http_resource_server


@pytest.fixture(scope="session")
def combined_server(http_combined_server: LiveServer) -> LiveServer:
    """Both services behind the path dispatcher on one port, over real HTTP."""
    return http_combined_server


@pytest.fixture(scope="session")
def oauth_server(http_oauth_server: LiveServer) -> LiveServer:
    """The auth server with the stub social providers, over real HTTP."""
    return http_oauth_server


@pytest.fixture
def sign_up_server(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server of its own (a sign-up allowance no other test shares)."""
    settings = replace(
        auth_settings,
        sign_up_attempts_per_ip="1000/hour",
        redis_prefix=f"{auth_settings.redis_prefix}-pw-{time.monotonic_ns()}",
    )
    try:
        with serve_auth(settings, stores) as live:
            yield live
    finally:
        stores.redis.delete(*stores.redis.keys(f"{settings.redis_prefix}:*") or ["-"])
