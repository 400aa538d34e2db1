"""A third-party application's user token cannot list or read the user's applications.

The attack: a user signs in to some third-party application, which then calls
``GET /api/applications`` (and ``/api/applications/{id}``) with the user's token and learns the
client ids and redirect URIs of every application the user has registered. Now only a token
issued to a first-party application may read them, as only such a token may write them: every
third-party read is answered 403, shows none of the applications, and is never cached. The
user's first-party token still reads them.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from redis import Redis
from sqlalchemy.orm import Session, sessionmaker

from common.settings import AuthSettings, Settings
from tests.functional.cli_support import cli_env
from tests.functional.oauth_support import World, make_world
from tests.functional.security.test_m1_first_party import (
    CONSOLE_CB,
    VICTIM_CB,
    api,
    first_party_app,
    token_for,
)
from tests.servers import LiveServer, forget_sign_in_throttle

pytestmark = pytest.mark.functional


@pytest.fixture
def third_party_app(
    clean_db: Any,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    redis_client: Redis,
) -> World:
    """A user and a third-party application they signed in to."""
    forget_sign_in_throttle(redis_client, auth_settings.redis_prefix)
    return make_world(sessions, auth_settings, redirect_uris=[VICTIM_CB], name="Third Party")


@pytest.fixture
def env(base_settings: Settings) -> dict[str, str]:
    """The CLI's environment: the servers' own database and Redis."""
    return cli_env(base_settings)


def test_a_third_party_token_cannot_read_the_users_applications(
    auth_server: LiveServer, third_party_app: World, env: dict[str, str]
) -> None:
    console = first_party_app(env, third_party_app.email)
    third = token_for(
        auth_server, third_party_app.client_id, third_party_app.client_secret, third_party_app.email
    )
    reads = [
        api(auth_server),
        api(auth_server, f"?user_id={third_party_app.user_id}"),
        api(auth_server, f"?user_id={third_party_app.user_id}&size=100"),
        api(auth_server, f"/{console['id']}"),
        api(auth_server, f"/{third_party_app.application_id}"),
    ]
    for url in reads:
        r = requests.get(url, headers=third, timeout=10, allow_redirects=False)
        assert r.status_code == 403, (url, r.status_code, r.text)
        answer = r.json()
        assert answer["type"] == "other_error" and "first-party" in answer["message"]
        assert r.headers["Cache-Control"] == "no-store"
        assert "Location" not in r.headers
        for secret_of_the_user in (console["client_id"], CONSOLE_CB, console["id"], VICTIM_CB):
            assert secret_of_the_user not in r.text, (url, secret_of_the_user)
    # The same token as a Bearer credential is refused alike.
    bearer = {"Authorization": "Bearer " + third["X-Access-Token"]}
    r = requests.get(
        api(auth_server, f"?user_id={third_party_app.user_id}"), headers=bearer, timeout=10
    )
    assert r.status_code == 403 and console["client_id"] not in r.text

    # The user's first-party token reads them (and no secret).
    own = token_for(
        auth_server, console["client_id"], console["client_secret"], third_party_app.email
    )
    listing = requests.get(
        api(auth_server, f"?user_id={third_party_app.user_id}"), headers=own, timeout=10
    )
    assert listing.status_code == 200 and listing.headers["Cache-Control"] == "no-store"
    shown = listing.json()["_embedded"]["applications"]
    assert {a["id"] for a in shown} == {third_party_app.application_id, console["id"]}
    assert console["client_secret"] not in listing.text
    item = requests.get(api(auth_server, f"/{console['id']}"), headers=own, timeout=10)
    assert item.status_code == 200 and item.json()["client_id"] == console["client_id"]
    assert "client_secret" not in item.json()
