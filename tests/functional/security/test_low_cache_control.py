"""A user's responses stay out of shared caches: ``Cache-Control: private, no-store``.

Attack: a shared cache (a corporate proxy, a CDN) in front of the API keeps a response made
for one user and serves it to the next, or a browser keeps it on disk after sign-out. Every
response to a request made with a user access token, and every response of a user-scoped route
(whatever its status), must say ``private, no-store``. Catalog responses to an application
(XAPP) token keep their caching.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy.orm import Session, sessionmaker

from common.settings import Settings
from common.stores import Stores
from tests.functional.user_api_support import Caller, add_artworks, make_caller, xapp_headers
from tests.servers import LiveServer

PRIVATE = "private, no-store"


@pytest.fixture
def caller(
    clean_db: Any, sessions: sessionmaker[Session], stores: Stores, base_settings: Settings
) -> Caller:
    """A user with an access token."""
    return make_caller(sessions, stores, base_settings)


def cache_control(method: str, url: str, headers: dict[str, str], **kw: Any) -> tuple[int, str]:
    """Return a response's status and Cache-Control header ("" when absent)."""
    r = requests.request(method, url, headers=headers, timeout=10, **kw)
    assert r.status_code < 500, r.text
    return r.status_code, r.headers.get("Cache-Control", "")


def test_user_token_responses_are_private(
    resource_server: LiveServer, caller: Caller, sessions: sessionmaker[Session]
) -> None:
    [artwork] = add_artworks(sessions, 1)
    api = resource_server.url + "/api"
    seen = {
        "catalog list": cache_control("GET", f"{api}/artworks", caller.headers),
        "catalog item": cache_control("GET", f"{api}/artworks/{artwork}", caller.headers),
        "missing item": cache_control("GET", f"{api}/artists/no-such-artist", caller.headers),
        "bad parameter": cache_control("GET", f"{api}/artworks?size=x", caller.headers),
        "search": cache_control("GET", f"{api}/search?q=work", caller.headers),
        "current user": cache_control("GET", f"{api}/current_user", caller.headers),
        "user": cache_control("GET", f"{api}/users/{caller.id}", caller.headers),
        "user details": cache_control("GET", f"{api}/user_details/{caller.id}", caller.headers),
        "collections": cache_control(
            "GET", f"{api}/collections?user_id={caller.id}", caller.headers
        ),
        "collection items": cache_control(
            "GET",
            f"{api}/collection_items?collection_id={caller.default_collection}&user_id={caller.id}",
            caller.headers,
        ),
        "added item": cache_control(
            "POST",
            f"{api}/collection_items?collection_id={caller.default_collection}&user_id={caller.id}",
            caller.headers,
            data={"artwork_id": artwork},
        ),
    }
    assert {name: cc for name, (_, cc) in seen.items() if cc != PRIVATE} == {}, seen
    assert seen["current user"][0] == 200 and seen["added item"][0] == 201, seen


def test_user_routes_are_private_whatever_the_token(
    resource_server: LiveServer, caller: Caller, sessions: sessionmaker[Session], stores: Stores
) -> None:
    api = resource_server.url + "/api"
    xapp = xapp_headers(sessions, stores)
    seen = {
        "no token": cache_control("GET", f"{api}/current_user", {}),
        "xapp on users": cache_control("GET", f"{api}/users/{caller.id}", xapp),
        "xapp on collections": cache_control("GET", f"{api}/collections", xapp),
        "bad token": cache_control("GET", f"{api}/collection_items", {"X-Access-Token": "x" * 43}),
        "bidders": cache_control("GET", f"{api}/bidders", {}),
    }
    assert all(status == 401 for status, _ in seen.values()), seen
    assert {name: cc for name, (_, cc) in seen.items() if cc != PRIVATE} == {}, seen


def test_xapp_catalog_responses_keep_their_caching(
    resource_server: LiveServer, clean_db: Any, sessions: sessionmaker[Session], stores: Stores
) -> None:
    [artwork] = add_artworks(sessions, 1)
    xapp = xapp_headers(sessions, stores)
    api = resource_server.url + "/api"
    for url in (f"{api}/artworks", f"{api}/artworks/{artwork}", api):
        status, cc = cache_control("GET", url, xapp)
        assert status == 200 and "private" not in cc and "no-store" not in cc, (url, cc)


def test_auth_server_answers_are_never_stored(auth_server: LiveServer, caller: Caller) -> None:
    # Everything the auth server says is about accounts, applications or tokens; a response
    # that sets no Cache-Control of its own gets "private, no-store" (the public metadata
    # document keeps its own).
    for path, headers in (
        ("/api/applications", caller.headers),
        ("/api/applications", {}),
        ("/account/sign_in", {}),
    ):
        _, cc = cache_control("GET", auth_server.url + path, headers)
        assert "no-store" in cc, (path, cc)
