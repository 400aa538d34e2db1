"""``/oauth2/authorize`` over real HTTP: sign-in, consent, CSRF, the code at the token endpoint."""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from common.models import AuthorizationCode
from common.tokens import digest
from tests.functional.authorize_support import (
    CHALLENGE,
    HTTPS_CB,
    assert_error_page,
    authorize_url,
    code_count,
)
from tests.pages import SECURITY_HEADERS, Account, form, query, sign_in, text
from tests.servers import LiveServer


def test_sign_in_required_then_consent_names_app_owner_and_host(
    combined_server: LiveServer, web: requests.Session, account: Account
) -> None:
    base = combined_server.url
    url = authorize_url(
        base,
        client_id=account.client_id,
        redirect_uri="https://client.example:8443/cb",
        response_type="code",
        scope="offline_access",
        state="st&ate=1",
    )
    r = web.get(url, allow_redirects=False)
    assert r.status_code == 302
    next_path = query(r.headers["Location"])["next"]
    assert next_path == url[len(base) :]
    signed = sign_in(web, base, account.email, next=next_path)
    assert signed.status_code == 302 and signed.headers["Location"] == next_path
    consent = web.get(base + next_path, allow_redirects=False)
    assert consent.status_code == 200
    body = text(consent.text)
    assert "Gallery Viewer" in body and "Ada Owner" in body
    assert "client.example:8443" in body
    assert "Offline access" in body and "25 years" in body
    for name, value in SECURITY_HEADERS.items():
        assert consent.headers[name] == value
    csp = consent.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "default-src 'self'" in csp
    # The decision is a form POST that is redirected to the client: form-action must allow it.
    assert "form-action 'self' https://client.example:8443;" in csp
    assert "<script" not in consent.text


def test_no_offline_access_text_without_the_scope(
    combined_server: LiveServer, web: requests.Session, account: Account
) -> None:
    base = combined_server.url
    sign_in(web, base, account.email)
    url = authorize_url(
        base, client_id=account.client_id, redirect_uri="com.example.app:/cb", response_type="code"
    )
    consent = web.get(url, allow_redirects=False)
    assert consent.status_code == 200
    assert "Offline access" not in consent.text and "60 days" in text(consent.text)
    assert "form-action 'self' com.example.app:;" in consent.headers["Content-Security-Policy"]
    assert "an app installed on this device" in text(consent.text)


def consent_form(
    web: requests.Session, base: str, account: Account, **params: str
) -> dict[str, str]:
    """Sign in, open the consent page and return its form's fields."""
    sign_in(web, base, account.email)
    values = {"client_id": account.client_id, "response_type": "code", **params}
    page = web.get(authorize_url(base, **values), allow_redirects=False)
    assert page.status_code == 200, page.text
    return form(page.text, "/oauth2/authorize").fields


def test_approve_redirects_with_a_code_and_the_state(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
    caplog: pytest.LogCaptureFixture,
) -> None:
    base = combined_server.url
    fields = consent_form(
        web,
        base,
        account,
        redirect_uri="http://127.0.0.1:8765/cb",
        state="opaque state/+=",
        scope="offline_access",
        code_challenge=CHALLENGE,
        code_challenge_method="S256",
    )
    with caplog.at_level(logging.INFO, logger="artcat.audit"):
        r = web.post(
            f"{base}/oauth2/authorize", data={**fields, "approve": "Allow"}, allow_redirects=False
        )
    assert r.status_code == 302, r.text
    location = r.headers["Location"]
    assert location.startswith("http://127.0.0.1:8765/cb?")
    q = query(location)
    assert q["state"] == "opaque state/+=" and len(q["code"]) >= 43
    with sessions() as s:
        row = s.scalar(select(AuthorizationCode))
        assert row is not None
        assert row.digest == digest(q["code"])
        assert row.user_id == account.user_id and row.application_id == account.app_id
        assert row.redirect_uri == "http://127.0.0.1:8765/cb"
        assert row.scope == "offline_access"
        assert (row.code_challenge, row.code_challenge_method) == (CHALLENGE, "S256")
    audit = [rec.getMessage() for rec in caplog.records if rec.name == "artcat.audit"]
    assert any('"consent.approved"' in line and account.user_id in line for line in audit)
    assert not any(q["code"] in line for line in audit)


def test_deny_redirects_with_access_denied_and_the_state(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
    caplog: pytest.LogCaptureFixture,
) -> None:
    base = combined_server.url
    fields = consent_form(web, base, account, redirect_uri="com.example.app:/cb", state="s-9")
    with caplog.at_level(logging.INFO, logger="artcat.audit"):
        r = web.post(
            f"{base}/oauth2/authorize", data={**fields, "deny": "Deny"}, allow_redirects=False
        )
    assert r.status_code == 302
    assert r.headers["Location"].startswith("com.example.app:/cb?")
    q = query(r.headers["Location"])
    assert q["error"] == "access_denied" and q["state"] == "s-9" and "code" not in q
    assert code_count(sessions) == 0
    assert any('"consent.denied"' in rec.getMessage() for rec in caplog.records)


@pytest.mark.parametrize("csrf", ["missing", "forged", "other-session"])
def test_consent_without_a_valid_csrf_token_writes_nothing(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
    csrf: str,
) -> None:
    base = combined_server.url
    fields = consent_form(web, base, account, redirect_uri=HTTPS_CB, state="s")
    if csrf == "missing":
        del fields["csrf_token"]
    elif csrf == "forged":
        fields["csrf_token"] = fields["csrf_token"][:-4] + "AAAA"
    else:
        with requests.Session() as other:
            fields["csrf_token"] = form(
                other.get(f"{base}/account/sign_in").text, "/account/sign_in"
            ).fields["csrf_token"]
    r = web.post(
        f"{base}/oauth2/authorize", data={**fields, "approve": "Allow"}, allow_redirects=False
    )
    assert_error_page(r)
    assert code_count(sessions) == 0


def test_consent_post_is_revalidated(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    sessions: sessionmaker[Session],
) -> None:
    base = combined_server.url
    fields = consent_form(web, base, account, redirect_uri=HTTPS_CB)
    fields["redirect_uri"] = "javascript:alert(1)"
    r = web.post(
        f"{base}/oauth2/authorize", data={**fields, "approve": "Allow"}, allow_redirects=False
    )
    assert_error_page(r)
    fields["redirect_uri"] = HTTPS_CB
    r = web.post(f"{base}/oauth2/authorize", data=fields, allow_redirects=False)
    assert r.status_code == 400  # neither Allow nor Deny
    assert code_count(sessions) == 0


def test_consent_post_after_signing_out_is_refused(
    combined_server: LiveServer, web: requests.Session, account: Account
) -> None:
    base = combined_server.url
    fields = consent_form(web, base, account, redirect_uri=HTTPS_CB)
    sign_out = form(web.get(f"{base}/account").text, "/account/sign_out").fields
    assert web.post(f"{base}/account/sign_out", data=sign_out).status_code == 200
    r = web.post(
        f"{base}/oauth2/authorize", data={**fields, "approve": "Allow"}, allow_redirects=False
    )
    # The CSRF token died with the session: nothing is approved.
    assert r.status_code == 400
    assert urlsplit(r.url).path == "/oauth2/authorize"


def test_consent_code_is_redeemed_at_the_token_endpoint_and_revocable(
    combined_server: LiveServer, web: requests.Session, account: Account, stores: Any
) -> None:
    """End to end: consent page -> code -> /oauth2/access_token (PKCE) -> account revoke."""
    base = combined_server.url
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    redirect_uri = "http://127.0.0.1:8765/cb"
    fields = consent_form(
        web,
        base,
        account,
        redirect_uri=redirect_uri,
        state="e2e",
        scope="offline_access",
        code_challenge=challenge.decode(),
        code_challenge_method="S256",
    )
    r = web.post(
        f"{base}/oauth2/authorize", data={**fields, "approve": "Allow"}, allow_redirects=False
    )
    code = query(r.headers["Location"])["code"]
    token = requests.post(
        f"{base}/oauth2/access_token",
        data={
            "client_id": account.client_id,
            "client_secret": account.client_secret,
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        },
        timeout=10,
    )
    assert token.status_code == 200, token.text
    access = token.json()["access_token"]
    assert stores.tokens.lookup(access) is not None
    page = web.get(f"{base}/account/authorizations")
    revoke = form(page.text, f"/account/authorizations/{account.app_id}/revoke")
    assert web.post(base + revoke.action, data=revoke.fields).status_code == 200
    assert stores.tokens.lookup(access) is None
