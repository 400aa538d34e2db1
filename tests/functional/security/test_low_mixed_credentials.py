"""A request presenting one valid and one invalid credential is refused (401), on both servers.

Before the fix the resource server read the first token header it found and ignored the rest,
and the auth server's ``/api/applications`` did the same: a request with a valid
``X-Xapp-Token`` and a garbage ``X-Access-Token`` (or ``?access_token=``) was served. A client
that presents a bad credential has a bug or is probing; the request is now refused whichever
header carries which, and served when every credential presented is valid.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests

from common.models import Application
from common.stores import Stores
from tests.functional.catalog_support import issue_user_token
from tests.pages import Account
from tests.servers import LiveServer

pytestmark = pytest.mark.functional

GARBAGE = "not-a-token-at-all"

# Where the valid token goes, and where the garbage goes: every pair of places.
PLACES = ["X-Xapp-Token", "X-Access-Token", "X-Auth-Token", "Authorization", "query"]


def present(place: str, token: str, into: dict[str, Any], query_name: str) -> None:
    """Put ``token`` into the request's headers or query string."""
    if place == "query":
        into["params"][query_name] = token
    elif place == "Authorization":
        into["headers"]["Authorization"] = f"Bearer {token}"
    else:
        into["headers"][place] = token


def request_with(valid_place: str, bad_place: str, token: str, query_name: str) -> dict[str, Any]:
    """Return the keyword arguments of a request presenting ``token`` and the garbage."""
    kw: dict[str, Any] = {"headers": {}, "params": {}, "timeout": 10}
    present(valid_place, token, kw, query_name)
    present(bad_place, GARBAGE, kw, query_name)
    return kw


@pytest.fixture
def user_token(stores: Stores, account: Account) -> str:
    """A user token of the account's application (first-party: it may read /api/applications)."""
    with stores.sessions() as s, s.begin():
        s.get_one(Application, account.app_id).first_party = True
    return issue_user_token(stores, account.app_id, account.user_id)


@pytest.mark.parametrize("valid_place", PLACES)
@pytest.mark.parametrize("bad_place", PLACES)
def test_resource_server_refuses_a_garbage_credential_beside_a_valid_one(
    resource_server: LiveServer, user_token: str, valid_place: str, bad_place: str
) -> None:
    url = f"{resource_server.url}/api/artists"
    alone: dict[str, Any] = {"headers": {}, "params": {}, "timeout": 10}
    present(valid_place, user_token, alone, "xapp_token")  # the valid one only
    assert requests.get(url, **alone).status_code == 200
    if valid_place == bad_place:
        return
    r = requests.get(url, **request_with(valid_place, bad_place, user_token, "xapp_token"))
    assert r.status_code == 401, (valid_place, bad_place, r.text)
    assert r.json()["type"] == "auth_error"


@pytest.mark.parametrize("bad_place", ["X-Xapp-Token", "X-Auth-Token", "Authorization", "query"])
def test_auth_server_refuses_a_garbage_credential_beside_a_valid_one(
    auth_server: LiveServer, account: Account, user_token: str, bad_place: str
) -> None:
    url = f"{auth_server.url}/api/applications"
    params = {"user_id": account.user_id}
    ok = requests.get(url, headers={"X-Access-Token": user_token}, params=params, timeout=10)
    assert ok.status_code == 200
    kw = request_with("X-Access-Token", bad_place, user_token, "access_token")
    kw["params"].update(params)
    r = requests.get(url, **kw)
    assert r.status_code == 401, (bad_place, r.text)


def test_an_application_token_and_a_user_token_together_act_for_the_user(
    resource_server: LiveServer, account: Account, user_token: str, stores: Stores
) -> None:
    with stores.sessions() as session, session.begin():
        issued = stores.tokens.issue(
            session, kind="xapp", application_id=account.app_id, user_id=None, ttl=600
        )
    stores.tokens.publish(issued.row)
    both = {"X-Xapp-Token": issued.value, "X-Access-Token": user_token}
    r = requests.get(f"{resource_server.url}/api/current_user", headers=both, timeout=10)
    assert r.status_code == 200 and r.json()["id"] == account.user_id
