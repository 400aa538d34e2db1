"""M1: a third-party application's user token cannot manage the user's applications.

Before the fix, any application a user signed in to could, with that user's token, register
new applications (and read their secrets), point the user's other applications' redirect URIs
at itself, or delete them. Now only tokens issued to an application the operator marked
first-party may write ``/api/applications``; every other token is answered 403 and changes
nothing. (Reads are first-party only too: see ``test_third_party_applications.py``.)
"""

from __future__ import annotations

import json
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
from tests.servers import LiveServer, forget_sign_in_throttle

pytestmark = pytest.mark.functional

VICTIM_CB = "https://gallery.example.org/cb"
CONSOLE_CB = "https://console.example.org/cb"
THIEF_CB = "https://thief.example/cb"


@pytest.fixture
def signed_in_third_party(
    clean_db: Any,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
    redis_client: Redis,
) -> World:
    """A user and a third-party application they signed in to (made as any developer would)."""
    forget_sign_in_throttle(redis_client, auth_settings.redis_prefix)
    return make_world(sessions, auth_settings, redirect_uris=[VICTIM_CB], name="Third Party")


@pytest.fixture
def env(base_settings: Settings) -> dict[str, str]:
    """The CLI's environment: the servers' own database and Redis."""
    return cli_env(base_settings)


def token_for(auth: LiveServer, client_id: str, client_secret: str, email: str) -> dict[str, str]:
    """Sign the user in to an application with the credentials grant; return its token header."""
    r = post(
        auth,
        {
            "client_id": client_id,
            "client_secret": client_secret,
            "grant_type": "credentials",
            "email": email,
            "password": PASSWORD,
        },
    )
    assert r.status_code == 200, r.text
    return {"X-Access-Token": r.json()["access_token"]}


def first_party_app(env: dict[str, str], owner: str) -> dict[str, Any]:
    """Register the service's own application with the operator's command."""
    out = run_cli(
        env,
        "apps",
        "create",
        "--name",
        "Console",
        "--owner",
        owner,
        "--redirect-uri",
        CONSOLE_CB,
        "--first-party",
        "--json",
    )
    created: dict[str, Any] = json.loads(out)
    assert created["first_party"] is True
    return created


def snapshot(sessions: sessionmaker[Session]) -> list[tuple[Any, ...]]:
    """Return every application as it stands (to prove that nothing changed)."""
    with sessions() as s:
        rows = s.execute(
            select(
                Application.id,
                Application.name,
                Application.redirect_uris,
                Application.client_secret_digest,
            ).order_by(Application.id)
        ).all()
        return [tuple(r) for r in rows]


def api(auth: LiveServer, path: str = "") -> str:
    """Return the URL of an applications route."""
    return f"{auth.url}/api/applications{path}"


def test_a_third_party_token_cannot_create_change_or_delete_applications(
    auth_server: LiveServer,
    signed_in_third_party: World,
    env: dict[str, str],
    sessions: sessionmaker[Session],
) -> None:
    console = first_party_app(env, signed_in_third_party.email)
    third = token_for(
        auth_server,
        signed_in_third_party.client_id,
        signed_in_third_party.client_secret,
        signed_in_third_party.email,
    )
    before = snapshot(sessions)

    attempts = [
        ("POST", api(auth_server), {"name": "Backdoor", "redirect_urls": [THIEF_CB]}),
        ("PUT", api(auth_server, f"/{console['id']}"), {"redirect_urls": [THIEF_CB]}),
        ("PUT", api(auth_server, f"/{signed_in_third_party.application_id}"), {"name": "Renamed"}),
        ("DELETE", api(auth_server, f"/{console['id']}"), None),
        ("DELETE", api(auth_server, f"/{signed_in_third_party.application_id}"), None),
    ]
    for method, url, body in attempts:
        r = requests.request(method, url, json=body, headers=third, timeout=10)
        assert r.status_code == 403, (method, url, r.text)
        answer = r.json()
        assert answer["type"] == "other_error" and "first-party" in answer["message"]
        assert "client_secret" not in r.text
        assert r.headers["Cache-Control"] == "no-store"
    assert snapshot(sessions) == before

    # Reading is refused too: see test_third_party_applications.py.


def test_a_first_party_token_manages_applications(
    auth_server: LiveServer,
    signed_in_third_party: World,
    env: dict[str, str],
    sessions: sessionmaker[Session],
) -> None:
    console = first_party_app(env, signed_in_third_party.email)
    own = token_for(
        auth_server, console["client_id"], console["client_secret"], signed_in_third_party.email
    )

    created = requests.post(
        api(auth_server),
        json={"name": "New", "redirect_urls": [VICTIM_CB]},
        headers=own,
        timeout=10,
    )
    assert created.status_code == 201, created.text
    assert created.json()["client_secret"] and created.headers["Cache-Control"] == "no-store"
    new_id = created.json()["id"]
    changed = requests.put(
        api(auth_server, f"/{signed_in_third_party.application_id}"),
        json={"redirect_urls": ["https://gallery.example.org/cb2"]},
        headers=own,
        timeout=10,
    )
    assert changed.status_code == 200, changed.text
    deleted = requests.delete(api(auth_server, f"/{new_id}"), headers=own, timeout=10)
    assert deleted.status_code == 204
    with sessions() as s:
        app = s.get_one(Application, signed_in_third_party.application_id)
        assert app.redirect_uris == ["https://gallery.example.org/cb2"]
        assert s.get(Application, new_id) is None

    # The operator takes the mark away: the same token may no longer write.
    assert "third-party" in run_cli(env, "apps", "set", console["client_id"], "--third-party")
    again = requests.post(
        api(auth_server),
        json={"name": "Another", "redirect_urls": [VICTIM_CB]},
        headers=own,
        timeout=10,
    )
    assert again.status_code == 403
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(Application)) == 2


def test_a_public_client_is_registered_without_a_secret(
    signed_in_third_party: World, env: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    out = run_cli(
        env,
        "apps",
        "create",
        "--name",
        "Phone",
        "--owner",
        signed_in_third_party.email,
        "--redirect-uri",
        "com.example.phone:/cb",
        "--public",
        "--json",
    )
    created = json.loads(out)
    assert "client_secret" not in created and created["public_client"] is True
    with sessions() as s:
        app = s.get_one(Application, created["id"])
        assert app.public_client and not app.first_party
    refused = cli_refuses(env, "apps", "rotate-secret", created["client_id"])
    assert "public client" in refused
