"""Lower: application creation is throttled per user.

Each application has a rate limit of its own, so a user (or a client acting for one) who could
mint applications without end would multiply their allowance. Now each user may create
``APPLICATIONS_CREATED_PER_USER`` applications in a moving window, through the API and the
developer page together; past it the API answers 429 with Retry-After and the page a clear
form error, and nothing is created. A concurrent burst passes exactly the limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
import requests
from redis import Redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app as create_auth
from common.models import Application
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.oauth_support import PASSWORD, World, make_world, post
from tests.pages import forms, serving, sign_in, text
from tests.servers import CHECKED_PORTS, LiveServer, forget_sign_in_throttle

pytestmark = pytest.mark.functional

LIMIT = 3
CB = "https://gallery.example.org/cb"


@pytest.fixture
def live(auth_settings: AuthSettings, stores: Stores, redis_client: Redis) -> Iterator[LiveServer]:
    """An auth server that lets each user create three applications a day."""
    forget_sign_in_throttle(redis_client, auth_settings.redis_prefix)
    settings = replace(auth_settings, applications_created_per_user=f"{LIMIT}/day")
    with serving(create_auth(settings, stores)) as server:
        CHECKED_PORTS.add(int(server.server.effective_port))  # its answers must fit the document
        yield server
        CHECKED_PORTS.discard(int(server.server.effective_port))


def developer(sessions: sessionmaker[Session], settings: AuthSettings) -> World:
    """A user with a first-party application (whose token may create applications)."""
    w = make_world(sessions, settings, redirect_uris=[CB])
    with sessions() as s, s.begin():
        s.get_one(Application, w.application_id).first_party = True
    return w


def token_of(live: LiveServer, w: World) -> dict[str, str]:
    """Return the token header of the developer's first-party application."""
    r = post(live, w.password_grant())
    assert r.status_code == 200, r.text
    return {"X-Access-Token": r.json()["access_token"]}


def create(live: LiveServer, headers: dict[str, str], name: str) -> requests.Response:
    """Create an application through the API."""
    return requests.post(
        f"{live.url}/api/applications",
        json={"name": name, "redirect_urls": [CB]},
        headers={**headers, "Connection": "close"},
        timeout=10,
    )


def owned(sessions: sessionmaker[Session], w: World) -> int:
    """Return how many applications the developer owns."""
    with sessions() as s:
        stmt = select(func.count()).select_from(Application).where(Application.user_id == w.user_id)
        return int(s.scalar(stmt) or 0)


def test_the_api_and_the_page_share_a_per_user_limit(
    live: LiveServer, clean_db: Any, sessions: sessionmaker[Session], auth_settings: AuthSettings
) -> None:
    w = developer(sessions, auth_settings)
    headers = token_of(live, w)
    for n in range(LIMIT):
        assert create(live, headers, f"App {n}").status_code == 201
    over = create(live, headers, "One too many")
    assert over.status_code == 429
    assert over.json()["type"] == "rate_limit_error" and "per user" in over.json()["message"]
    assert int(over.headers["Retry-After"]) > 0
    assert over.headers["Cache-Control"] == "no-store"
    assert owned(sessions, w) == 1 + LIMIT

    with requests.Session() as web:
        assert sign_in(web, live.url, w.email, PASSWORD).status_code == 302
        page = web.get(f"{live.url}/account/applications")
        register = next(f for f in forms(page.text) if f.action.endswith("/account/applications"))
        r = web.post(
            live.url + register.action,
            data={**register.fields, "name": "From the page", "redirect_uris": CB},
            allow_redirects=False,
        )
        assert r.status_code == 429
        assert "registered too many applications lately" in text(r.text)
    assert owned(sessions, w) == 1 + LIMIT

    # Someone else's allowance is their own.
    other = developer(sessions, auth_settings)
    assert create(live, token_of(live, other), "Theirs").status_code == 201


def test_a_concurrent_burst_creates_no_more_than_the_limit(
    live: LiveServer, clean_db: Any, sessions: sessionmaker[Session], auth_settings: AuthSettings
) -> None:
    w = developer(sessions, auth_settings)
    headers = token_of(live, w)
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(
            pool.map(lambda n: create(live, headers, f"Burst {n}").status_code, range(8))
        )
    assert sorted(statuses) == [201] * LIMIT + [429] * (8 - LIMIT)
    assert owned(sessions, w) == 1 + LIMIT
