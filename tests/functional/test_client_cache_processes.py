"""The applications each auth server process keeps (``auth_server.clients.ClientCache``), across
processes: two ``artcat serve auth`` processes (granian) on one database and one Redis. Both
have an application in memory; it is then changed through one of them (the applications API,
RFC 7592 client management) or by the command line, and the other answers with the change on
its very next request: a new secret, a disabled or deleted application, another token
response shape or grant types are never served as they were."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from common.settings import AuthSettings, Settings
from tests.functional.cli_support import cli_env, run_cli
from tests.functional.oauth_support import World, make_world
from tests.functional.process_support import REQUEST_TIMEOUT, RedisServer, Service, running
from tests.functional.process_support import service_env as process_env
from tests.functional.registration_support import bearer, initial_token, register

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def owner(module_db: Engine, sessions: sessionmaker[Session], auth_settings: AuthSettings) -> World:
    """A user and a first-party application (its user tokens may manage applications)."""
    w = make_world(sessions, auth_settings)
    with sessions() as s, s.begin():
        s.get_one(Application, w.application_id).first_party = True
    return w


@pytest.fixture(scope="module")
def pair(
    owner: World,
    redis_server: RedisServer,
    base_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[list[Service]]:
    """Two auth server processes, each with a cache of its own."""
    instance = tmp_path_factory.mktemp("clientcache")
    env = process_env(
        base_settings,
        database_url=base_settings.sqlalchemy_url,
        redis_url=redis_server.url,
        instance_dir=instance,
        WSGI_SERVER="granian",
        XAPP_ATTEMPTS_PER_CLIENT="100000/minute",
        XAPP_FAILURES_PER_CLIENT_IP="100000/minute",
    )
    with running([("auth", env), ("auth", env)], instance / "logs") as services:
        yield services


def authenticates(server: Service, creds: dict[str, str]) -> int:
    """Return the status of a revocation (of no token) as this client: the client's own
    authentication only (200 when it passes, 401 when it does not)."""
    r = requests.post(
        f"{server.url}/oauth2/revoke",
        data={**creds, "token": "not-a-token"},
        timeout=REQUEST_TIMEOUT,
    )
    return r.status_code


def xapp(server: Service, creds: dict[str, str]) -> requests.Response:
    """Run the client credentials grant at the token endpoint."""
    return requests.post(
        f"{server.url}/oauth2/access_token",
        data={**creds, "grant_type": "client_credentials"},
        timeout=REQUEST_TIMEOUT,
    )


def test_a_change_through_one_process_or_the_cli_is_seen_by_the_other_at_once(
    pair: list[Service], owner: World, redis_server: RedisServer, base_settings: Settings
) -> None:
    first, second = pair
    signed = requests.post(
        f"{first.url}/oauth2/access_token", data=owner.password_grant(), timeout=REQUEST_TIMEOUT
    )
    assert signed.status_code == 200, signed.text
    headers = {"X-Access-Token": signed.json()["access_token"]}
    created = requests.post(
        f"{first.url}/api/applications", json={"name": "Cached"}, headers=headers, timeout=10
    )
    assert created.status_code == 201, created.text
    app: dict[str, Any] = created.json()
    creds = {"client_id": app["client_id"], "client_secret": app["client_secret"]}
    # Both processes keep the application (standard token responses: expires_in in seconds).
    for server in pair:
        assert authenticates(server, creds) == 200
        assert isinstance(xapp(server, creds).json()["expires_in"], int)

    # Changed through the first process: the second answers in the reference API's shape.
    changed = requests.put(
        f"{first.url}/api/applications/{app['id']}",
        json={"name": "Cached", "standard_token_response": False},
        headers=headers,
        timeout=10,
    )
    assert changed.status_code == 200, changed.text
    assert isinstance(xapp(second, creds).json()["expires_in"], str)

    # A new secret by the command line: the old one is refused everywhere at once.
    env = cli_env(base_settings, REDIS_URL=redis_server.url)
    rotated = run_cli(env, "apps", "rotate-secret", app["client_id"], "--json")
    new_creds = {**creds, "client_secret": json.loads(rotated)["client_secret"]}
    for server in pair:
        assert authenticates(server, creds) == 401
        assert authenticates(server, new_creds) == 200

    # Disabled and enabled again by the command line.
    run_cli(env, "apps", "disable", app["client_id"])
    for server in pair:
        assert authenticates(server, new_creds) == 401
    run_cli(env, "apps", "enable", app["client_id"])
    for server in pair:
        assert authenticates(server, new_creds) == 200

    # Deleted through the second process: the first refuses it at once.
    deleted = requests.delete(
        f"{second.url}/api/applications/{app['id']}", headers=headers, timeout=10
    )
    assert deleted.status_code == 204, deleted.text
    for server in pair:
        assert authenticates(server, new_creds) == 401
        assert xapp(server, new_creds).status_code == 401


def test_a_registration_managed_through_one_process_is_seen_by_the_other_at_once(
    pair: list[Service], sessions: sessionmaker[Session]
) -> None:
    first, second = pair
    metadata = {
        "client_name": "Registered Service",
        "token_endpoint_auth_method": "client_secret_post",
        "grant_types": ["client_credentials"],
        "response_types": [],
    }
    registered = register(first.url, initial_token(sessions), metadata)
    assert registered.status_code == 201, registered.text
    client = registered.json()
    creds = {"client_id": client["client_id"], "client_secret": client["client_secret"]}
    for server in pair:
        assert xapp(server, creds).status_code == 200

    # RFC 7592: replaced without the grant through the first process.
    uri = client["registration_client_uri"]
    management = bearer(client["registration_access_token"])
    replaced = {
        **metadata,
        "client_id": client["client_id"],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "redirect_uris": ["https://client.example/cb"],
    }
    put = requests.put(uri, json=replaced, headers=management, timeout=10)
    assert put.status_code == 200, put.text
    refused = xapp(second, creds)
    assert (refused.status_code, refused.json()["error"]) == (400, "unauthorized_client")

    # RFC 7592: deleted through the second process (its own URI), refused by the first.
    gone = requests.delete(uri.replace(first.url, second.url, 1), headers=management, timeout=10)
    assert gone.status_code == 204, gone.text
    for server in pair:
        assert authenticates(server, creds) == 401
