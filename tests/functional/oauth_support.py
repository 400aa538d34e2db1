"""Fixtures and helpers of the OAuth tests: a stub social provider over real HTTP, an auth
server configured to use it, and an application with a user in an empty database."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import pytest
import requests
from authlib.oauth1.rfc5849.signature import generate_signature_base_string, hmac_sha1_signature
from authlib.oauth1.rfc5849.wrapper import OAuth1Request
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker
from werkzeug.wrappers import Request

from auth_server.app import create_app as create_auth
from auth_server.codes import issue_code
from common.models import Application, User
from common.settings import AuthSettings
from common.stores import Stores
from tests import factories
from tests.functional.in_process import InProcessServer, in_process, serve_in_process
from tests.servers import LiveServer, start_server

FB_APP_ID = "fb-app-1"
FB_APP_SECRET = "fb-app-secret"
TW_KEY = "tw-consumer-key"
TW_SECRET = "tw-consumer-secret"
REDIRECT_URI = "https://client.example.org/callback"
PASSWORD = "correct horse"

StartResponse = Callable[..., Any]


@dataclass
class StubProvider:
    """Facebook Graph and Twitter endpoints, enough to verify tokens like the real ones do."""

    facebook: dict[str, dict[str, Any]] = field(default_factory=dict)  # token -> app_id, user
    twitter: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)  # token -> ...
    mode: str = "up"  # "up" | "down" (503) | "slow" (longer than the auth server waits)
    calls: list[str] = field(default_factory=list)
    url: str = ""

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        """Answer one provider call."""
        req = Request(environ)
        self.calls.append(req.path)
        if self.mode == "down":
            return _json(start_response, 503, {"error": "unavailable"})
        if self.mode == "slow":
            time.sleep(2.5)
        if req.path == "/facebook/debug_token":
            return self._debug_token(req, start_response)
        if req.path == "/facebook/me":
            return self._me(req, start_response)
        if req.path == "/twitter/1.1/account/verify_credentials.json":
            return self._verify_credentials(req, start_response)
        return _json(start_response, 404, {"error": "not found"})

    def _debug_token(self, req: Request, start_response: StartResponse) -> list[bytes]:
        if req.args.get("access_token") != f"{FB_APP_ID}|{FB_APP_SECRET}":
            return _json(start_response, 400, {"error": {"message": "bad app token"}})
        entry = self.facebook.get(req.args.get("input_token", ""))
        if entry is None:
            return _json(start_response, 200, {"data": {"is_valid": False}})
        data = {"app_id": entry["app_id"], "is_valid": True, "user_id": entry["user"]["id"]}
        return _json(start_response, 200, {"data": data})

    def _me(self, req: Request, start_response: StartResponse) -> list[bytes]:
        token = req.args.get("access_token", "")
        proof = hmac.new(FB_APP_SECRET.encode(), token.encode(), hashlib.sha256).hexdigest()
        entry = self.facebook.get(token)
        if entry is None or req.args.get("appsecret_proof") != proof:
            return _json(start_response, 400, {"error": {"message": "invalid token"}})
        # The Graph API answers the fields asked for (id by default), as far as it has them.
        fields = req.args.get("fields", "id").split(",")
        return _json(start_response, 200, {k: v for k, v in entry["user"].items() if k in fields})

    def _verify_credentials(self, req: Request, start_response: StartResponse) -> list[bytes]:
        header = req.headers.get("Authorization", "")
        signed = OAuth1Request("GET", req.url, headers={"Authorization": header, "Host": req.host})
        entry = self.twitter.get(signed.token or "")
        if entry is None or signed.client_id != TW_KEY:
            return _json(start_response, 401, {"errors": [{"code": 89}]})
        expected = hmac_sha1_signature(generate_signature_base_string(signed), TW_SECRET, entry[0])
        if signed.signature_method != "HMAC-SHA1" or not hmac.compare_digest(
            expected, signed.signature or ""
        ):
            return _json(start_response, 401, {"errors": [{"code": 32}]})
        # Twitter gives the email only when asked, and only a verified one (the stub's users'
        # emails are verified ones).
        user = dict(entry[1])
        if req.args.get("include_email") != "true":
            user.pop("email", None)
        return _json(start_response, 200, user)


def _json(start_response: StartResponse, status: int, body: Any) -> list[bytes]:
    start_response(f"{status} X", [("Content-Type", "application/json")])
    return [orjson.dumps(body)]


@pytest.fixture(scope="session")
def provider() -> Iterator[StubProvider]:
    """The stub social provider, served over real HTTP."""
    stub = StubProvider()
    live = start_server(stub)
    stub.url = live.url
    yield stub
    live.stop()


@pytest.fixture(scope="session")
def oauth_settings(auth_settings: AuthSettings, provider: StubProvider) -> AuthSettings:
    """Auth server settings with both social providers pointing at the stub."""
    return replace(
        auth_settings,
        facebook_app_id=FB_APP_ID,
        facebook_app_secret=FB_APP_SECRET,
        facebook_graph_url=f"{provider.url}/facebook",
        twitter_consumer_key=TW_KEY,
        twitter_consumer_secret=TW_SECRET,
        twitter_api_url=f"{provider.url}/twitter",
        social_timeout=1,
        # Every test signs in from 127.0.0.1; the throttle test runs its own server.
        login_attempts_per_ip="100000/minute",
        login_attempts_per_account="100000/minute",
        login_attempts_per_account_ip="100000/minute",
    )


@pytest.fixture(scope="session")
def oauth_server(oauth_settings: AuthSettings, stores: Stores) -> Iterator[InProcessServer]:
    """An auth server on the test stores, with the stub providers, served in-process."""
    served = serve_in_process(create_auth(oauth_settings, stores))
    yield served
    served.stop()


@pytest.fixture(scope="session")
def http_oauth_server(oauth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server over real HTTP on the test stores, with the stub providers."""
    live = start_server(create_auth(oauth_settings, stores))
    yield live
    live.stop()


@contextmanager
def serve_auth(settings: AuthSettings, stores: Stores, **options: Any) -> Iterator[LiveServer]:
    """Run an extra auth server with other settings (and waitress ``options``) for the
    duration of a block."""
    live = start_server(create_auth(settings, stores), **options)
    try:
        yield live
    finally:
        live.stop()


@contextmanager
def auth_in_process(settings: AuthSettings, stores: Stores) -> Iterator[InProcessServer]:
    """Serve an extra auth server with other settings in-process for the duration of a block."""
    with in_process(create_auth(settings, stores)) as served:
        yield served


@dataclass(frozen=True)
class World:
    """An application (with its clear secret) and a user with a password."""

    client_id: str
    client_secret: str
    application_id: str
    user_id: str
    email: str

    @property
    def creds(self) -> dict[str, str]:
        """Return the client credentials as request parameters."""
        return {"client_id": self.client_id, "client_secret": self.client_secret}

    def password_grant(self, **extra: str) -> dict[str, str]:
        """Return the parameters of a credentials grant for the user."""
        return {
            **self.creds,
            "grant_type": "credentials",
            "email": self.email,
            "password": PASSWORD,
            **extra,
        }


def make_world(sessions: sessionmaker[Session], settings: AuthSettings, **app: Any) -> World:
    """Add a user and an application it owns."""
    with sessions() as s, s.begin():
        user = factories.user(s, settings, password=PASSWORD)
        new = factories.application(s, user, **app)
        return World(
            new.application.client_id, new.client_secret, new.application.id, user.id, user.email
        )


def refresh_world(sessions: sessionmaker[Session], settings: AuthSettings, **columns: Any) -> World:
    """Add a user and an application registered for refresh tokens (and ``columns``)."""
    w = make_world(sessions, settings)
    with sessions() as s, s.begin():
        s.execute(
            update(Application)
            .where(Application.id == w.application_id)
            .values(refresh_tokens=True, **columns)
        )
    return w


@pytest.fixture
def app_and_user(
    clean_db: Any, sessions: sessionmaker[Session], oauth_settings: AuthSettings
) -> World:
    """An application and a user in an empty database."""
    return make_world(sessions, oauth_settings)


def make_code(
    sessions: sessionmaker[Session],
    w: World,
    *,
    redirect_uri: str = REDIRECT_URI,
    scope: str = "",
    challenge: str | None = None,
    ttl: int = 600,
) -> str:
    """Issue an authorization code for the world's user and application, as consent does."""
    with sessions() as s, s.begin():
        return issue_code(
            s,
            application=s.get_one(Application, w.application_id),
            user=s.get_one(User, w.user_id),
            redirect_uri=redirect_uri,
            scope=scope,
            code_challenge=challenge,
            code_challenge_method="S256" if challenge else None,
            ttl=ttl,
        )


def token_url(live: LiveServer) -> str:
    """Return the token endpoint of a server."""
    return f"{live.url}/oauth2/access_token"


def post(live: LiveServer, data: dict[str, str], **kw: Any) -> requests.Response:
    """POST a form to the token endpoint (on a connection that closes, so servers stop fast)."""
    headers = {"Connection": "close", **kw.pop("headers", {})}
    return requests.post(token_url(live), data=data, headers=headers, timeout=10, **kw)


def refresh(live: LiveServer, w: World, token: str, **extra: str) -> requests.Response:
    """Refresh with ``token`` as the world's client."""
    return post(live, {**w.creds, "grant_type": "refresh_token", "refresh_token": token, **extra})


def code_params(w: World, code: str, **extra: str) -> dict[str, str]:
    """Return the parameters of an authorization code exchange."""
    return {
        **w.creds,
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        **extra,
    }


def get_artists(resource: LiveServer, token: str) -> int:
    """Return the status of a catalog call made with ``token``."""
    r = requests.get(f"{resource.url}/api/artists", headers={"X-Access-Token": token}, timeout=10)
    return r.status_code


def assert_oauth_error(r: requests.Response, status: int, error: str) -> dict[str, Any]:
    """Check an OAuth error answer and return its body."""
    assert r.status_code == status, r.text
    body: dict[str, Any] = r.json()
    assert body["error"] == error, body
    assert isinstance(body.get("error_description"), str) and body["error_description"]
    assert set(body) <= {"error", "error_description", "state"}
    assert r.headers["Cache-Control"] == "no-store" and r.headers["Pragma"] == "no-cache"
    return body
