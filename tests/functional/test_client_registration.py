"""Dynamic client registration (RFC 7591 and RFC 7592) and RP-initiated logout: a client
registers, reads, replaces and deletes its registration, signs a user in with code + PKCE and
signs them out again; what registration checks; the operator's settings and command."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
import requests
from redis import Redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application, ClientRegistration, InitialAccessToken, Token
from common.settings import AuthSettings
from common.stores import Stores
from common.tokens import digest
from tests.functional.authorize_support import HTTPS_CB
from tests.functional.cli_support import cli_env, cli_refuses, run_cli
from tests.functional.oauth_support import auth_in_process
from tests.functional.oidc_support import DISCOVERY, forget_cached_keys, jws_header
from tests.functional.registration_support import (
    AFTER_LOGOUT,
    LOGOUT,
    PUBLIC_CLIENT,
    REGISTER,
    bearer,
    code_with_pkce,
    forget_registrations,
    initial_token,
    redeem,
    register,
)
from tests.pages import Account, form, query, sign_in
from tests.servers import LiveServer

pytestmark = pytest.mark.functional


@pytest.fixture(autouse=True)
def fresh(clean_db: Any, stores: Stores, auth_settings: AuthSettings, redis_client: Redis) -> None:
    """An empty database, no key cached, no registration counted."""
    forget_cached_keys(stores, auth_settings)
    forget_registrations(redis_client, auth_settings.redis_prefix)


def test_register_read_update_sign_in_sign_out_and_delete(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    base = auth_server.url
    meta = requests.get(base + DISCOVERY, timeout=10).json()
    assert meta["registration_endpoint"] == base + REGISTER
    assert meta["end_session_endpoint"] == base + LOGOUT

    token = initial_token(sessions)
    r = register(base, token)
    assert r.status_code == 201, r.text
    assert r.headers["Cache-Control"] == "no-store"
    client = r.json()
    client_id = client["client_id"]
    assert "client_secret" not in client  # a public client
    assert client["token_endpoint_auth_method"] == "none"
    assert client["redirect_uris"] == [HTTPS_CB]
    assert client["post_logout_redirect_uris"] == [AFTER_LOGOUT]
    assert client["registration_client_uri"] == f"{base}{REGISTER}/{client_id}"
    management = client["registration_access_token"]
    with sessions() as s:
        app = s.scalar(select(Application).where(Application.client_id == client_id))
        assert app is not None and app.user_id is None and app.public_client
        assert app.standard_token_response and app.roles == ["grant:authorization_code"]
        reg = s.get_one(ClientRegistration, app.id)
        assert reg.access_token_digest == digest(management)  # only the digest is kept
        assert s.scalar(select(InitialAccessToken.uses_left)) == 0

    uri = client["registration_client_uri"]
    read = requests.get(uri, headers=bearer(management), timeout=10)
    assert read.status_code == 200, read.text
    assert read.json()["client_name"] == "Registered Viewer"
    assert read.json()["contacts"] == ["dev@client.example"]
    assert read.json()["client_uri"] == "https://client.example/"

    changed = {**PUBLIC_CLIENT, "client_id": client_id, "client_name": "Renamed"}
    changed["id_token_signed_response_alg"] = "RS256"
    del changed["contacts"]
    put = requests.put(uri, json=changed, headers=bearer(management), timeout=10)
    assert put.status_code == 200, put.text
    assert put.json()["client_name"] == "Renamed"
    assert "contacts" not in put.json()  # a PUT replaces the registration
    assert put.json()["id_token_signed_response_alg"] == "RS256"

    # The registered client signs the user in: code + PKCE, a standard token response.
    code = code_with_pkce(signed_in, base, client_id, scope="openid", nonce="n-1")
    issued = redeem(base, client_id, code)
    assert issued.status_code == 200, issued.text
    body = issued.json()
    assert isinstance(body["expires_in"], int) and body["token_type"] == "Bearer"
    id_token = body["id_token"]
    assert jws_header(id_token)["alg"] == "RS256"
    # Without the verifier the code is refused (a public client must use PKCE).
    code = code_with_pkce(signed_in, base, client_id)
    bare = requests.post(
        f"{base}/oauth2/access_token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": HTTPS_CB,
            "client_id": client_id,
        },
        timeout=10,
    )
    assert bare.status_code == 400

    # RP-initiated logout with the ID token as a hint: signed out, sent back with the state.
    out = signed_in.get(
        base + LOGOUT,
        params={
            "id_token_hint": id_token,
            "post_logout_redirect_uri": AFTER_LOGOUT,
            "state": "bye",
        },
        allow_redirects=False,
    )
    assert out.status_code == 302, out.text
    assert out.headers["Location"].startswith(AFTER_LOGOUT)
    assert query(out.headers["Location"]) == {"state": "bye"}
    assert signed_in.get(f"{base}/account", allow_redirects=False).status_code == 302

    # Deleting the registration disables the client and ends its tokens at once.
    access = body["access_token"]
    gone = requests.delete(uri, headers=bearer(management), timeout=10)
    assert gone.status_code == 204, gone.text
    with sessions() as s:
        app = s.scalar(select(Application).where(Application.client_id == client_id))
        assert app is not None and not app.enabled
        assert s.get(ClientRegistration, app.id) is None
        rows = s.scalars(select(Token).where(Token.application_id == app.id)).all()
        assert rows and all(t.expired_at is not None for t in rows)
    userinfo = requests.get(f"{base}/oauth2/userinfo", headers=bearer(access), timeout=10)
    assert userinfo.status_code == 401
    again = requests.get(uri, headers=bearer(management), timeout=10)
    assert again.status_code == 401


def test_a_confidential_client_gets_a_secret_and_uses_it(
    auth_server: LiveServer, sessions: sessionmaker[Session]
) -> None:
    base = auth_server.url
    r = register(
        base,
        initial_token(sessions),
        {"client_name": "Server app", "grant_types": ["client_credentials"]},
    )
    assert r.status_code == 201, r.text
    client = r.json()
    assert client["response_types"] == [] and client["client_secret_expires_at"] == 0
    token = requests.post(
        f"{base}/oauth2/access_token",
        data={"grant_type": "client_credentials"},
        auth=(client["client_id"], client["client_secret"]),
        timeout=10,
    )
    assert token.status_code == 200, token.text
    assert isinstance(token.json()["expires_in"], int)
    # Its registration allows that grant only.
    password = requests.post(
        f"{base}/oauth2/access_token",
        data={"grant_type": "password", "username": "a@b.example", "password": "x" * 12},
        auth=(client["client_id"], client["client_secret"]),
        timeout=10,
    )
    assert password.status_code in (400, 401)
    assert password.json()["error"] == "unauthorized_client"


@pytest.mark.parametrize("registered", [None, "client_secret_basic", "client_secret_post"])
def test_a_client_authenticates_only_by_the_method_it_registered(
    auth_server: LiveServer, sessions: sessionmaker[Session], registered: str | None
) -> None:
    """A secret caught in one place (a form body logged by a proxy, say) does not open the
    other method: the server holds the client to what it registered (basic by default)."""
    base = auth_server.url
    metadata: dict[str, Any] = {"client_name": "Held", "grant_types": ["client_credentials"]}
    if registered:
        metadata["token_endpoint_auth_method"] = registered
    r = register(base, initial_token(sessions), metadata)
    assert r.status_code == 201, r.text
    client = r.json()
    assert client["token_endpoint_auth_method"] == (registered or "client_secret_basic")
    form_ = {"grant_type": "client_credentials"}
    by_basic = requests.post(
        f"{base}/oauth2/access_token",
        data=form_,
        auth=(client["client_id"], client["client_secret"]),
        timeout=10,
    )
    secrets_ = {"client_id": client["client_id"], "client_secret": client["client_secret"]}
    by_post = requests.post(f"{base}/oauth2/access_token", data={**form_, **secrets_}, timeout=10)
    allowed, refused = (
        (by_post, by_basic) if registered == "client_secret_post" else (by_basic, by_post)
    )
    assert allowed.status_code == 200, allowed.text
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
    # The same at the other endpoints that authenticate the client.
    token = allowed.json()["access_token"]
    wrong = {"token": token, **secrets_} if refused is by_post else {"token": token}
    auth = None if refused is by_post else (client["client_id"], client["client_secret"])
    for path in ("/oauth2/introspect", "/oauth2/revoke"):
        denied = requests.post(f"{base}{path}", data=wrong, auth=auth, timeout=10)
        assert denied.status_code == 401, (path, denied.text)


def refresh_as_public(base: str, client_id: str, token: str) -> requests.Response:
    """Refresh as a public client (its id alone)."""
    return requests.post(
        f"{base}/oauth2/access_token",
        data={"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id},
        timeout=10,
    )


def test_a_client_registering_the_refresh_grant_gets_refresh_tokens(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    base = auth_server.url
    grants = ["authorization_code", "refresh_token"]
    r = register(base, initial_token(sessions), {**PUBLIC_CLIENT, "grant_types": grants})
    assert r.status_code == 201, r.text
    client = r.json()
    client_id = client["client_id"]
    assert client["grant_types"] == grants and client["response_types"] == ["code"]
    with sessions() as s:
        app = s.scalar(select(Application).where(Application.client_id == client_id))
        assert app is not None and app.refresh_tokens
    # offline_access granted: a refresh token and a one-hour access token; each refresh rotates.
    code = code_with_pkce(signed_in, base, client_id, scope="openid offline_access", nonce="n")
    issued = redeem(base, client_id, code)
    assert issued.status_code == 200, issued.text
    first = issued.json()
    assert first["refresh_token"] and first["expires_in"] <= 3600
    renewed = refresh_as_public(base, client_id, first["refresh_token"])
    assert renewed.status_code == 200, renewed.text
    assert renewed.json()["refresh_token"] != first["refresh_token"]
    assert renewed.json()["id_token"]

    # Replaced without the grant: no longer registered for it, and the grant is refused.
    uri, management = client["registration_client_uri"], client["registration_access_token"]
    plain = {**PUBLIC_CLIENT, "client_id": client_id, "grant_types": ["authorization_code"]}
    put = requests.put(uri, json=plain, headers=bearer(management), timeout=10)
    assert put.status_code == 200, put.text
    assert put.json()["grant_types"] == ["authorization_code"]
    with sessions() as s:
        app = s.scalar(select(Application).where(Application.client_id == client_id))
        assert app is not None and not app.refresh_tokens
    refused = refresh_as_public(base, client_id, renewed.json()["refresh_token"])
    assert (refused.status_code, refused.json()["error"]) == (400, "unauthorized_client")
    code = code_with_pkce(signed_in, base, client_id, scope="offline_access")
    again = redeem(base, client_id, code)
    assert again.status_code == 200, again.text
    assert "refresh_token" not in again.json()


def test_a_client_without_the_refresh_grant_gets_no_refresh_token(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    """offline_access alone does not register a client for refresh tokens."""
    base = auth_server.url
    client_id = register(base, initial_token(sessions)).json()["client_id"]
    code = code_with_pkce(signed_in, base, client_id, scope="offline_access")
    issued = redeem(base, client_id, code)
    assert issued.status_code == 200, issued.text
    assert "refresh_token" not in issued.json()
    with sessions() as s:
        app = s.scalar(select(Application).where(Application.client_id == client_id))
        assert app is not None and not app.refresh_tokens


BAD_METADATA = [
    pytest.param({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri", id="js"),
    pytest.param({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri", id="http"),
    pytest.param({"redirect_uris": "https://a.example/cb"}, "invalid_client_metadata", id="str"),
    pytest.param({"redirect_uris": []}, "invalid_redirect_uri", id="none-for-code"),
    pytest.param({"redirect_uris": [1]}, "invalid_client_metadata", id="not-strings"),
    pytest.param({"client_name": 5}, "invalid_client_metadata", id="name-type"),
    pytest.param({"client_name": "  "}, "invalid_client_metadata", id="blank-name"),
    pytest.param({"token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
    pytest.param({"grant_types": ["password"]}, "invalid_client_metadata", id="password"),
    pytest.param({"grant_types": [["x"]]}, "invalid_client_metadata", id="nested"),
    pytest.param({"response_types": ["token"]}, "invalid_client_metadata", id="implicit"),
    pytest.param(
        {"grant_types": ["client_credentials"], "response_types": ["code"]},
        "invalid_client_metadata",
        id="inconsistent",
    ),
    pytest.param(
        {
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "client_credentials"],
        },
        "invalid_client_metadata",
        id="public-client-credentials",
    ),
    pytest.param(
        {"grant_types": ["refresh_token"], "response_types": []},
        "invalid_client_metadata",
        id="refresh-alone",
    ),
    pytest.param(
        {
            "token_endpoint_auth_method": "client_secret_basic",
            "grant_types": ["client_credentials", "refresh_token"],
            "response_types": [],
        },
        "invalid_client_metadata",
        id="refresh-without-code",
    ),
    pytest.param({"id_token_signed_response_alg": "HS256"}, "invalid_client_metadata", id="alg"),
    pytest.param({"id_token_signed_response_alg": "none"}, "invalid_client_metadata", id="none"),
    pytest.param({"post_logout_redirect_uris": ["javascript:x"]}, "invalid_client_metadata"),
    pytest.param({"logo_uri": "http://a.example/logo.png"}, "invalid_client_metadata", id="logo"),
    pytest.param({"client_uri": "javascript:alert(1)"}, "invalid_client_metadata", id="uri"),
    pytest.param({"policy_uri": "ftp://a.example/p"}, "invalid_client_metadata", id="policy"),
    pytest.param({"contacts": ["not an address"]}, "invalid_client_metadata", id="contact"),
    pytest.param({"contacts": "a@b.example"}, "invalid_client_metadata", id="contacts-str"),
    pytest.param({"client_name": "a\u0000b"}, "invalid_client_metadata", id="nul"),
    pytest.param({"jwks": {"keys": [1]}}, None, id="ignored-jwks"),
]


@pytest.mark.parametrize(("change", "error"), BAD_METADATA)
def test_metadata_is_checked(
    auth_server: LiveServer,
    sessions: sessionmaker[Session],
    change: dict[str, Any],
    error: str | None,
) -> None:
    token = initial_token(sessions)
    r = register(auth_server.url, token, {**PUBLIC_CLIENT, **change})
    if error is None:
        assert r.status_code == 201, r.text
        assert "jwks" not in r.json()
        return
    assert r.status_code == 400, r.text
    assert r.json()["error"] == error
    with sessions() as s:  # nothing written, the token's use not spent
        assert s.scalar(select(Application.id)) is None
        assert s.scalar(select(InitialAccessToken.uses_left)) == 1


@pytest.mark.parametrize(
    "body", [b"[]", b"not json", b'"text"', b"{}", b'{"redirect_uris": null}'], ids=str
)
def test_malformed_bodies_are_4xx(
    auth_server: LiveServer, sessions: sessionmaker[Session], body: bytes
) -> None:
    token = initial_token(sessions)
    headers = {**bearer(token), "Content-Type": "application/json"}
    r = requests.post(f"{auth_server.url}{REGISTER}", data=body, headers=headers, timeout=10)
    assert r.status_code == 400, r.text
    assert r.json()["error"] in (
        "invalid_client_metadata",
        "invalid_request",
        "invalid_redirect_uri",
    )


def test_an_update_must_name_its_client_and_keep_its_type(
    auth_server: LiveServer, sessions: sessionmaker[Session]
) -> None:
    client = register(auth_server.url, initial_token(sessions)).json()
    uri, token = client["registration_client_uri"], client["registration_access_token"]
    no_id = requests.put(uri, json=PUBLIC_CLIENT, headers=bearer(token), timeout=10)
    assert no_id.status_code == 400
    secret = {**PUBLIC_CLIENT, "client_id": client["client_id"]}
    secret["token_endpoint_auth_method"] = "client_secret_basic"
    r = requests.put(uri, json=secret, headers=bearer(token), timeout=10)
    assert (r.status_code, r.json()["error"]) == (400, "invalid_client_metadata")
    bad = {**PUBLIC_CLIENT, "client_id": client["client_id"], "redirect_uris": ["data:,x"]}
    r = requests.put(uri, json=bad, headers=bearer(token), timeout=10)
    assert (r.status_code, r.json()["error"]) == (400, "invalid_redirect_uri")


def test_open_and_off_registration(
    auth_settings: AuthSettings, stores: Stores, redis_client: Redis
) -> None:
    with auth_in_process(replace(auth_settings, client_registration="open"), stores) as live:
        r = register(live.url, None)
        assert r.status_code == 201, r.text
    with auth_in_process(replace(auth_settings, client_registration="off"), stores) as live:
        assert "registration_endpoint" not in requests.get(live.url + DISCOVERY, timeout=10).json()
        r = register(live.url, None)
        assert (r.status_code, r.json()["error"]) == (403, "access_denied")


def test_registration_is_throttled_per_address(
    auth_settings: AuthSettings, stores: Stores, sessions: sessionmaker[Session]
) -> None:
    settings = replace(auth_settings, client_registrations_per_ip="2/hour")
    token = initial_token(sessions, uses=5)
    with auth_in_process(settings, stores) as live:
        assert register(live.url, token).status_code == 201
        assert register(live.url, "wrong").status_code == 401  # a refused attempt counts too
        r = register(live.url, token)
        assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    with sessions() as s:
        assert s.scalar(select(InitialAccessToken.uses_left)) == 4


def test_the_registration_token_command(
    auth_settings: AuthSettings, sessions: sessionmaker[Session], auth_server: LiveServer
) -> None:
    env = cli_env(auth_settings)
    out = run_cli(env, "apps", "registration-token", "--uses", "2", "--expires", "2h", "--json")
    data = json.loads(out)
    assert data["uses"] == 2
    with sessions() as s:
        row = s.scalar(select(InitialAccessToken))
        assert row is not None and row.digest == digest(data["initial_access_token"])
        assert timedelta(hours=1) < row.expires_at - row.created_at <= timedelta(hours=2)
    assert register(auth_server.url, data["initial_access_token"]).status_code == 201
    assert "7d, 12h or 30m" in cli_refuses(env, "apps", "registration-token", "--expires", "soon")


def test_post_logout_uris_on_the_command_line_and_the_developer_page(
    auth_server: LiveServer,
    auth_settings: AuthSettings,
    account: Account,
    web: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    env = cli_env(auth_settings)
    created = run_cli(
        env,
        *("apps", "create", "--name", "Out", "--owner", account.email, "--json"),
        *("--redirect-uri", HTTPS_CB, "--post-logout-redirect-uri", AFTER_LOGOUT),
    )
    client_id = json.loads(created)["client_id"]

    def registered() -> list[str] | None:
        with sessions() as s:
            app = s.scalar(select(Application).where(Application.client_id == client_id))
            return app.post_logout_redirect_uris if app is not None else None

    assert registered() == [AFTER_LOGOUT]
    refused = cli_refuses(
        env, "apps", "set", client_id, "--post-logout-redirect-uri", "javascript:x"
    )
    assert "javascript" in refused and registered() == [AFTER_LOGOUT]
    run_cli(env, "apps", "set", client_id, "--no-post-logout-redirect-uri")
    assert registered() == []

    base = auth_server.url
    assert sign_in(web, base, account.email).status_code == 302
    f = form(web.get(f"{base}/account/applications").text, "/account/applications")
    fields = {**f.fields, "name": "Page app", "browser_flow": "y", "redirect_uris": HTTPS_CB}
    bad = web.post(
        f"{base}/account/applications",
        data={**fields, "post_logout_redirect_uris": "http://evil.example/out"},
    )
    assert bad.status_code == 400 and "must use https" in bad.text
    made = web.post(
        f"{base}/account/applications", data={**fields, "post_logout_redirect_uris": AFTER_LOGOUT}
    )
    assert made.status_code == 201
    with sessions() as s:
        app = s.scalar(select(Application).where(Application.name == "Page app"))
        assert app is not None and app.post_logout_redirect_uris == [AFTER_LOGOUT]
    assert AFTER_LOGOUT in web.get(f"{base}/account/applications").text
