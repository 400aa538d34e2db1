"""M2: disabling a user or an application ends their tokens, codes and sessions at once.

Before the fix, ``enabled = false`` only stopped new grants: a token already issued (an offline
one lives 25 years) kept working at both services. Here the operator disables with the
``artcat`` command line, and the very next request with each token is refused, whether Redis
holds the token's record (a tombstone now) or not (the read-through from SQL).
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from redis import Redis
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application, User
from common.settings import AuthSettings, Settings
from common.tokens import digest
from tests.functional.cli_support import cli_env, cli_refuses, run_cli
from tests.functional.oauth_support import (
    PASSWORD,
    REDIRECT_URI,
    World,
    code_params,
    get_artists,
    make_code,
    make_world,
    post,
)
from tests.pages import sign_in
from tests.servers import LiveServer, forget_sign_in_throttle

pytestmark = pytest.mark.functional


@pytest.fixture
def app_with_redirect_uri(
    clean_db: Any,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    redis_client: Redis,
) -> World:
    """An application with a registered redirect URI and its owner, in an empty database.

    It is first-party, so that its user tokens may read ``/api/applications`` (the probe of
    ``at_auth``)."""
    forget_sign_in_throttle(redis_client, auth_settings.redis_prefix)
    w = make_world(sessions, auth_settings, redirect_uris=[REDIRECT_URI])
    with sessions() as s, s.begin():
        s.get_one(Application, w.application_id).first_party = True
    return w


@pytest.fixture
def env(base_settings: Settings) -> dict[str, str]:
    """The CLI's environment: the servers' own database and Redis."""
    return cli_env(base_settings)


def user_token(auth: LiveServer, w: World) -> str:
    """Get a user access token by the credentials grant."""
    r = post(auth, w.password_grant())
    assert r.status_code == 200, r.text
    return str(r.json()["access_token"])


def xapp_token(auth: LiveServer, w: World) -> requests.Response:
    """Ask for an XAPP token with the world's client credentials."""
    return requests.post(f"{auth.url}/api/tokens/xapp_token", data=w.creds, timeout=10)


def at_auth(auth: LiveServer, w: World, token: str) -> int:
    """Return the status of an auth server API call made with a user token."""
    r = requests.get(
        f"{auth.url}/api/applications/{w.application_id}",
        headers={"X-Access-Token": token},
        timeout=10,
    )
    return r.status_code


def expire_at_auth(auth: LiveServer, token: str) -> int:
    """Return the status of ``DELETE /api/tokens/access_token``: 401 for a token not live."""
    r = requests.delete(
        f"{auth.url}/api/tokens/access_token", headers={"X-Access-Token": token}, timeout=10
    )
    return r.status_code


def forget_in_redis(redis: Redis, settings: Settings, token: str) -> None:
    """Delete a token's Redis key, so the next lookup reads through from SQL."""
    redis.delete(f"{settings.redis_prefix}:tok:{digest(token)}")


def test_disabling_a_user_ends_their_tokens_codes_and_sign_in(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_with_redirect_uri: World,
    env: dict[str, str],
    sessions: sessionmaker[Session],
    redis_client: Redis,
    base_settings: Settings,
) -> None:
    token = user_token(auth_server, app_with_redirect_uri)
    xapp = xapp_token(auth_server, app_with_redirect_uri).json()["token"]
    code = make_code(sessions, app_with_redirect_uri)
    assert get_artists(resource_server, token) == 200
    assert at_auth(auth_server, app_with_redirect_uri, token) == 200
    browser = requests.Session()
    assert (
        sign_in(browser, auth_server.url, app_with_redirect_uri.email, PASSWORD).status_code == 302
    )
    assert browser.get(f"{auth_server.url}/account", allow_redirects=False).status_code == 200

    out = run_cli(env, "users", "disable", app_with_redirect_uri.email)
    assert f"user {app_with_redirect_uri.email} disabled" in out and "1 live token(s)" in out

    assert get_artists(resource_server, token) == 401
    assert at_auth(auth_server, app_with_redirect_uri, token) == 401
    forget_in_redis(redis_client, base_settings, token)  # the read-through path
    assert get_artists(resource_server, token) == 401
    assert at_auth(auth_server, app_with_redirect_uri, token) == 401
    # The application's own token is not the user's: it still works.
    assert get_artists(resource_server, xapp) == 200

    # No new token, no sign-in on the page, no code redeemed.
    again = post(auth_server, app_with_redirect_uri.password_grant())
    assert again.status_code in (400, 401) and "access_token" not in again.json()
    with requests.Session() as web:
        page = sign_in(web, auth_server.url, app_with_redirect_uri.email, PASSWORD)
        assert page.status_code == 400 and "Location" not in page.headers
    redeemed = post(auth_server, code_params(app_with_redirect_uri, code))
    assert redeemed.status_code in (400, 401) and "access_token" not in redeemed.json()
    with sessions() as s:
        assert (
            s.get_one(User, app_with_redirect_uri.user_id).session_generation == 1
        )  # sessions ended
    signed_out = browser.get(f"{auth_server.url}/account", allow_redirects=False)
    assert signed_out.status_code == 302 and "/account/sign_in" in signed_out.headers["Location"]
    browser.close()

    # Enabling lets the user back in, and brings no old token back.
    assert "enabled" in run_cli(env, "users", "enable", app_with_redirect_uri.email)
    forget_in_redis(redis_client, base_settings, token)
    assert get_artists(resource_server, token) == 401
    assert expire_at_auth(auth_server, token) == 401
    fresh = user_token(auth_server, app_with_redirect_uri)
    assert get_artists(resource_server, fresh) == 200


def test_disabling_an_application_ends_every_token_it_holds(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_with_redirect_uri: World,
    env: dict[str, str],
    sessions: sessionmaker[Session],
    redis_client: Redis,
    base_settings: Settings,
) -> None:
    token = user_token(auth_server, app_with_redirect_uri)
    xapp = xapp_token(auth_server, app_with_redirect_uri).json()["token"]
    code = make_code(sessions, app_with_redirect_uri)
    for t in (token, xapp):
        assert get_artists(resource_server, t) == 200
    assert at_auth(auth_server, app_with_redirect_uri, token) == 200

    out = run_cli(env, "apps", "disable", app_with_redirect_uri.client_id)
    assert (
        f"application {app_with_redirect_uri.client_id} disabled" in out
        and "2 live token(s)" in out
    )

    for t in (token, xapp):
        assert get_artists(resource_server, t) == 401
        forget_in_redis(redis_client, base_settings, t)
        assert get_artists(resource_server, t) == 401
        assert expire_at_auth(auth_server, t) == 401
    assert at_auth(auth_server, app_with_redirect_uri, token) == 401
    assert xapp_token(auth_server, app_with_redirect_uri).status_code == 401
    again = post(auth_server, app_with_redirect_uri.password_grant())
    assert again.status_code in (400, 401) and "access_token" not in again.json()
    redeemed = post(auth_server, code_params(app_with_redirect_uri, code))
    assert redeemed.status_code in (400, 401) and "access_token" not in redeemed.json()

    run_cli(env, "apps", "enable", app_with_redirect_uri.client_id)
    for t in (token, xapp):
        forget_in_redis(redis_client, base_settings, t)
        assert get_artists(resource_server, t) == 401
    new_xapp = xapp_token(auth_server, app_with_redirect_uri)
    assert new_xapp.status_code == 201
    assert get_artists(resource_server, new_xapp.json()["token"]) == 200


def test_the_token_check_refuses_a_disabled_owner_on_a_redis_miss(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_with_redirect_uri: World,
    sessions: sessionmaker[Session],
    redis_client: Redis,
    base_settings: Settings,
) -> None:
    """A user disabled without the command (straight in SQL): their live tokens are refused as
    soon as Redis no longer holds them, and never written back to Redis."""
    token = user_token(auth_server, app_with_redirect_uri)
    with sessions() as s, s.begin():
        s.execute(
            update(User).where(User.id == app_with_redirect_uri.user_id).values(enabled=False)
        )
    forget_in_redis(redis_client, base_settings, token)
    assert get_artists(resource_server, token) == 401
    forget_in_redis(redis_client, base_settings, token)
    assert at_auth(auth_server, app_with_redirect_uri, token) == 401
    record = redis_client.get(f"{base_settings.redis_prefix}:tok:{digest(token)}")
    assert record == b"X"  # refused, not published


def test_unknown_names_are_refused_clearly(env: dict[str, str], clean_db: Any) -> None:
    assert "no user with email" in cli_refuses(env, "users", "disable", "nobody@example.org")
    assert "no application with client id" in cli_refuses(env, "apps", "disable", "nope")
