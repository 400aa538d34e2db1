"""An empty ``Authorization: Bearer`` is a malformed credential, refused (401) on both servers.

The attack: a valid token in one place (``X-Xapp-Token``, say) and ``Authorization: Bearer``
with nothing after it. The servers refused a garbage credential beside a valid one, but read an
empty Bearer as no credential at all and served the request. RFC 6750 (section 2.1) gives the
credential as ``Bearer`` and a ``b64token`` of at least one character: an empty one is
malformed, and a client sending it has a bug or is probing. What holds: the request is refused
with the 401 ``auth_error`` any other bad credential gets, on the catalog and on the auth
server's applications API, wherever the valid token is; the valid token alone is served.
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

# What an empty credential looks like on the wire (a server may trim the trailing spaces).
EMPTY_BEARERS = ["Bearer ", "Bearer", "bearer    "]
# Where the valid token goes.
PLACES = ["X-Xapp-Token", "X-Access-Token", "X-Auth-Token", "query"]


@pytest.fixture
def tokens(stores: Stores, account: Account) -> dict[str, str]:
    """A user token and an application token of the account's application."""
    with stores.sessions() as session, session.begin():
        xapp = stores.tokens.issue(
            session, kind="xapp", application_id=account.app_id, user_id=None, ttl=600
        )
    stores.tokens.publish(xapp.row)
    user = issue_user_token(stores, account.app_id, account.user_id)
    return {"xapp": xapp.value, "user": user}


def valid(place: str, tokens: dict[str, str]) -> dict[str, Any]:
    """Return the keyword arguments of a request carrying one valid token at ``place``."""
    kw: dict[str, Any] = {"headers": {}, "params": {}, "timeout": 10}
    if place == "query":
        kw["params"]["access_token"] = tokens["user"]
    else:
        kw["headers"][place] = tokens["xapp" if place == "X-Xapp-Token" else "user"]
    return kw


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("empty", EMPTY_BEARERS)
def test_the_catalog_refuses_an_empty_bearer_beside_a_valid_token(
    resource_server: LiveServer, tokens: dict[str, str], place: str, empty: str
) -> None:
    url = f"{resource_server.url}/api/artists"
    assert requests.get(url, **valid(place, tokens)).status_code == 200
    kw = valid(place, tokens)
    kw["headers"]["Authorization"] = empty
    r = requests.get(url, **kw)
    assert r.status_code == 401, (place, empty, r.text)
    assert r.json() == {
        "type": "auth_error",
        "message": "The access token is invalid or has expired.",
    }
    # Alone, it is no more than no credential: a 401 too.
    r = requests.get(url, headers={"Authorization": empty}, timeout=10)
    assert r.status_code == 401 and r.json()["type"] == "auth_error"


@pytest.mark.parametrize("empty", EMPTY_BEARERS)
def test_the_applications_api_refuses_an_empty_bearer_beside_a_valid_token(
    auth_server: LiveServer, stores: Stores, account: Account, tokens: dict[str, str], empty: str
) -> None:
    url = f"{auth_server.url}/api/applications"
    params = {"user_id": account.user_id}
    # Only a first-party application's user token reads the user's applications.
    with stores.sessions() as session, session.begin():
        session.get_one(Application, account.app_id).first_party = True
    headers = {"X-Access-Token": tokens["user"]}
    assert requests.get(url, headers=headers, params=params, timeout=10).status_code == 200
    r = requests.get(url, headers={**headers, "Authorization": empty}, params=params, timeout=10)
    assert r.status_code == 401, (empty, r.text)
    assert r.json()["type"] == "auth_error"


def test_a_bearer_token_with_other_schemes_around_is_read_as_before(
    resource_server: LiveServer, tokens: dict[str, str]
) -> None:
    """The valid forms still pass: a Bearer token, any case of the scheme, extra spaces."""
    url = f"{resource_server.url}/api/artists"
    for header in (f"Bearer {tokens['user']}", f"bearer  {tokens['user']} "):
        r = requests.get(url, headers={"Authorization": header}, timeout=10)
        assert r.status_code == 200, (header, r.text)
