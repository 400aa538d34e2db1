"""Every 405 names the methods the resource allows (RFC 9110 15.5.6), on both servers.

Before the fix the auth server's JSON 405 answers dropped Werkzeug's ``Allow`` header: a
client (or a fuzzer) could not learn what the route takes.
"""

from __future__ import annotations

import pytest
import requests

from common.stores import Stores
from tests.functional.catalog_support import issue_user_token
from tests.pages import Account
from tests.servers import LiveServer

pytestmark = pytest.mark.functional


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PATCH", "/api/applications"),
        ("PUT", "/api/tokens/xapp_token"),
        ("DELETE", "/oauth2/access_token"),
        ("PATCH", "/api/applications/0123456789abcdef01234567"),
    ],
)
def test_auth_server_405_carries_allow(auth_server: LiveServer, method: str, path: str) -> None:
    r = requests.request(method, f"{auth_server.url}{path}", timeout=10)
    assert r.status_code == 405, r.text
    allowed = {m.strip() for m in r.headers["Allow"].split(",")}
    assert allowed and method not in allowed
    assert r.headers["Content-Type"].startswith("application/json")


def test_resource_server_405_carries_allow(
    resource_server: LiveServer, stores: Stores, account: Account
) -> None:
    token = issue_user_token(stores, account.app_id, account.user_id)
    r = requests.request(
        "PATCH", f"{resource_server.url}/api/artists", headers={"X-Access-Token": token}, timeout=10
    )
    assert r.status_code == 405 and "GET" in r.headers["Allow"]
