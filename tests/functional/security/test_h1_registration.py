"""H1 (registration): an application registers only redirect URIs codes may safely go to.

Before the fix, ``artcat apps create`` registered no redirect URI by default, and an application
without one had its codes delivered wherever a crafted link said. Now the browser flow needs a
registered URI, so every way of registering one (the ``/api/applications`` API, the developer
page and the command line) refuses a URI the policy refuses, with its reason, and the page and
the command line require one unless the application will not use the browser flow.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from redis import Redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from common.settings import AuthSettings, Settings
from tests.functional.cli_support import cli_env, cli_refuses, run_cli
from tests.functional.oauth_support import PASSWORD, World, make_world, post
from tests.pages import forms, sign_in, text
from tests.servers import LiveServer, forget_sign_in_throttle

pytestmark = pytest.mark.functional

GOOD_CB = "https://gallery.example.org/cb"
# Each refused URI, with a word of the reason the refusal gives.
REFUSED = [
    pytest.param("javascript:alert(1)", "javascript", id="javascript"),
    pytest.param("http://evil.example/cb", "https", id="plain-http-host"),
    pytest.param("https://x.example/cb#frag", "fragment", id="fragment"),
    pytest.param("data:text/html,<script>alert(1)</script>", "", id="data"),
    pytest.param("https://user@x.example/cb", "user", id="userinfo"),
    pytest.param("file:///etc/passwd", "file", id="file"),
    pytest.param("//x.example/cb", "absolute", id="relative"),
    pytest.param("myapp:/callback", "reverse-domain", id="bare-custom-scheme"),
]


@pytest.fixture
def registering_owner(
    clean_db: Any,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    redis_client: Redis,
) -> World:
    """A user with a first-party application (whose token may register applications)."""
    forget_sign_in_throttle(redis_client, auth_settings.redis_prefix)
    w = make_world(sessions, auth_settings, redirect_uris=[GOOD_CB])
    with sessions() as s, s.begin():
        s.get_one(Application, w.application_id).first_party = True
    return w


@pytest.fixture
def token(auth_server: LiveServer, registering_owner: World) -> dict[str, str]:
    """The first-party application's user token header."""
    r = post(auth_server, registering_owner.password_grant())
    assert r.status_code == 200, r.text
    return {"X-Access-Token": r.json()["access_token"]}


@pytest.fixture
def web(auth_server: LiveServer, registering_owner: World) -> Iterator[requests.Session]:
    """A browser signed in as the world's user."""
    with requests.Session() as s:
        assert sign_in(s, auth_server.url, registering_owner.email, PASSWORD).status_code == 302
        yield s


def app_count(sessions: sessionmaker[Session]) -> int:
    """Return how many applications exist."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(Application)) or 0)


def register_on_page(
    web: requests.Session, base: str, *, name: str, uris: str, browser_flow: bool = True
) -> requests.Response:
    """Fill and send the developer page's registration form."""
    page = web.get(f"{base}/account/applications")
    assert page.status_code == 200
    f = next(f for f in forms(page.text) if f.action.endswith("/account/applications"))
    data = {**f.fields, "name": name, "redirect_uris": uris}
    if not browser_flow:
        data.pop("browser_flow")  # an unticked checkbox is not sent
    return web.post(base + f.action, data=data, allow_redirects=False)


@pytest.mark.parametrize(("uri", "reason"), REFUSED)
def test_a_refused_uri_is_refused_by_the_api_the_page_and_the_cli(
    auth_server: LiveServer,
    registering_owner: World,
    token: dict[str, str],
    web: requests.Session,
    sessions: sessionmaker[Session],
    base_settings: Settings,
    uri: str,
    reason: str,
) -> None:
    before = app_count(sessions)
    created = requests.post(
        f"{auth_server.url}/api/applications",
        json={"name": "Sneaky", "redirect_urls": [GOOD_CB, uri]},
        headers=token,
        timeout=10,
    )
    assert created.status_code == 400, created.text
    body = created.json()
    assert body["type"] == "param_error" and list(body["detail"]) == ["redirect_urls"]
    assert reason in body["message"]
    changed = requests.put(
        f"{auth_server.url}/api/applications/{registering_owner.application_id}",
        json={"redirect_urls": [uri]},
        headers=token,
        timeout=10,
    )
    assert changed.status_code == 400 and changed.json()["type"] == "param_error"

    page = register_on_page(web, auth_server.url, name="Sneaky", uris=f"{GOOD_CB}\n{uri}")
    assert page.status_code == 400
    assert reason in text(page.text) and 'id="redirect_uris-error"' in page.text

    env = cli_env(base_settings)
    out = cli_refuses(
        env,
        "apps",
        "create",
        "--name",
        "Sneaky",
        "--owner",
        registering_owner.email,
        "--redirect-uri",
        uri,
    )
    assert "--redirect-uri" in out and reason in out

    assert app_count(sessions) == before
    with sessions() as s:
        assert s.get_one(Application, registering_owner.application_id).redirect_uris == [GOOD_CB]


def test_the_page_and_the_cli_require_a_redirect_uri_for_the_browser_flow(
    auth_server: LiveServer,
    registering_owner: World,
    web: requests.Session,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    before = app_count(sessions)
    missing = register_on_page(web, auth_server.url, name="No URI", uris="")
    assert missing.status_code == 400
    assert "Give at least one redirect URI" in text(missing.text)
    env = cli_env(base_settings)
    out = cli_refuses(env, "apps", "create", "--name", "No URI", "--owner", registering_owner.email)
    assert "--redirect-uri" in out and "--no-browser-flow" in out
    assert app_count(sessions) == before

    # An application that will not use the browser flow says so, and registers no URI.
    unticked = register_on_page(web, auth_server.url, name="Backend", uris="", browser_flow=False)
    assert unticked.status_code == 201, text(unticked.text)
    contradiction = register_on_page(
        web, auth_server.url, name="Both", uris=GOOD_CB, browser_flow=False
    )
    assert contradiction.status_code == 400
    out = run_cli(
        env,
        "apps",
        "create",
        "--name",
        "Worker",
        "--owner",
        registering_owner.email,
        "--no-browser-flow",
    )
    assert "cannot sign users in through the browser" in out
    assert "client_credentials" in out
    both = cli_refuses(
        env,
        "apps",
        "create",
        "--name",
        "Both",
        "--owner",
        registering_owner.email,
        "--no-browser-flow",
        "--redirect-uri",
        GOOD_CB,
    )
    assert "--no-browser-flow" in both
    with sessions() as s:
        made = dict(
            s.execute(
                select(Application.name, Application.redirect_uris).where(
                    Application.name.in_(["Backend", "Worker", "Both"])
                )
            ).all()
        )
    assert made == {"Backend": [], "Worker": []}

    ok = json.loads(
        run_cli(
            env,
            "apps",
            "create",
            "--name",
            "Phone",
            "--owner",
            registering_owner.email,
            "--redirect-uri",
            "com.example.phone:/cb",
            "--redirect-uri",
            "http://127.0.0.1:8123/cb",
            "--json",
        )
    )
    assert ok["redirect_uris"] == ["com.example.phone:/cb", "http://127.0.0.1:8123/cb"]
