"""``/api/applications`` over real HTTP: owner-only HAL list and item, create, update, delete
(with a first-party application's token: see tests/functional/security/test_m1_first_party.py)."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application, Token, User
from common.settings import AuthSettings
from common.stores import Stores
from tests import factories
from tests.functional.catalog_support import counting
from tests.functional.oauth_support import (
    World,
    get_artists,
    make_world,
    post,
)
from tests.servers import LiveServer

INVALID = {"type": "auth_error", "message": "The access token is invalid or has expired."}
NOT_FOUND = {"type": "other_error", "message": "Application Not Found"}


@pytest.fixture
def first_party_owner(
    clean_db: Any, sessions: sessionmaker[Session], oauth_settings: AuthSettings
) -> World:
    """A user and a first-party application (whose user tokens may manage applications)."""
    w = make_world(sessions, oauth_settings)
    with sessions() as s, s.begin():
        s.get_one(Application, w.application_id).first_party = True
    return w


@pytest.fixture
def signed_in(oauth_server: LiveServer, first_party_owner: World) -> dict[str, str]:
    """The token header of the world's user."""
    r = post(oauth_server, first_party_owner.password_grant())
    return {"X-Access-Token": r.json()["access_token"]}


def api(live: LiveServer, path: str = "") -> str:
    """Return the URL of an applications route."""
    return f"{live.url}/api/applications{path}"


def test_list_redirects_to_the_callers_own_list(
    oauth_server: LiveServer, first_party_owner: World, signed_in: dict[str, str]
) -> None:
    r = requests.get(
        api(oauth_server), params={"size": 2}, headers=signed_in, allow_redirects=False, timeout=10
    )
    assert r.status_code == 302
    location = api(oauth_server, f"?size=2&user_id={first_party_owner.user_id}")
    assert r.headers["Location"] == location
    assert r.json() == {"_links": {"location": {"href": location}}}


def test_list_pages_through_own_applications_only(
    oauth_server: LiveServer,
    first_party_owner: World,
    signed_in: dict[str, str],
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    with sessions() as s, s.begin():
        owner = s.get_one(User, first_party_owner.user_id)
        for n in range(4):
            factories.application(s, owner, name=f"Mine {n}")
    make_world(sessions, oauth_settings)  # someone else's application
    seen: list[str] = []
    url: str | None = api(
        oauth_server, f"?size=2&total_count=1&user_id={first_party_owner.user_id}"
    )
    while url:
        r = requests.get(url, headers=signed_in, timeout=10)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["total_count"] == 5
        assert set(body) == {"total_count", "_links", "_embedded"}
        seen += [a["id"] for a in body["_embedded"]["applications"]]
        url = body["_links"].get("next", {}).get("href")
    assert len(seen) == 5 == len(set(seen))
    with sessions() as s:
        mine = set(
            s.scalars(
                select(Application.id).where(Application.user_id == first_party_owner.user_id)
            )
        )
    assert set(seen) == mine


def test_list_of_another_user_and_bad_parameters(
    oauth_server: LiveServer, signed_in: dict[str, str]
) -> None:
    other = requests.get(
        api(oauth_server), params={"user_id": "0" * 24}, headers=signed_in, timeout=10
    )
    assert other.status_code == 404
    for bad in ({"size": "0"}, {"size": "x"}, {"cursor": "%%%"}, {"total_count": "maybe"}):
        r = requests.get(
            api(oauth_server),
            headers=signed_in,
            timeout=10,
            params={**bad, "user_id": signed_user(oauth_server, signed_in)},
        )
        assert r.status_code == 400 and r.json()["type"] == "param_error", bad


def signed_user(live: LiveServer, headers: dict[str, str]) -> str:
    """Return the user id the token acts for, from the list redirect."""
    r = requests.get(api(live), headers=headers, allow_redirects=False, timeout=10)
    return r.headers["Location"].rsplit("user_id=", 1)[1]


def test_user_token_required(
    oauth_server: LiveServer, first_party_owner: World, signed_in: dict[str, str]
) -> None:
    xapp = requests.post(
        f"{oauth_server.url}/api/tokens/xapp_token", data=first_party_owner.creds, timeout=10
    ).json()["token"]
    for headers in ({}, {"X-Xapp-Token": xapp}, {"X-Access-Token": xapp}, {"X-Access-Token": "x"}):
        r = requests.get(api(oauth_server), headers=headers, timeout=10)
        assert r.status_code == 401 and r.json() == INVALID
    bearer = {"Authorization": f"Bearer {signed_in['X-Access-Token']}"}
    assert (
        requests.get(
            api(oauth_server, f"/{first_party_owner.application_id}"), headers=bearer, timeout=10
        ).status_code
        == 200
    )


def test_create_show_update_delete(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    first_party_owner: World,
    signed_in: dict[str, str],
    sessions: sessionmaker[Session],
) -> None:
    created = requests.post(
        api(oauth_server),
        json={"name": "My App", "redirect_urls": ["https://app.example.org/cb"]},
        headers=signed_in,
        timeout=10,
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert list(body) == [
        "id",
        "created_at",
        "updated_at",
        "name",
        "client_id",
        "client_secret",
        "enabled",
        "redirect_urls",
        "standard_token_response",
        "_links",
    ]
    assert body["redirect_urls"] == ["https://app.example.org/cb"] and body["enabled"] is True
    assert body["_links"] == {
        "self": {"href": api(oauth_server, f"/{body['id']}")},
        "user": {"href": f"{oauth_server.url}/api/users/{first_party_owner.user_id}"},
    }
    assert created.headers["Location"] == body["_links"]["self"]["href"]
    assert created.headers["Cache-Control"] == "no-store"
    app_id, secret = body["id"], body["client_secret"]
    creds = {"client_id": body["client_id"], "client_secret": secret}

    shown = requests.get(api(oauth_server, f"/{app_id}"), headers=signed_in, timeout=10).json()
    assert "client_secret" not in shown and shown["name"] == "My App"

    updated = requests.put(
        api(oauth_server, f"/{app_id}"),
        json={"name": "Renamed", "redirect_urls": [], "standard_token_response": True},
        headers=signed_in,
        timeout=10,
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["name"] == "Renamed" and updated.json()["redirect_urls"] == []
    assert updated.json()["standard_token_response"] is True
    assert "client_secret" not in updated.json()

    xapp = requests.post(f"{oauth_server.url}/api/tokens/xapp_token", data=creds, timeout=10)
    app_token = xapp.json()["token"]
    assert get_artists(resource_server, app_token) == 200
    deleted = requests.delete(api(oauth_server, f"/{app_id}"), headers=signed_in, timeout=10)
    assert deleted.status_code == 204 and deleted.content == b""
    assert get_artists(resource_server, app_token) == 401
    gone = requests.get(api(oauth_server, f"/{app_id}"), headers=signed_in, timeout=10)
    assert gone.status_code == 404 and gone.json() == NOT_FOUND
    again = requests.post(f"{oauth_server.url}/api/tokens/xapp_token", data=creds, timeout=10)
    assert again.status_code == 401
    with sessions() as s:
        assert (
            s.scalar(select(func.count()).select_from(Token).where(Token.application_id == app_id))
            == 0
        )


def test_form_bodies_and_validation(oauth_server: LiveServer, signed_in: dict[str, str]) -> None:
    form = requests.post(
        api(oauth_server),
        data={
            "name": "Form App",
            "redirect_urls[]": ["net.artsy.app://oauth/callback", "http://127.0.0.1:8080/cb"],
        },
        headers=signed_in,
        timeout=10,
    )
    assert form.status_code == 201, form.text
    assert form.json()["redirect_urls"] == [
        "net.artsy.app://oauth/callback",
        "http://127.0.0.1:8080/cb",
    ]
    for payload in (
        {},
        {"name": "  "},
        {"name": "x\x00y"},
        {"name": "A", "redirect_urls": ["javascript:alert(1)"]},
        {"name": "A", "redirect_urls": ["http://example.org/cb"]},
        {"name": "A", "redirect_urls": ["https://example.org/cb#frag"]},
        {"name": "A", "redirect_urls": "https://example.org/cb"},
        {"name": "A", "redirect_urls": ["https://example.org/\ud800"]},
        {"name": "\ud800"},
        {"name": "A", "standard_token_response": "perhaps"},
        {"name": "A", "standard_token_response": ""},
    ):
        r = requests.post(api(oauth_server), json=payload, headers=signed_in, timeout=10)
        assert r.status_code == 400, (payload, r.text)
        assert r.json()["type"] == "param_error"


def test_others_applications_are_not_found(
    oauth_server: LiveServer,
    signed_in: dict[str, str],
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    other = make_world(sessions, oauth_settings)
    url = api(oauth_server, f"/{other.application_id}")
    for method in ("GET", "PUT", "DELETE"):
        r = requests.request(method, url, json={"name": "x"}, headers=signed_in, timeout=10)
        assert r.status_code == 404 and r.json() == NOT_FOUND, method
    for odd in ("nope", "%00", "a" * 300):
        r = requests.get(api(oauth_server, f"/{odd}"), headers=signed_in, timeout=10)
        assert r.status_code == 404
    with sessions() as s:
        assert s.get_one(Application, other.application_id).name != "x"


def test_list_page_is_a_bounded_number_of_queries(
    oauth_server: LiveServer,
    first_party_owner: World,
    signed_in: dict[str, str],
    sessions: sessionmaker[Session],
    stores: Stores,
) -> None:
    with sessions() as s, s.begin():
        owner = s.get_one(User, first_party_owner.user_id)
        for _ in range(8):
            factories.application(s, owner)
    # Every engine of the process counts: on PostgreSQL, reads run on a pool of their own.
    with counting(stores.engine) as statements:
        r = requests.get(
            api(oauth_server),
            params={"user_id": first_party_owner.user_id, "size": "9"},
            headers=signed_in,
            timeout=10,
        )
    assert len(r.json()["_embedded"]["applications"]) == 9
    # One for the page, one to tell that the token's application is first-party.
    assert len([q for q in statements if "applications" in q]) == 2
