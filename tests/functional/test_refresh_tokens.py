"""Refresh tokens (in-process): issuance, rotation, the ID token of a refresh, revocation by
every route, disabling, the account page, discovery, and the reference behaviour unchanged for
applications that do not use them. The attacks are in ``security/test_refresh_token_reuse.py``.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from sqlalchemy import event, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from auth_server.codes import issue_code
from auth_server.disabling import set_application_enabled, set_user_enabled
from auth_server.refresh import Renewal
from common.models import Application, RefreshFamily, RefreshToken, Token, User
from common.settings import AuthSettings
from common.stores import Stores
from common.tokens import digest
from tests.functional.authorize_support import HTTPS_CB, approve, authorize_url
from tests.functional.cli_support import cli_env, run_cli
from tests.functional.oauth_support import (
    PASSWORD,
    REDIRECT_URI,
    World,
    assert_oauth_error,
    code_params,
    get_artists,
    make_code,
    make_world,
    post,
    refresh,
    refresh_world,
)
from tests.functional.oidc_support import forget_cached_keys
from tests.pages import Account, form, post_form, query, sign_in, text
from tests.servers import LiveServer


@pytest.fixture
def world(clean_db: Any, sessions: sessionmaker[Session], auth_settings: AuthSettings) -> World:
    """A user and an application registered for refresh tokens."""
    return refresh_world(sessions, auth_settings)


def first_pair(live: LiveServer, w: World, scope: str = "offline_access") -> dict[str, Any]:
    """Sign the world's user in with the credentials grant and return the token response."""
    r = post(live, w.password_grant(scope=scope))
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_offline_access_gets_a_refresh_token_and_a_short_access_token(
    auth_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    body = first_pair(auth_server, world)
    assert body["expires_in"] == auth_settings.refresh_access_token_ttl == 3600
    assert body["scope"] == "offline_access" and body["refresh_token"]
    assert get_artists(resource_server, body["access_token"]) == 200
    with sessions() as s:
        family = s.scalars(select(RefreshFamily)).one()
        stored = s.scalars(select(RefreshToken)).one()
        access = s.scalars(select(Token)).one()
    assert (family.user_id, family.application_id) == (world.user_id, world.application_id)
    assert stored.digest == digest(body["refresh_token"])  # only the digest is stored
    assert stored.access_token_id == access.id and stored.family_id == family.id
    left = stored.expires_at - datetime.now(UTC)
    assert timedelta(days=29) < left <= timedelta(seconds=auth_settings.refresh_token_ttl)


def test_without_offline_access_no_refresh_token(auth_server: LiveServer, world: World) -> None:
    body = first_pair(auth_server, world, scope="")
    assert "refresh_token" not in body and body["expires_in"] == 3600


def test_the_reference_behaviour_stays_for_other_applications(
    auth_server: LiveServer,
    clean_db: Any,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    w = make_world(sessions, auth_settings)  # not registered for refresh tokens
    offline = first_pair(auth_server, w)
    assert "refresh_token" not in offline
    assert offline["expires_in"] == auth_settings.offline_token_ttl  # the 25-year token
    plain = first_pair(auth_server, w, scope="")
    assert plain["expires_in"] == auth_settings.access_token_ttl  # 60 days
    r = refresh(auth_server, w, "not-a-refresh-token")
    assert_oauth_error(r, 400, "invalid_grant")


def test_a_rotation_chain(
    auth_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
) -> None:
    body = first_pair(auth_server, world)
    seen = {body["refresh_token"]}
    accesses = [body["access_token"]]
    for _ in range(4):
        r = refresh(auth_server, world, body["refresh_token"])
        assert r.status_code == 200, r.text
        assert r.headers["Cache-Control"] == "no-store"
        body = r.json()
        assert body["refresh_token"] not in seen and body["scope"] == "offline_access"
        seen.add(body["refresh_token"])
        accesses.append(body["access_token"])
    # Every access token still works (each lives its hour); one family, one live refresh token.
    assert all(get_artists(resource_server, a) == 200 for a in accesses)
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(RefreshFamily)) == 1
        rows = list(s.scalars(select(RefreshToken)))
    assert len(rows) == 5 and sum(r.rotated_at is None for r in rows) == 1


def counts(sessions: sessionmaker[Session]) -> tuple[int, int]:
    """Return how many access tokens and refresh tokens the database holds."""
    with sessions() as s:
        return (
            s.scalar(select(func.count()).select_from(Token)) or 0,
            s.scalar(select(func.count()).select_from(RefreshToken)) or 0,
        )


def test_a_refresh_is_one_statement_on_postgresql(
    auth_server: LiveServer, world: World, stores: Stores, sessions: sessionmaker[Session]
) -> None:
    """The rotation writes the new pair itself (``auth_server.refresh.Renewal``): a refresh is
    one statement and a commit there (its client read from the process's cache); on SQLite
    four (the family's row with its user's, the claim, and an INSERT each)."""
    body = refresh(auth_server, world, first_pair(auth_server, world)["refresh_token"]).json()
    before = counts(sessions)
    statements: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    event.listen(stores.engine, "before_cursor_execute", note)
    try:
        r = refresh(auth_server, world, body["refresh_token"])
    finally:
        event.remove(stores.engine, "before_cursor_execute", note)
    assert r.status_code == 200, r.text
    assert r.json()["expires_in"] == 3600 and r.json()["scope"] == "offline_access"
    assert counts(sessions) == (before[0] + 1, before[1] + 1)
    postgresql = stores.engine.dialect.name == "postgresql"
    assert len(statements) == (1 if postgresql else 4), statements
    with sessions() as s:
        issued = s.scalars(select(Token).where(Token.digest == digest(r.json()["access_token"])))
        row = issued.one()
        renewed = s.scalars(
            select(RefreshToken).where(RefreshToken.digest == digest(r.json()["refresh_token"]))
        ).one()
    assert (row.kind, row.user_id, row.application_id) == (
        "access",
        world.user_id,
        world.application_id,
    )
    assert renewed.access_token_id == row.id and renewed.rotated_at is None
    assert renewed.expires_at - renewed.created_at == timedelta(days=30)


def test_a_refresh_refused_after_its_rotation_writes_nothing(
    auth_server: LiveServer, world: World, sessions: sessionmaker[Session]
) -> None:
    """A user disabled behind the services' back (their families live on): the rotation and
    the pair it wrote are rolled back, and the token works again once the user is back."""
    body = first_pair(auth_server, world)
    before = counts(sessions)
    with sessions() as s, s.begin():
        s.execute(update(User).where(User.id == world.user_id).values(enabled=False))
    assert_oauth_error(refresh(auth_server, world, body["refresh_token"]), 400, "invalid_grant")
    assert counts(sessions) == before
    with sessions() as s, s.begin():
        s.execute(update(User).where(User.id == world.user_id).values(enabled=True))
    again = refresh(auth_server, world, body["refresh_token"])
    assert again.status_code == 200, again.text


def test_a_pair_the_rotation_wrote_that_is_not_the_one_described_is_replaced(
    auth_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Should the pair drawn before the rotation differ from the token the grant describes
    (its lifetime here), the grant's own is issued instead, and the other taken back."""
    draw = Renewal.draw

    def longer(*, access_ttl: int, refresh_ttl: int) -> Renewal:
        return draw(access_ttl=access_ttl + 60, refresh_ttl=refresh_ttl)

    body = first_pair(auth_server, world)
    before = counts(sessions)
    monkeypatch.setattr(Renewal, "draw", longer)
    r = refresh(auth_server, world, body["refresh_token"])
    assert r.status_code == 200, r.text
    assert r.json()["expires_in"] == 3600
    assert counts(sessions) == (before[0] + 1, before[1] + 1)
    monkeypatch.undo()
    assert refresh(auth_server, world, r.json()["refresh_token"]).status_code == 200


def test_a_narrower_scope_keeps_the_family(auth_server: LiveServer, world: World) -> None:
    body = first_pair(auth_server, world)
    r = refresh(auth_server, world, body["refresh_token"], scope="")
    assert r.status_code == 200, r.text
    again = refresh(auth_server, world, r.json()["refresh_token"])
    assert again.status_code == 200, again.text
    wider = refresh(auth_server, world, again.json()["refresh_token"], scope="openid")
    assert_oauth_error(wider, 400, "invalid_scope")


def test_a_public_client_refreshes_without_a_secret(
    auth_server: LiveServer,
    clean_db: Any,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    w = refresh_world(sessions, auth_settings, public_client=True)
    verifier = secrets.token_urlsafe(48)
    challenge = create_s256_code_challenge(verifier)
    code = make_code(sessions, w, scope="offline_access", challenge=challenge)
    public = {"client_id": w.client_id}
    data = {**public, "grant_type": "authorization_code", "code": code}
    r = post(auth_server, {**data, "redirect_uri": REDIRECT_URI, "code_verifier": verifier})
    assert r.status_code == 200, r.text
    again = post(
        auth_server,
        {**public, "grant_type": "refresh_token", "refresh_token": r.json()["refresh_token"]},
    )
    assert again.status_code == 200, again.text


def test_openid_refresh_gives_a_new_id_token_of_the_same_sign_in(
    auth_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
    stores: Stores,
    auth_settings: AuthSettings,
) -> None:
    from joserfc import jwt
    from joserfc.jwk import KeySet
    from joserfc.jws import JWSRegistry

    forget_cached_keys(stores, auth_settings)
    signed_in = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    with sessions() as s, s.begin():
        code = issue_code(
            s,
            application=s.get_one(Application, world.application_id),
            user=s.get_one(User, world.user_id),
            redirect_uri=REDIRECT_URI,
            scope="openid profile offline_access",
            ttl=600,
            nonce="n-0S6_WzA2Mj",
            auth_time=signed_in,
        )
    first = post(auth_server, code_params(world, code))
    assert first.status_code == 200, first.text
    jwks = requests.get(f"{auth_server.url}/oauth2/jwks", timeout=10).json()
    registry = JWSRegistry(algorithms=["ES256", "RS256"])

    def claims(id_token: str) -> dict[str, Any]:
        return dict(jwt.decode(id_token, KeySet.import_key_set(jwks), registry=registry).claims)

    original = claims(first.json()["id_token"])
    r = refresh(auth_server, world, first.json()["refresh_token"])
    assert r.status_code == 200, r.text
    renewed = claims(r.json()["id_token"])
    assert renewed["sub"] == original["sub"] == world.user_id
    assert renewed["auth_time"] == original["auth_time"] == int(signed_in.timestamp())
    assert renewed["aud"] == original["aud"] and renewed["iss"] == original["iss"]
    assert "nonce" in original and "nonce" not in renewed  # OIDC Core 12.2
    assert renewed["at_hash"] != original["at_hash"]
    # Without openid in the refresh's scope, no ID token.
    plain = refresh(auth_server, world, r.json()["refresh_token"], scope="offline_access")
    assert plain.status_code == 200 and "id_token" not in plain.json()


def test_revocation_rfc7009_ends_the_family(
    auth_server: LiveServer, resource_server: LiveServer, world: World
) -> None:
    body = first_pair(auth_server, world)
    rotated = refresh(auth_server, world, body["refresh_token"]).json()
    r = requests.post(
        f"{auth_server.url}/oauth2/revoke",
        data={**world.creds, "token": rotated["refresh_token"], "token_type_hint": "refresh_token"},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    # Every access token of the family stops at once, and no refresh token works any more.
    assert get_artists(resource_server, body["access_token"]) == 401
    assert get_artists(resource_server, rotated["access_token"]) == 401
    assert_oauth_error(refresh(auth_server, world, rotated["refresh_token"]), 400, "invalid_grant")


def test_revoking_an_access_token_leaves_the_family(
    auth_server: LiveServer, resource_server: LiveServer, world: World
) -> None:
    body = first_pair(auth_server, world)
    r = requests.post(
        f"{auth_server.url}/oauth2/revoke",
        data={**world.creds, "token": body["access_token"]},
        timeout=10,
    )
    assert r.status_code == 200
    assert get_artists(resource_server, body["access_token"]) == 401
    assert refresh(auth_server, world, body["refresh_token"]).status_code == 200


def test_another_client_cannot_revoke_the_family(
    auth_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    other = refresh_world(sessions, auth_settings)
    body = first_pair(auth_server, world)
    r = requests.post(
        f"{auth_server.url}/oauth2/revoke",
        data={**other.creds, "token": body["refresh_token"]},
        timeout=10,
    )
    assert r.status_code == 200  # says nothing either way (RFC 7009 2.2)
    assert refresh(auth_server, world, body["refresh_token"]).status_code == 200


def test_introspection_describes_a_live_refresh_token_only(
    auth_server: LiveServer,
    world: World,
    sessions: sessionmaker[Session],
    auth_settings: AuthSettings,
) -> None:
    def introspect(w: World, token: str) -> dict[str, Any]:
        r = requests.post(
            f"{auth_server.url}/oauth2/introspect", data={**w.creds, "token": token}, timeout=10
        )
        assert r.status_code == 200, r.text
        answer: dict[str, Any] = r.json()
        return answer

    body = first_pair(auth_server, world)
    info = introspect(world, body["refresh_token"])
    assert info["active"] is True and info["token_use"] == "refresh_token"
    assert (info["scope"], info["sub"]) == ("offline_access", world.user_id)
    assert info["client_id"] == world.client_id and info["iss"] == auth_server.url
    lifetime = info["exp"] - info["iat"]
    assert lifetime == auth_settings.refresh_token_ttl
    other = refresh_world(sessions, auth_settings)
    assert introspect(other, body["refresh_token"]) == {"active": False}  # not its token
    rotated = refresh(auth_server, world, body["refresh_token"]).json()
    assert introspect(world, body["refresh_token"]) == {"active": False}  # used up
    assert introspect(world, rotated["refresh_token"])["active"] is True
    revoke = {**world.creds, "token": rotated["refresh_token"]}
    assert requests.post(f"{auth_server.url}/oauth2/revoke", data=revoke, timeout=10).ok
    assert introspect(world, rotated["refresh_token"]) == {"active": False}  # family revoked


def test_delete_access_token_route_revokes_a_family(
    auth_server: LiveServer, resource_server: LiveServer, world: World
) -> None:
    body = first_pair(auth_server, world)
    r = requests.delete(
        f"{auth_server.url}/api/tokens/access_token",
        params={"access_token": body["refresh_token"]},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    assert r.json()["type"] == "refresh_token"
    assert get_artists(resource_server, body["access_token"]) == 401
    assert_oauth_error(refresh(auth_server, world, body["refresh_token"]), 400, "invalid_grant")
    again = requests.delete(
        f"{auth_server.url}/api/tokens/access_token",
        params={"access_token": body["refresh_token"]},
        timeout=10,
    )
    assert again.status_code == 401


@pytest.mark.parametrize("what", ["user", "application"])
def test_disabling_revokes_the_families(
    auth_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    stores: Stores,
    sessions: sessionmaker[Session],
    what: str,
) -> None:
    body = first_pair(auth_server, world)
    if what == "user":
        set_user_enabled(stores, world.email, enabled=False)
    else:
        set_application_enabled(stores, world.client_id, enabled=False)
    assert get_artists(resource_server, body["access_token"]) == 401
    with sessions() as s:
        assert s.scalars(select(RefreshFamily.revoked_at)).one() is not None
    # Enabled again, nothing comes back.
    if what == "user":
        set_user_enabled(stores, world.email, enabled=True)
    else:
        set_application_enabled(stores, world.client_id, enabled=True)
    assert_oauth_error(refresh(auth_server, world, body["refresh_token"]), 400, "invalid_grant")


def test_the_account_page_lists_and_revokes_holders(
    auth_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    web: requests.Session,
) -> None:
    body = first_pair(auth_server, world)
    assert sign_in(web, auth_server.url, world.email, PASSWORD).status_code == 302
    page = web.get(f"{auth_server.url}/account", timeout=10)
    assert page.status_code == 200
    assert "Applications that stay signed in" in page.text
    f = form(page.text, "/revoke")
    assert f.fields.get("csrf_token")
    # Without the CSRF token, nothing happens.
    forged = web.post(auth_server.url + f.action, data={}, allow_redirects=False, timeout=10)
    assert forged.status_code == 400
    assert refresh(auth_server, world, body["refresh_token"]).status_code == 200
    page = web.get(f"{auth_server.url}/account", timeout=10)
    f = form(page.text, "/revoke")
    done = web.post(auth_server.url + f.action, data=f.fields, allow_redirects=False, timeout=10)
    assert done.status_code == 302
    assert "Applications that stay signed in" not in web.get(f"{auth_server.url}/account").text


def test_discovery_lists_the_refresh_grant(auth_server: LiveServer) -> None:
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        meta = requests.get(auth_server.url + path, timeout=10).json()
        assert "refresh_token" in meta["grant_types_supported"]
        assert "offline_access" in meta["scopes_supported"]


def test_apps_create_and_set_refresh_tokens(
    account: Account, auth_settings: AuthSettings, sessions: sessionmaker[Session]
) -> None:
    env = cli_env(auth_settings)
    out = run_cli(env, "apps", "set", account.client_id, "--refresh-tokens")
    assert "refresh tokens: on" in out
    with sessions() as s:
        assert s.get_one(Application, account.app_id).refresh_tokens is True
    run_cli(env, "apps", "set", account.client_id, "--no-refresh-tokens")
    with sessions() as s:
        assert s.get_one(Application, account.app_id).refresh_tokens is False
    args = ("--name", "Mobile", "--owner", account.email, "--no-browser-flow")
    made = json.loads(run_cli(env, "apps", "create", *args, "--refresh-tokens", "--json"))
    assert made["refresh_tokens"] is True
    plain = json.loads(run_cli(env, "apps", "create", *args, "--json"))
    assert "refresh_tokens" not in plain  # the output of the reference-style apps is unchanged
    with sessions() as s:
        assert s.get_one(Application, made["id"]).refresh_tokens is True
        assert s.get_one(Application, plain["id"]).refresh_tokens is False


def test_offline_access_granted_on_the_consent_page(
    auth_server: LiveServer,
    account: Account,
    web: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    with sessions() as s, s.begin():
        s.execute(update(Application).values(refresh_tokens=True))
    assert sign_in(web, auth_server.url, account.email).status_code == 302
    params = {"client_id": account.client_id, "redirect_uri": HTTPS_CB, "response_type": "code"}
    offline = authorize_url(auth_server.url, **params, scope="offline_access", state="s1")
    page = web.get(offline, allow_redirects=False)
    assert "renewing its access until you revoke it" in page.text
    assert "years" not in text(page.text)  # no 25-year token for this application
    code = query(approve(web, auth_server.url, offline))["code"]
    creds = {"client_id": account.client_id, "client_secret": account.client_secret}
    data = {**creds, "grant_type": "authorization_code", "redirect_uri": HTTPS_CB, "code": code}
    r = post(auth_server, data)
    assert r.status_code == 200, r.text
    assert r.json()["refresh_token"] and r.json()["expires_in"] == 3600
    # Without offline_access on the consent page, the code buys no refresh token.
    plain = authorize_url(auth_server.url, **params, state="s2")
    code = query(approve(web, auth_server.url, plain))["code"]
    r = post(auth_server, {**data, "code": code})
    assert r.status_code == 200 and "refresh_token" not in r.json()


def test_a_family_outlives_the_applications_registration(
    auth_server: LiveServer, world: World, sessions: sessionmaker[Session]
) -> None:
    body = first_pair(auth_server, world)
    with sessions() as s, s.begin():
        s.execute(update(Application).values(refresh_tokens=False))
    r = refresh(auth_server, world, body["refresh_token"])
    assert r.status_code == 200, r.text
    assert r.json()["expires_in"] == 3600 and r.json()["refresh_token"]  # never a 25-year token
    assert "refresh_token" not in first_pair(auth_server, world)  # no new family


def test_a_password_change_revokes_the_families(
    auth_server: LiveServer,
    resource_server: LiveServer,
    world: World,
    web: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    body = first_pair(auth_server, world)
    assert sign_in(web, auth_server.url, world.email, PASSWORD).status_code == 302
    new = "an entirely new passphrase 1834"
    page = "/account/password/change"
    changed = post_form(
        web, auth_server.url, page, page, current_password=PASSWORD, new_password=new, confirm=new
    )
    assert changed.status_code == 302, changed.text
    assert get_artists(resource_server, body["access_token"]) == 401
    assert_oauth_error(refresh(auth_server, world, body["refresh_token"]), 400, "invalid_grant")
