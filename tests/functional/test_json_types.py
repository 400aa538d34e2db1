"""JSON bodies of the wrong type are refused (400 ``param_error`` naming the field, or the OAuth
``invalid_request``), never coerced: ``{"name": -1.1}`` must not become the name "-1.1"."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application, Collection
from common.stores import Stores
from tests.functional.catalog_support import issue_user_token
from tests.pages import Account
from tests.servers import LiveServer

pytestmark = pytest.mark.functional


@pytest.fixture
def token(stores: Stores, account: Account, sessions: sessionmaker[Session]) -> str:
    """A user token of a first-party application (it may manage applications)."""
    with sessions() as s, s.begin():
        app = s.get(Application, account.app_id)
        assert app is not None
        app.first_party = True
    return issue_user_token(stores, account.app_id, account.user_id)


def refused_without_a_write(
    url: str, body: dict[str, Any], token: str, sessions: sessionmaker[Session], model: Any
) -> dict[str, Any]:
    """POST ``body``: assert a 400 and that no row of ``model`` was written; return the error."""
    with sessions() as s:
        before = s.scalar(select(func.count()).select_from(model))
    r = requests.post(url, json=body, headers={"X-Access-Token": token}, timeout=10)
    assert r.status_code == 400, r.text
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(model)) == before
    error: dict[str, Any] = r.json()
    return error


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": -1.1}, "name"),
        ({"name": 7}, "name"),
        ({"name": True}, "name"),
        ({"name": ["x"]}, "name"),
        ({"name": {"a": 1}}, "name"),
        ({"name": "ok", "private": 1}, "private"),
        ({"name": "ok", "description": 3}, "description"),
    ],
)
def test_collection_fields_of_the_wrong_type(
    resource_server: LiveServer,
    account: Account,
    token: str,
    sessions: sessionmaker[Session],
    body: dict[str, Any],
    field: str,
) -> None:
    url, full = f"{resource_server.url}/api/collections", {"user_id": account.user_id, **body}
    error = refused_without_a_write(url, full, token, sessions, Collection)
    assert error["type"] == "param_error" and field in error["detail"]


def test_collection_item_position_must_be_an_integer(
    resource_server: LiveServer, account: Account, token: str
) -> None:
    url = f"{resource_server.url}/api/collection_items/0123456789abcdef01234567"
    for position in (1.5, "2", True):
        r = requests.put(
            url, json={"position": position}, headers={"X-Access-Token": token}, timeout=10
        )
        assert r.status_code == 400, (position, r.text)
        assert "position" in r.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": -1.1}, "name"),
        ({"name": 12}, "name"),
        ({"name": "ok", "standard_token_response": 1}, "standard_token_response"),
        ({"name": "ok", "redirect_urls": [1]}, "redirect_urls"),
    ],
)
def test_application_fields_of_the_wrong_type(
    auth_server: LiveServer,
    token: str,
    sessions: sessionmaker[Session],
    body: dict[str, Any],
    field: str,
) -> None:
    error = refused_without_a_write(
        f"{auth_server.url}/api/applications", body, token, sessions, Application
    )
    assert error["type"] == "param_error" and field in error["detail"]


def test_a_json_flag_may_be_a_boolean_or_its_text(auth_server: LiveServer, token: str) -> None:
    for flag, expected in ((False, False), ("true", True), (None, True)):  # None: the default
        body = (
            {"name": "Typed"}
            if flag is None
            else {"name": "Typed", "standard_token_response": flag}
        )
        r = requests.post(
            f"{auth_server.url}/api/applications",
            json=body,
            headers={"X-Access-Token": token},
            timeout=10,
        )
        assert r.status_code == 201, r.text
        assert r.json()["standard_token_response"] is expected


@pytest.mark.parametrize("path", ["/oauth2/access_token", "/oauth2/introspect", "/oauth2/revoke"])
@pytest.mark.parametrize("value", [True, 7, None, ["x"], {"a": "b"}])
def test_oauth_parameters_in_json_must_be_text(
    auth_server: LiveServer, account: Account, path: str, value: Any
) -> None:
    body = {
        "grant_type": "client_credentials",
        "token": "some-token",
        "client_id": value,
        "client_secret": account.client_secret,
    }
    r = requests.post(f"{auth_server.url}{path}", json=body, timeout=10)
    assert r.status_code == 400, r.text
    assert r.json() == {
        "error": "invalid_request",
        "error_description": "The client_id parameter must be a string.",
    }


@pytest.mark.parametrize("flag", ["true\x1f", " true", "false\x0b", "yes\n"])
def test_a_flag_is_its_word_alone(
    resource_server: LiveServer,
    account: Account,
    token: str,
    sessions: sessionmaker[Session],
    flag: str,
) -> None:
    body = {"user_id": account.user_id, "name": "Flags", "private": flag}
    error = refused_without_a_write(
        f"{resource_server.url}/api/collections", body, token, sessions, Collection
    )
    assert "private" in error["detail"]


def test_an_integral_json_number_is_an_integer(resource_server: LiveServer, token: str) -> None:
    # JSON has one number type: 2.0 is the integer 2 (the item does not exist: a 404, not a 400).
    r = requests.put(
        f"{resource_server.url}/api/collection_items/0123456789abcdef01234567",
        json={"position": 2.0},
        headers={"X-Access-Token": token},
        timeout=10,
    )
    assert r.status_code == 404, r.text
