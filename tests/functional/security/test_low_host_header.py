"""The Host header steers no link and no issuer: PUBLIC_URL in production, loopback otherwise.

Attack: send ``Host: evil.example`` and look for it in the API root's links, the OAuth metadata
document's issuer and endpoints, and a password reset link sent by email. With PUBLIC_URL set
none of them may carry it. Without PUBLIC_URL (development) the services build links from the
Host header, so they answer only a loopback one; production refuses to start without PUBLIC_URL.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from aiosmtpd.controller import Controller
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app as create_auth
from common.settings import AuthSettings, ResourceSettings, Settings, SettingsError
from common.stores import Stores
from tests.functional.process_support import free_port
from tests.functional.security.https_support import (
    FORGED_HOST,
    PUBLIC_URL,
    call,
    checked,
    https_auth,
    https_resource,
)
from tests.functional.test_password_reset import Inbox, ask_for_reset, link_in
from tests.pages import Account, make_account
from tests.servers import LiveServer

FORGED = {"Host": FORGED_HOST}
METADATA = "/.well-known/oauth-authorization-server"


def hrefs(data: Any) -> Iterator[str]:
    """Yield every string value of a JSON document."""
    if isinstance(data, dict):
        for value in data.values():
            yield from hrefs(value)
    elif isinstance(data, list):
        for item in data:
            yield from hrefs(item)
    elif isinstance(data, str):
        yield data


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, int]]:
    """A real SMTP server on a free loopback port, and its inbox."""
    handler = Inbox()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield handler, controller.port
    controller.stop()


@pytest.fixture
def public_auth(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server with PUBLIC_URL set."""
    with https_auth(auth_settings, stores) as live:
        yield live


@pytest.fixture
def public_resource(resource_settings: ResourceSettings, stores: Stores) -> Iterator[LiveServer]:
    """A resource server with PUBLIC_URL set."""
    with https_resource(resource_settings, stores) as live:
        yield live


def test_api_root_links_ignore_a_forged_host(public_resource: LiveServer) -> None:
    r = call("GET", f"{public_resource.url}/api", headers=FORGED)
    assert r.status_code == 200
    links = [v for v in hrefs(r.json()) if "://" in v]
    assert links and all(v.startswith(PUBLIC_URL + "/") for v in links), links
    assert FORGED_HOST not in r.text


def test_metadata_issuer_ignores_a_forged_host(public_auth: LiveServer) -> None:
    r = call("GET", public_auth.url + METADATA, headers=FORGED)
    assert r.status_code == 200
    assert r.json()["issuer"] == PUBLIC_URL
    assert FORGED_HOST not in r.text


def test_reset_link_ignores_a_forged_host(
    auth_settings: AuthSettings,
    stores: Stores,
    inbox: tuple[Inbox, int],
    clean_db: Any,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    account: Account = make_account(sessions, base_settings, name="Berthe Morisot")
    mail = {
        "email_enabled": True,
        "smtp_host": "127.0.0.1",
        "smtp_port": inbox[1],
        "smtp_security": "none",
        "smtp_from": "catalog@example.org",
        # The test client speaks plain http to the loopback port: its cookie jar would keep a
        # Secure session cookie (and the form's CSRF token with it) to itself.
        "session_cookie_secure": False,
    }
    settings = dataclasses.replace(auth_settings, public_url=PUBLIC_URL, **mail)
    app = create_auth(settings, stores)
    with checked(app) as live, requests.Session() as web:
        web.headers.update({**FORGED, "Connection": "close"})
        r = ask_for_reset(web, live.url, account.email)
        assert r.status_code == 200, r.text
        [message] = inbox[0].wait_for(1)
    app.extensions["artcat.mailer"].close()
    link = link_in(message)
    assert link.startswith(f"{PUBLIC_URL}/account/password/reset/"), link
    assert FORGED_HOST not in message.as_string()
    stores.redis.delete(*stores.redis.keys(f"{auth_settings.redis_prefix}:pwreset:*") or ["-"])


@pytest.mark.parametrize("path", ["/api", METADATA, "/account/sign_in"])
def test_without_public_url_a_forged_host_is_refused(
    combined_server: LiveServer, path: str
) -> None:
    r = call("GET", combined_server.url + path, headers=FORGED)
    assert r.status_code == 400
    assert r.json()["type"] == "param_error" and "PUBLIC_URL" in r.json()["message"]
    assert FORGED_HOST not in r.text


@pytest.mark.parametrize("host", ["127.0.0.1.evil.example", "localhost.evil.example", "[::2]"])
def test_without_public_url_look_alike_hosts_are_refused(
    combined_server: LiveServer, host: str
) -> None:
    r = call("GET", combined_server.url + METADATA, headers={"Host": host})
    assert r.status_code == 400 and host not in r.text


def test_without_public_url_a_loopback_host_is_served(combined_server: LiveServer) -> None:
    port = combined_server.server.effective_port
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        r = call("GET", combined_server.url + METADATA, headers={"Host": host})
        assert r.status_code == 200 and r.json()["issuer"] == f"http://{host}"
    root = call("GET", combined_server.url + "/api")
    assert root.status_code == 200


def test_production_requires_public_url(tmp_path: Path) -> None:
    env = {"ENVIRONMENT": "production", "SECRET_KEY": "k", "INSTANCE_DIR": str(tmp_path)}
    with pytest.raises(SettingsError, match="PUBLIC_URL"):
        Settings.from_env(env)
    for bad in ("http://api.example.org", "api.example.org", "https://", "https://a.example/?x"):
        with pytest.raises(SettingsError, match="PUBLIC_URL"):
            Settings.from_env({**env, "PUBLIC_URL": bad})
    assert Settings.from_env({**env, "PUBLIC_URL": PUBLIC_URL}).public_url == PUBLIC_URL
    assert Settings.from_env({**env, "PUBLIC_URL": "http://localhost:8080"}).https is False


def test_artcat_serve_refuses_production_without_public_url(tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PUBLIC_URL",)},
        "ENVIRONMENT": "production",
        "INSTANCE_DIR": str(tmp_path / "instance"),
    }
    env.pop("SECRET_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "artcat", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "PUBLIC_URL must be set when ENVIRONMENT=production" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "instance").exists()  # refused before anything was created
