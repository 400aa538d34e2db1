"""Sign in with artcat: OpenID Connect Core on the code flow, with Authlib's OIDC client as a
stock relying party over real HTTP (discovery, code + PKCE, the ID token checked against the
JWKS, userinfo by GET and POST), the prompt and max_age rules, and userinfo's refusals."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urljoin

import pytest
import requests
from authlib.oidc.discovery import OpenIDProviderMetadata
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from auth_server.keys import CURRENT, JWKS_MAX_AGE, NEXT
from common.ids import utcnow
from common.models import Application, RefreshFamily, SigningKey, Token, User
from common.settings import AuthSettings, Settings
from common.stores import Stores
from tests.functional.authorize_support import HTTPS_CB, approve, authorize_url
from tests.functional.oidc_support import (
    DISCOVERY,
    ask_for,
    forgeries,
    grant_and_redeem,
    jws_header,
    keyring,
    redeem_code,
    relying_party,
    sign_in_with_artcat,
    silently,
)
from tests.pages import PASSWORD, Account, form, make_account, query, sign_in
from tests.servers import LiveServer

pytestmark = pytest.mark.usefixtures("fresh_keys")


def verify(id_token: str, jwks: dict[str, Any], algs: list[str]) -> dict[str, Any]:
    """Verify an ID token's signature against a JWKS, as the stock client does."""
    from joserfc.jws import JWSRegistry

    token = jwt.decode(id_token, KeySet.import_key_set(jwks), registry=JWSRegistry(algorithms=algs))
    return dict(token.claims)


def test_discovery_names_exactly_what_is_supported(auth_server: LiveServer) -> None:
    base = auth_server.url
    r = requests.get(base + DISCOVERY, timeout=10)
    assert r.status_code == 200
    meta = OpenIDProviderMetadata(r.json())
    meta.validate()
    assert meta["issuer"] == base
    assert meta["jwks_uri"] == f"{base}/oauth2/jwks"
    assert meta["userinfo_endpoint"] == f"{base}/oauth2/userinfo"
    assert meta["response_types_supported"] == ["code"]
    assert meta["id_token_signing_alg_values_supported"] == ["ES256", "RS256"]
    assert {"openid", "profile", "email", "offline_access"} == set(meta["scopes_supported"])
    assert meta["prompt_values_supported"] == ["none", "login", "consent"]
    keys = requests.get(meta["jwks_uri"], timeout=10)
    assert keys.headers["Cache-Control"] == f"public, max-age={JWKS_MAX_AGE}"
    published = keys.json()["keys"]
    assert {k["alg"] for k in published} == {"ES256", "RS256"}
    assert all("d" not in k and "p" not in k for k in published)  # public halves only


def test_a_stock_relying_party_signs_its_user_in(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    base = auth_server.url
    rp = relying_party(base, account)
    got = sign_in_with_artcat(rp, signed_in, base)
    # Authlib's client checked the signature against the JWKS, iss, aud, exp, nonce, at_hash.
    claims = got["claims"]
    assert claims["iss"] == base
    assert claims["aud"] == [account.client_id]
    assert claims["sub"] == account.user_id
    assert claims["name"] == account.name
    assert claims["email"] == account.email
    assert claims["email_verified"] is False  # mail is off: nobody proved the address
    assert claims["amr"] == ["pwd"]
    assert claims["at_hash"] and claims["nonce"] and claims["auth_time"] <= claims["iat"]
    assert jws_header(got["token"]["id_token"])["alg"] == "ES256"
    expected = {
        "sub": account.user_id,
        "name": account.name,
        "email": account.email,
        "email_verified": False,
    }
    for answer in (got["get"], got["post"]):
        assert {k: answer[k] for k in expected} == expected


def test_email_verified_once_the_address_is_confirmed(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    with sessions() as s, s.begin():
        s.execute(update(User).where(User.id == account.user_id).values(email_verified_at=utcnow()))
    got = sign_in_with_artcat(relying_party(auth_server.url, account), signed_in, auth_server.url)
    assert got["claims"]["email_verified"] is True
    assert got["get"]["email_verified"] is True


def test_openid_alone_gives_only_the_subject(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    rp = relying_party(auth_server.url, account, scope="openid")
    got = sign_in_with_artcat(rp, signed_in, auth_server.url)
    assert "email" not in got["claims"] and "name" not in got["claims"]
    assert got["get"] == {"sub": account.user_id}


def test_rs256_for_an_application_that_asks(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    ask_for(sessions, account, "RS256")
    got = sign_in_with_artcat(relying_party(auth_server.url, account), signed_in, auth_server.url)
    head = jws_header(got["token"]["id_token"])
    assert head["alg"] == "RS256"
    jwks = requests.get(f"{auth_server.url}/oauth2/jwks", timeout=10).json()
    assert any(k["kid"] == head["kid"] and k["kty"] == "RSA" for k in jwks["keys"])


def _openid_url(base: str, account: Account, **extra: str) -> str:
    return authorize_url(
        base,
        client_id=account.client_id,
        redirect_uri=HTTPS_CB,
        response_type="code",
        **{"scope": "openid", "state": "s-1", **extra},
    )


def test_prompt_none_without_a_session_is_login_required(
    auth_server: LiveServer, account: Account, web: requests.Session
) -> None:
    r = web.get(_openid_url(auth_server.url, account, prompt="none"), allow_redirects=False)
    assert r.status_code == 302
    assert r.headers["Location"].startswith(HTTPS_CB)
    back = query(r.headers["Location"])
    assert back["error"] == "login_required"
    assert back["state"] == "s-1"
    assert back["iss"] == auth_server.url


def test_prompt_none_with_a_session_is_consent_required(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    """Signed in, but the application holds no grant of the user: consent_required."""
    url = _openid_url(auth_server.url, account, prompt="none")
    r = signed_in.get(url, allow_redirects=False)
    assert r.status_code == 302
    back = query(r.headers["Location"])
    assert (back["error"], back["state"]) == ("consent_required", "s-1")
    # A consent approved whose code was never redeemed is no grant either.
    approve(signed_in, auth_server.url, _openid_url(auth_server.url, account))
    r = signed_in.get(url, allow_redirects=False)
    assert query(r.headers["Location"])["error"] == "consent_required"


def test_prompt_none_succeeds_on_a_live_grant(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    """OIDC Core 3.1.2.1: the user already authorized the client for the scope, so prompt=none
    answers with a code, without a page; anything less than that grant is consent_required."""
    base = auth_server.url
    first = grant_and_redeem(signed_in, base, account, "openid profile")
    back = silently(signed_in, base, account, nonce="n-1", scope="openid")
    assert back["state"] == "s-1" and back["iss"] == base and "error" not in back
    issued = redeem_code(base, account, back["code"])
    jwks = requests.get(f"{base}/oauth2/jwks", timeout=10).json()
    claims = verify(issued["id_token"], jwks, ["ES256"])
    assert claims["sub"] == verify(first["id_token"], jwks, ["ES256"])["sub"] == account.user_id
    assert claims["nonce"] == "n-1" and claims["aud"] == [account.client_id]
    # The same scope and a narrower one: still silent.
    assert "code" in silently(signed_in, base, account, scope="openid profile")
    # A wider scope than granted needs the user: consent_required, no code.
    wider = silently(signed_in, base, account, scope="openid profile email")
    assert wider["error"] == "consent_required" and "code" not in wider
    # A sign-in older than max_age cannot be checked silently: login_required.
    assert silently(signed_in, base, account, max_age="0")["error"] == "login_required"
    # Another application of the user's own is not authorized by this grant.
    other = make_account(
        sessions, base_settings, email="other@example.org", redirect_uris=[HTTPS_CB]
    )
    assert silently(signed_in, base, other)["error"] == "consent_required"
    # Another user signed in: the grant is not theirs.
    with requests.Session() as elsewhere:
        assert sign_in(elsewhere, base, other.email).status_code == 302
        assert silently(elsewhere, base, account)["error"] == "consent_required"
    # Without openid, prompt means nothing: the consent page, as always.
    plain = authorize_url(
        base,
        client_id=account.client_id,
        redirect_uri=HTTPS_CB,
        response_type="code",
        prompt="none",
    )
    assert signed_in.get(plain, allow_redirects=False).status_code == 200


def test_prompt_none_ends_with_the_revoked_grant(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    """Revoked under Authorized applications, the grant no longer answers prompt=none."""
    base = auth_server.url
    grant_and_redeem(signed_in, base, account, "openid")
    assert "code" in silently(signed_in, base, account)
    page = signed_in.get(f"{base}/account/authorizations")
    revoke = form(page.text, f"/account/authorizations/{account.app_id}/revoke")
    r = signed_in.post(base + revoke.action, data=revoke.fields, allow_redirects=False)
    assert r.status_code == 302
    assert silently(signed_in, base, account)["error"] == "consent_required"


def test_prompt_none_on_a_live_refresh_family(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    """An application registered for refresh tokens keeps its grant while its family lives,
    past its one-hour access tokens; the family revoked, the grant is gone."""
    base = auth_server.url
    with sessions() as s, s.begin():
        s.execute(
            update(Application).where(Application.id == account.app_id).values(refresh_tokens=True)
        )
    assert grant_and_redeem(signed_in, base, account, "openid offline_access")["refresh_token"]
    with sessions() as s, s.begin():  # the access tokens have expired
        s.execute(update(Token).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert "code" in silently(signed_in, base, account, scope="openid offline_access")
    with sessions() as s, s.begin():
        s.execute(update(RefreshFamily).values(revoked_at=utcnow()))
    assert silently(signed_in, base, account)["error"] == "consent_required"


@pytest.mark.parametrize("extra", [{"max_age": "0"}, {"prompt": "login"}])
def test_max_age_and_prompt_login_force_a_fresh_sign_in(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    extra: dict[str, str],
) -> None:
    base = auth_server.url
    r = signed_in.get(_openid_url(base, account, **extra), allow_redirects=False)
    assert r.status_code == 302
    assert "/account/sign_in" in r.headers["Location"], r.headers["Location"]
    # The sign-in form is shown although the user is signed in...
    again = signed_in.get(urljoin(base, r.headers["Location"]), allow_redirects=False)
    assert again.status_code == 200
    fresh = form(again.text, "/account/sign_in")
    # ...and the session has not ended: a GET that any site can send signs no one out.
    assert signed_in.get(f"{base}/account", allow_redirects=False).status_code == 200
    next_path = query(r.headers["Location"])["next"]
    assert "max_age" not in next_path and "prompt" not in next_path
    data = {**fresh.fields, "email": account.email, "password": PASSWORD}
    done = signed_in.post(base + fresh.action, data=data, allow_redirects=False)
    assert done.status_code == 302 and done.headers["Location"].endswith(next_path)
    location = approve(signed_in, base, base + next_path)
    assert "code" in query(location)


def test_bad_openid_parameters_go_back_to_the_client(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    for extra in ({"max_age": "-1"}, {"prompt": "sideways"}, {"nonce": "n" * 256}):
        url = _openid_url(auth_server.url, account, **extra)
        r = signed_in.get(url, allow_redirects=False)
        assert r.status_code == 302, extra
        assert query(r.headers["Location"])["error"] == "invalid_request", extra


def test_without_openid_nothing_changes(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    base = auth_server.url
    url = authorize_url(
        base, client_id=account.client_id, redirect_uri=HTTPS_CB, response_type="code"
    )
    code = query(approve(signed_in, base, url))["code"]
    token = requests.post(
        f"{base}/oauth2/access_token",
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": HTTPS_CB},
        auth=(account.client_id, account.client_secret),
        timeout=10,
    )
    assert token.status_code == 200, token.text
    assert "id_token" not in token.json()
    # A token without the openid scope does not open userinfo.
    bearer = {"Authorization": f"Bearer {token.json()['access_token']}"}
    refused = requests.get(f"{base}/oauth2/userinfo", headers=bearer, timeout=10)
    assert refused.status_code == 403
    assert 'error="insufficient_scope"' in refused.headers["WWW-Authenticate"]
    # profile and email come with openid only (as before: unknown without it).
    r = signed_in.get(url + "&scope=email", allow_redirects=False)
    assert query(r.headers["Location"])["error"] == "invalid_scope"


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_userinfo_needs_a_valid_token(auth_server: LiveServer, method: str) -> None:
    url = f"{auth_server.url}/oauth2/userinfo"
    none = requests.request(method, url, timeout=10)
    assert none.status_code == 401
    assert none.headers["WWW-Authenticate"].startswith("Bearer")
    bad = requests.request(method, url, headers={"Authorization": "Bearer nope"}, timeout=10)
    assert bad.status_code == 401
    assert 'error="invalid_token"' in bad.headers["WWW-Authenticate"]


def test_a_nonce_is_taken_once(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    base = auth_server.url
    url = _openid_url(base, account, nonce="same-nonce")
    approve(signed_in, base, url)
    again = signed_in.get(url, allow_redirects=False)
    assert again.status_code == 302
    assert query(again.headers["Location"])["error"] == "invalid_request"


def test_a_rotation_publishes_first_and_old_tokens_still_verify(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    stores: Stores,
    auth_settings: AuthSettings,
    sessions: sessionmaker[Session],
) -> None:
    base = auth_server.url
    rp = relying_party(base, account)
    first = sign_in_with_artcat(rp, signed_in, base)["token"]["id_token"]
    old_kid = jws_header(first)["kid"]

    ring = keyring(stores, auth_settings)
    made = ring.rotate()
    states = {k.kid: k.state for k in ring.key_states()}
    assert states[old_kid] == CURRENT and all(states[kid] == NEXT for kid in made)
    # Published before it signs: in the JWKS now, while tokens are still signed by the old key.
    jwks = requests.get(f"{base}/oauth2/jwks", timeout=10).json()
    assert set(made) <= {k["kid"] for k in jwks["keys"]}
    second = sign_in_with_artcat(relying_party(base, account), signed_in, base)["token"]
    assert jws_header(second["id_token"])["kid"] == old_kid

    # The lead time passes (every activation moved into the past, the new keys' last).
    with sessions() as s, s.begin():
        s.execute(
            update(SigningKey)
            .where(SigningKey.kid.not_in(made))
            .values(activates_at=utcnow() - timedelta(hours=2))
        )
        s.execute(
            update(SigningKey)
            .where(SigningKey.kid.in_(made))
            .values(activates_at=utcnow() - timedelta(seconds=1))
        )
    ring.announce()
    third = sign_in_with_artcat(relying_party(base, account), signed_in, base)["token"]
    assert jws_header(third["id_token"])["kid"] in made
    jwks = requests.get(f"{base}/oauth2/jwks", timeout=10).json()
    # The old key stays published: the token it signed still verifies.
    claims = verify(first, jwks, ["ES256"])
    assert claims["sub"] == account.user_id
    with sessions() as s:
        assert s.scalar(select(SigningKey.kid).where(SigningKey.kid == old_kid)) == old_kid


def test_altered_id_tokens_are_refused_by_a_relying_party(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    """The published keys leave a verifier no way to take an altered token."""
    base = auth_server.url
    token = sign_in_with_artcat(relying_party(base, account), signed_in, base)["token"]
    jwks = requests.get(f"{base}/oauth2/jwks", timeout=10).json()
    algs = ["ES256", "RS256"]
    assert verify(token["id_token"], jwks, algs)["sub"] == account.user_id
    for forged in forgeries(token["id_token"], jwks, "someone-else"):
        with pytest.raises((JoseError, ValueError)):
            verify(forged, jwks, algs)


def test_id_token_hint_is_verified(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    """The server's own verification path: an altered hint is refused (invalid_request, back
    to the client); a true hint naming the signed-in user goes on; one naming another user asks
    for a sign-in (login_required with prompt=none)."""
    base = auth_server.url
    id_token = sign_in_with_artcat(relying_party(base, account), signed_in, base)["token"][
        "id_token"
    ]
    jwks = requests.get(f"{base}/oauth2/jwks", timeout=10).json()
    other = make_account(
        sessions, base_settings, email="other@example.org", redirect_uris=[HTTPS_CB]
    )
    garbage = [
        ".",
        "..",
        "a.b",
        "e30.e30.",
        "e30.e30.e30",
        "eyJhbGciOiJFUzI1NiJ9.e30.AAAA",
        "x" * 4000,
    ]
    for forged in [*forgeries(id_token, jwks, other.user_id), *garbage]:
        r = signed_in.get(_openid_url(base, account, id_token_hint=forged), allow_redirects=False)
        assert r.status_code == 302, forged
        assert query(r.headers["Location"])["error"] == "invalid_request", forged
    ok = signed_in.get(_openid_url(base, account, id_token_hint=id_token), allow_redirects=False)
    assert ok.status_code == 200  # the consent page
    # A hint for another client is no hint here.
    r = signed_in.get(_openid_url(base, other, id_token_hint=id_token), allow_redirects=False)
    assert query(r.headers["Location"])["error"] == "invalid_request"
    # Signed in as someone else: the hinted user must sign in.
    with requests.Session() as elsewhere:
        assert sign_in(elsewhere, base, other.email).status_code == 302
        url = _openid_url(base, account, id_token_hint=id_token, prompt="none")
        r = elsewhere.get(url, allow_redirects=False)
        assert query(r.headers["Location"])["error"] == "login_required"
        r = elsewhere.get(_openid_url(base, account, id_token_hint=id_token), allow_redirects=False)
        assert "/account/sign_in" in r.headers["Location"]


def test_a_posted_decision_is_checked_too(
    auth_server: LiveServer, account: Account, signed_in: requests.Session
) -> None:
    """The consent form's hidden fields come back from the browser: a nonce too long to keep
    is refused there as well (never a 5xx)."""
    from tests.pages import form

    base = auth_server.url
    page = signed_in.get(_openid_url(base, account, nonce="n"), allow_redirects=False)
    fields = form(page.text, "/oauth2/authorize").fields
    r = signed_in.post(
        f"{base}/oauth2/authorize",
        data={**fields, "nonce": "n" * 300, "approve": "Allow"},
        allow_redirects=False,
    )
    assert r.status_code == 302
    assert query(r.headers["Location"])["error"] == "invalid_request"
