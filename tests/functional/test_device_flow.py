"""The device authorization grant (RFC 8628): codes, every polling answer, /activate, the
account page's list and revocation, discovery."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from joserfc import jwt
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session, sessionmaker

from auth_server.disabling import set_user_enabled
from common.ids import utcnow
from common.models import Application, DeviceAuthorization, Token
from common.stores import Stores
from tests.functional.catalog_support import counting
from tests.functional.device_support import (
    DEVICE_GRANT,
    answer,
    enter_code,
    poll,
    poll_later,
    signed_in,
    start_device,
)
from tests.functional.oauth_support import assert_oauth_error, get_artists
from tests.pages import Account, form, forms, text
from tests.servers import LiveServer

USER_CODE = re.compile(r"^[BCDFGHJKMNPQRSTVWXZ]{4}-[BCDFGHJKMNPQRSTVWXZ]{4}$")


def begin(auth_server: LiveServer, account: Account, **extra: str) -> dict[str, Any]:
    """Ask for codes as the account's application."""
    body: dict[str, Any] = start_device(
        auth_server.url, account.client_id, account.client_secret, **extra
    )
    return body


def redeem(auth_server: LiveServer, account: Account, device_code: str) -> requests.Response:
    """Poll as the account's application."""
    return poll(auth_server.url, account.client_id, device_code, account.client_secret)


def test_the_whole_flow_issues_a_token_that_works_at_the_catalog(
    auth_server: LiveServer,
    resource_server: LiveServer,
    account: Account,
    sessions: sessionmaker[Session],
) -> None:
    codes = begin(auth_server, account, scope="offline_access")
    assert set(codes) == {
        "device_code",
        "user_code",
        "verification_uri",
        "verification_uri_complete",
        "expires_in",
        "interval",
    }
    assert USER_CODE.match(codes["user_code"]), codes["user_code"]
    assert codes["verification_uri"] == f"{auth_server.url}/activate"
    complete = urlsplit(codes["verification_uri_complete"])
    assert f"{complete.scheme}://{complete.netloc}{complete.path}" == codes["verification_uri"]
    assert parse_qs(complete.query) == {"user_code": [codes["user_code"]]}
    assert codes["expires_in"] == 900 and codes["interval"] == 5

    assert_oauth_error(
        redeem(auth_server, account, codes["device_code"]), 400, "authorization_pending"
    )

    web = signed_in(auth_server.url, account.email, account.password)
    done = answer(web, auth_server.url, codes["user_code"])
    assert done.status_code == 200, done.text
    assert "You can return to your device" in text(done.text)

    r = redeem(auth_server, account, codes["device_code"])
    assert r.status_code == 200, r.text
    token = r.json()
    assert token["token_type"] == "Bearer" and token["scope"] == "offline_access"
    assert "id_token" not in token
    assert get_artists(resource_server, token["access_token"]) == 200

    # Only digests are stored; the row remembers who approved and which token it bought.
    with sessions() as s:
        row = s.scalars(select(DeviceAuthorization)).one()
        issued = s.scalars(select(Token)).one()
    assert row.status == "used" and row.user_id == account.user_id and row.token_id == issued.id
    stored = " ".join(str(v) for v in (row.device_code_digest, row.user_code_digest))
    assert codes["device_code"] not in stored
    assert codes["user_code"].replace("-", "") not in stored


def test_a_replayed_device_code_ends_what_it_bought(
    auth_server: LiveServer,
    resource_server: LiveServer,
    account: Account,
    sessions: sessionmaker[Session],
) -> None:
    """Single use: a device code used again is refused, and the token it bought expires with
    the refresh token family it started (it leaked, or the device lost its answer)."""
    with sessions.begin() as s:
        s.execute(
            update(Application)
            .where(Application.client_id == account.client_id)
            .values(refresh_tokens=True)
        )
    codes = begin(auth_server, account, scope="offline_access")
    web = signed_in(auth_server.url, account.email, account.password)
    assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
    token = redeem(auth_server, account, codes["device_code"]).json()
    assert get_artists(resource_server, token["access_token"]) == 200 and token["refresh_token"]

    assert_oauth_error(redeem(auth_server, account, codes["device_code"]), 400, "invalid_grant")
    assert get_artists(resource_server, token["access_token"]) == 401
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": token["refresh_token"],
        "client_id": account.client_id,
        "client_secret": account.client_secret,
    }
    refreshed = requests.post(f"{auth_server.url}/oauth2/access_token", data=refresh, timeout=10)
    assert_oauth_error(refreshed, 400, "invalid_grant")  # its family was revoked too


def test_polling_faster_than_the_interval_slows_down_by_five_seconds(
    auth_server: LiveServer, account: Account, sessions: sessionmaker[Session]
) -> None:
    codes = begin(auth_server, account)
    assert_oauth_error(
        redeem(auth_server, account, codes["device_code"]), 400, "authorization_pending"
    )
    slow = assert_oauth_error(redeem(auth_server, account, codes["device_code"]), 400, "slow_down")
    assert "10 seconds" in slow["error_description"]
    assert_oauth_error(redeem(auth_server, account, codes["device_code"]), 400, "slow_down")
    with sessions() as s:
        assert s.scalars(select(DeviceAuthorization.interval)).one() == 15
    # A poll that waited the (new) interval is pending again, not slowed down.
    poll_later(sessions, seconds=15)
    assert_oauth_error(
        redeem(auth_server, account, codes["device_code"]), 400, "authorization_pending"
    )


def test_an_expired_device_code_is_expired_token(
    auth_server: LiveServer, account: Account, sessions: sessionmaker[Session]
) -> None:
    codes = begin(auth_server, account)
    with sessions() as s, s.begin():
        s.execute(update(DeviceAuthorization).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert_oauth_error(redeem(auth_server, account, codes["device_code"]), 400, "expired_token")
    # Its user code is no longer accepted either.
    web = signed_in(auth_server.url, account.email, account.password)
    assert enter_code(web, auth_server.url, codes["user_code"]).status_code == 400


def test_a_denied_request_is_access_denied(auth_server: LiveServer, account: Account) -> None:
    codes = begin(auth_server, account)
    web = signed_in(auth_server.url, account.email, account.password)
    denied = answer(web, auth_server.url, codes["user_code"], "deny")
    assert denied.status_code == 200 and "Request denied" in text(denied.text)
    assert_oauth_error(redeem(auth_server, account, codes["device_code"]), 400, "access_denied")
    # The code was answered: entering it again finds nothing to answer.
    assert enter_code(web, auth_server.url, codes["user_code"]).status_code == 400


def test_an_unknown_device_code_is_invalid_grant(auth_server: LiveServer, account: Account) -> None:
    r = redeem(auth_server, account, "not-a-device-code")
    assert_oauth_error(r, 400, "invalid_grant")
    missing = requests.post(
        f"{auth_server.url}/oauth2/access_token",
        data={"grant_type": DEVICE_GRANT, **{"client_id": account.client_id}},
        timeout=10,
    )
    assert_oauth_error(missing, 400, "invalid_request")


def test_openid_scope_adds_an_id_token_for_the_approving_user(
    auth_server: LiveServer, account: Account
) -> None:
    codes = begin(auth_server, account, scope="openid profile")
    web = signed_in(auth_server.url, account.email, account.password)
    assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
    r = redeem(auth_server, account, codes["device_code"])
    assert r.status_code == 200, r.text
    body = r.json()
    jwks = requests.get(f"{auth_server.url}/oauth2/jwks", timeout=10).json()
    claims = jwt.decode(
        body["id_token"], KeySet.import_key_set(jwks), registry=JWSRegistry(algorithms=["ES256"])
    ).claims
    assert claims["sub"] == account.user_id and claims["aud"] == [account.client_id]
    assert claims["iss"] == auth_server.url and claims["name"] == account.name
    assert isinstance(claims["auth_time"], int) and claims["amr"] == ["pwd"]
    assert "at_hash" in claims


def test_a_public_client_uses_its_client_id_alone(
    auth_server: LiveServer, account: Account, sessions: sessionmaker[Session]
) -> None:
    with sessions() as s, s.begin():
        s.execute(update(Application).values(public_client=True))
    codes = start_device(auth_server.url, account.client_id)
    assert_oauth_error(
        poll(auth_server.url, account.client_id, codes["device_code"]), 400, "authorization_pending"
    )
    web = signed_in(auth_server.url, account.email, account.password)
    assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
    r = poll(auth_server.url, account.client_id, codes["device_code"])
    assert r.status_code == 200, r.text


def test_a_client_must_authenticate_and_ask_known_scopes(
    auth_server: LiveServer, account: Account
) -> None:
    url = f"{auth_server.url}/oauth2/device_authorization"
    wrong = requests.post(
        url, data={"client_id": account.client_id, "client_secret": "x"}, timeout=10
    )
    assert_oauth_error(wrong, 401, "invalid_client")
    # A confidential client cannot pass for a public one.
    bare = requests.post(url, data={"client_id": account.client_id}, timeout=10)
    assert_oauth_error(bare, 401, "invalid_client")
    scope = requests.post(url, data={**_creds(account), "scope": "admin"}, timeout=10)
    assert_oauth_error(scope, 400, "invalid_scope")


def _creds(account: Account) -> dict[str, str]:
    return {"client_id": account.client_id, "client_secret": account.client_secret}


def test_codes_are_read_without_case_or_dashes(auth_server: LiveServer, account: Account) -> None:
    codes = begin(auth_server, account)
    web = signed_in(auth_server.url, account.email, account.password)
    typed = codes["user_code"].replace("-", " ").lower()
    consent = enter_code(web, auth_server.url, typed)
    assert consent.status_code == 200, consent.text
    page = text(consent.text)
    assert account.app_name in page and codes["user_code"] in page
    assert {"approve", "deny"} <= set(form(consent.text, "/activate").buttons)


def test_activate_asks_for_a_sign_in_and_comes_back_with_the_code(
    auth_server: LiveServer, account: Account
) -> None:
    codes = begin(auth_server, account)
    web = requests.Session()
    r = web.get(codes["verification_uri_complete"], allow_redirects=False)
    assert r.status_code == 302 and "/account/sign_in" in r.headers["Location"]
    nxt = parse_qs(urlsplit(r.headers["Location"]).query)["next"][0]
    assert nxt == f"/activate?user_code={codes['user_code']}"
    from tests.pages import sign_in

    back = sign_in(web, auth_server.url, account.email, next=nxt)
    assert back.status_code == 302 and back.headers["Location"].endswith(nxt)
    page = web.get(f"{auth_server.url}{nxt}")
    assert form(page.text, "/activate").fields["user_code"] == codes["user_code"]


def test_a_decision_without_the_csrf_token_is_refused(
    auth_server: LiveServer, account: Account, sessions: sessionmaker[Session]
) -> None:
    codes = begin(auth_server, account)
    web = signed_in(auth_server.url, account.email, account.password)
    r = web.post(
        f"{auth_server.url}/activate",
        data={"user_code": codes["user_code"], "approve": "Approve"},
        allow_redirects=False,
    )
    assert r.status_code == 400 and "This form has expired" in text(r.text)
    with sessions() as s:
        assert s.scalars(select(DeviceAuthorization.status)).one() == "pending"


def test_the_account_page_lists_device_grants_and_revokes_them(
    auth_server: LiveServer,
    resource_server: LiveServer,
    account: Account,
    sessions: sessionmaker[Session],
) -> None:
    codes = begin(auth_server, account, scope="offline_access")
    web = signed_in(auth_server.url, account.email, account.password)
    assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
    token = redeem(auth_server, account, codes["device_code"]).json()["access_token"]
    home = web.get(f"{auth_server.url}/account")
    listed = text(home.text)
    assert "Connected devices" in listed and account.app_name in listed
    assert "offline_access" in listed
    revoke = form(home.text, "/account/devices/")
    r = web.post(auth_server.url + revoke.action, data=revoke.fields, allow_redirects=False)
    assert r.status_code == 302, r.text
    assert get_artists(resource_server, token) == 401
    after = text(web.get(f"{auth_server.url}/account").text)
    assert "No device" in after
    # Revoking it again, or someone else's, is a 404 (nothing to tell apart).
    again = web.post(auth_server.url + revoke.action, data=revoke.fields, allow_redirects=False)
    assert again.status_code == 404
    with sessions() as s:
        assert s.scalars(select(DeviceAuthorization.status)).one() == "revoked"


def test_an_approved_grant_revoked_before_the_device_polls_is_access_denied(
    auth_server: LiveServer, account: Account
) -> None:
    codes = begin(auth_server, account)
    web = signed_in(auth_server.url, account.email, account.password)
    assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
    home = web.get(f"{auth_server.url}/account")
    revoke = form(home.text, "/account/devices/")
    assert web.post(auth_server.url + revoke.action, data=revoke.fields).status_code == 200
    assert_oauth_error(redeem(auth_server, account, codes["device_code"]), 400, "access_denied")


def test_discovery_names_the_endpoint_and_the_grant(auth_server: LiveServer) -> None:
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        meta = requests.get(f"{auth_server.url}{path}", timeout=10).json()
        assert meta["device_authorization_endpoint"] == (
            f"{auth_server.url}/oauth2/device_authorization"
        )
        assert DEVICE_GRANT in meta["grant_types_supported"]


def test_revoking_the_application_withdraws_an_approved_device_grant(
    auth_server: LiveServer, account: Account
) -> None:
    codes = begin(auth_server, account)
    web = signed_in(auth_server.url, account.email, account.password)
    assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
    # The user withdraws the application's access before the device polled.
    r = web.post(
        f"{auth_server.url}/account/authorizations/{account.app_id}/revoke",
        data=form(web.get(f"{auth_server.url}/account/authorizations").text, "/account").fields,
        allow_redirects=False,
    )
    assert r.status_code == 302, r.text
    assert_oauth_error(redeem(auth_server, account, codes["device_code"]), 400, "access_denied")


def test_a_wrong_code_is_a_clear_page(auth_server: LiveServer, account: Account) -> None:
    web = signed_in(auth_server.url, account.email, account.password)
    for typed in ("BBBB-BBBB", "0000-1111", "x" * 40):
        r = enter_code(web, auth_server.url, typed)
        assert r.status_code == 400, r.text
        assert "This code is not right" in text(r.text)
    too_long = enter_code(web, auth_server.url, "B" * 41)
    assert too_long.status_code == 400


def test_disabling_the_user_withdraws_an_approved_device_grant(
    auth_server: LiveServer, account: Account, stores: Stores, sessions: sessionmaker[Session]
) -> None:
    codes = begin(auth_server, account)
    web = signed_in(auth_server.url, account.email, account.password)
    assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
    set_user_enabled(stores, account.email, enabled=False)
    set_user_enabled(stores, account.email, enabled=True)
    # Enabled again, the user's earlier approval does not come back.
    assert_oauth_error(redeem(auth_server, account, codes["device_code"]), 400, "access_denied")
    with sessions() as s:
        assert s.scalars(select(DeviceAuthorization.status)).one() == "revoked"


def test_the_account_list_is_one_bounded_query(
    auth_server: LiveServer, account: Account, engine: Engine
) -> None:
    web = signed_in(auth_server.url, account.email, account.password)
    for _ in range(3):
        codes = begin(auth_server, account)
        assert answer(web, auth_server.url, codes["user_code"]).status_code == 200
        assert redeem(auth_server, account, codes["device_code"]).status_code == 200
    with counting(engine) as statements:
        home = web.get(f"{auth_server.url}/account")
    assert len(forms_to(home.text, "/account/devices/")) == 3
    listing = [s for s in statements if "device_authorizations" in s]
    assert len(listing) == 1 and "LIMIT" in listing[0].upper(), listing


def forms_to(html: str, action: str) -> list[Any]:
    """Return the forms of a page posting under ``action``."""
    return [f for f in forms(html) if action in f.action]
