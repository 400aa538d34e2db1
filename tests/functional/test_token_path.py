"""Refresh grants answered before Flask (``auth_server.token_path``) answer as the Flask view
does: each request below is sent to both, and the two answers (status line, headers, body, the
route the middlewares log) are the same but for the new tokens' values. And the hooks the app
runs around a request are those the module accounts for."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from flask import Flask
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app
from auth_server.refresh import issue_refresh, start_family
from auth_server.server import close_request_db
from auth_server.token_path import BARE_AFTER_HOOKS, BARE_HOOKS, TokenPath, taken
from bench.refresh_cpu import environ as form_post
from common.observability import ROUTE_KEY
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oauth_support import World, post, refresh_world
from tests.functional.oauth_support import serve_auth as serve

pytestmark = pytest.mark.functional
PATH = "/oauth2/access_token"


def environ(body: bytes, **extra: str) -> dict[str, Any]:
    """Return the environ of a form POST to the token endpoint (the benchmark's), with
    ``extra``."""
    env = form_post(body)
    env.update(extra)
    return env


def call(app: Callable[..., Any], env: dict[str, Any]) -> tuple[str, list[Any], bytes, Any]:
    """Send one request; return its status line, headers, body and logged route."""
    started: list[Any] = []
    result = app(env, lambda status, headers, exc_info=None: started.append((status, headers)))
    body = b"".join(result)
    if hasattr(result, "close"):
        result.close()
    return started[0][0], started[0][1], body, env.get(ROUTE_KEY)


def flask_only(app: Flask) -> Callable[..., Any]:
    """Return Flask's own WSGI app (the view's path), without the token path in front."""
    return lambda env, start: Flask.wsgi_app(app, env, start)


def same_shape(body: bytes) -> Any:
    """Return a body with the values of the tokens it issues left out."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body
    for name in ("access_token", "refresh_token", "id_token"):
        if name in data:
            data[name] = "issued"
    return data


def test_an_openid_refresh_gets_an_id_token_on_the_token_path(
    app: Flask, world: World, auth_settings: AuthSettings, sessions: sessionmaker[Session]
) -> None:
    (token,) = signed_in_families(sessions, auth_settings, world, 1)
    creds = f"client_id={world.client_id}&client_secret={world.client_secret}"
    body = f"grant_type=refresh_token&{creds}&refresh_token={token}".encode()
    status, _headers, answer, _route = call(TokenPath(app, flask_only(app)), environ(body))
    assert status == "200 OK", answer
    assert orjson.loads(answer)["id_token"].count(".") == 2


@pytest.fixture
def app(auth_settings: AuthSettings, stores: Stores) -> Flask:
    return create_app(auth_settings, stores)


@pytest.fixture
def world(clean_db: Any, sessions: sessionmaker[Session], auth_settings: AuthSettings) -> World:
    return refresh_world(sessions, auth_settings)


def refresh_tokens(auth_settings: AuthSettings, stores: Stores, w: World, count: int) -> list[str]:
    """Return ``count`` refresh tokens of the world's user (each of a family of its own)."""
    with serve(auth_settings, stores) as live:
        found = []
        for _ in range(count):
            r = post(live, w.password_grant(scope="offline_access"))
            assert r.status_code == 200, r.text
            found.append(r.json()["refresh_token"])
    return found


def signed_in_families(
    sessions: sessionmaker[Session], auth_settings: AuthSettings, w: World, count: int
) -> list[str]:
    """Return refresh tokens of ``openid offline_access`` families begun by a sign-in (their
    refreshes carry an ID token)."""
    with sessions() as s, s.begin():
        found = []
        for _ in range(count):
            family = start_family(
                s,
                application_id=w.application_id,
                user_id=w.user_id,
                scope="offline_access openid",
                auth_time=int(time.time()) - 60,
            )
            found.append(
                issue_refresh(
                    s,
                    family_id=family,
                    application_id=w.application_id,
                    access_token_id=None,
                    ttl=auth_settings.refresh_token_ttl,
                )
            )
    return found


def basic(w: World, secret: str | None = None) -> str:
    pair = f"{w.client_id}:{secret or w.client_secret}".encode()
    return "Basic " + base64.b64encode(pair).decode()


def test_refresh_grants_are_answered_as_the_flask_view_answers_them(
    app: Flask,
    world: World,
    auth_settings: AuthSettings,
    stores: Stores,
    sessions: sessionmaker[Session],
) -> None:
    bare, view = TokenPath(app, flask_only(app)), flask_only(app)
    tokens = iter(refresh_tokens(auth_settings, stores, world, 8))
    openid = iter(signed_in_families(sessions, auth_settings, world, 2))
    creds = f"client_id={world.client_id}&client_secret={world.client_secret}"

    def both(make: Callable[[], tuple[bytes, dict[str, str]]]) -> None:
        body, extra = make()
        env = environ(body, **extra)
        assert taken(env)
        got = call(bare, env)
        body, extra = make()
        want = call(view, environ(body, **extra))
        assert got[0] == want[0], (got, want)
        assert got[1] == want[1], (got, want)
        assert same_shape(got[2]) == same_shape(want[2]), (got, want)
        assert got[3] == want[3] == PATH

    def fresh(text: str, **extra: str) -> Callable[[], tuple[bytes, dict[str, str]]]:
        """A request naming a new refresh token each time it is made (``{token}``)."""
        return lambda: (text.format(token=next(tokens)).encode(), extra)

    def fixed(text: str, **extra: str) -> Callable[[], tuple[bytes, dict[str, str]]]:
        return lambda: (text.encode(), extra)

    both(fresh(f"grant_type=refresh_token&{creds}&refresh_token={{token}}&state=s1"))
    both(
        fresh(
            "grant_type=refresh_token&refresh_token={token}",
            HTTP_AUTHORIZATION=basic(world),
        )
    )
    both(fresh(f"grant_type=refresh_token&{creds}&refresh_token={{token}}&scope=openid"))
    both(
        lambda: (
            f"grant_type=refresh_token&{creds}&refresh_token={next(openid)}".encode(),
            {},
        )
    )  # with a new ID token
    both(fixed(f"grant_type=refresh_token&{creds}&refresh_token=unknown&state=s2"))
    both(fixed(f"grant_type=refresh_token&{creds}"))
    both(fixed(f"grant_type=refresh_token&client_id={world.client_id}&client_secret=bad"))
    both(fixed("grant_type=refresh_token&refresh_token=x", HTTP_AUTHORIZATION=basic(world, "no")))
    both(fixed(f"grant_type=refresh_token&{creds}&refresh_token=a&refresh_token=b"))
    both(fixed(f"grant_type=refresh_token&{creds}&refresh_token=%00"))  # raised before Authlib
    both(fixed(f"grant_type=refresh_token&{creds}&refresh_token=x&client_id=another"))


def test_other_requests_go_to_flask() -> None:
    assert taken(environ(b"grant_type=refresh_token"))
    assert not taken(environ(b"x", QUERY_STRING="grant_type=refresh_token"))
    assert not taken(environ(b"x", REQUEST_METHOD="GET"))
    assert not taken(environ(b"{}", CONTENT_TYPE="application/json"))
    assert not taken(environ(b"x", PATH_INFO="/oauth2/revoke"))
    assert not taken(environ(b"x" * 20000))
    assert not taken(environ(b"", CONTENT_LENGTH=""))


def test_the_hooks_are_the_ones_the_token_path_accounts_for(app: Flask) -> None:
    """A hook added to the app must be added to ``auth_server.token_path`` (or the token path
    must leave the token endpoint to Flask)."""
    assert {getattr(f, "__name__", "") for f in app.before_request_funcs[None]} == BARE_HOOKS
    assert set(app.before_request_funcs) == {None}
    assert {f.__name__ for f in app.after_request_funcs[None]} == BARE_AFTER_HOOKS
    assert set(app.after_request_funcs) == {None}
    assert app.teardown_request_funcs == {None: [close_request_db]}
    assert not app.url_value_preprocessors and not app.teardown_appcontext_funcs
