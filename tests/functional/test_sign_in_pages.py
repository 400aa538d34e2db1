"""Sign-in, sign-up and sign-out pages over real HTTP: sessions, `next`, headers, throttling."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app
from auth_server.views.verify import SALT as VERIFY_SALT
from common.models import User
from common.settings import AuthSettings, Settings
from common.stores import Stores
from tests.pages import (
    SECURITY_HEADERS,
    Account,
    form,
    make_account,
    serving,
    sign_in,
    text,
)
from tests.servers import LiveServer


@pytest.fixture
def web() -> Iterator[requests.Session]:
    """A browser-like session."""
    with requests.Session() as s:
        yield s


@pytest.fixture
def account(clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings) -> Account:
    """A user with a known password."""
    return make_account(sessions, base_settings)


def signed_in(web: requests.Session, base: str) -> bool:
    """Tell whether the session can see the account page."""
    r = web.get(f"{base}/account", allow_redirects=False)
    return r.status_code == 200


def test_pages_are_html_with_the_security_headers(combined_server: LiveServer) -> None:
    base = combined_server.url
    for path in ("/account/sign_in", "/account/sign_up", "/account/password/forgot"):
        r = requests.get(base + path, timeout=10)
        assert r.status_code == 200
        assert r.headers["Content-Type"].startswith("text/html")
        for name, value in SECURITY_HEADERS.items():
            assert r.headers[name] == value, (path, name)
        csp = r.headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "form-action 'self';" in csp
        assert '<html lang="en">' in r.text and 'name="viewport"' in r.text
        assert "<script" not in r.text and "style=" not in r.text
        forms = [f.split("</form>")[0] for f in r.text.split("<form")[1:]]
        for f in forms:
            # Every form that posts carries its CSRF token; the one that does not is the
            # header's catalog search (a GET to the catalog's search page).
            if 'method="get"' in f.split(">")[0]:
                assert 'action="/search"' in f and 'name="q"' in f, path
            else:
                assert 'method="post"' in f.split(">")[0], path
                assert 'name="csrf_token"' in f, path
    css = requests.get(f"{base}/account/static/site.css", timeout=10)
    assert css.status_code == 200 and css.headers["Content-Type"].startswith("text/css")
    assert css.headers["X-Content-Type-Options"] == "nosniff"


def test_labels_are_tied_to_inputs(combined_server: LiveServer) -> None:
    html = requests.get(f"{combined_server.url}/account/sign_up", timeout=10).text
    for field_id in ("name", "email", "password"):
        assert f'<label for="{field_id}">' in html
        assert f'id="{field_id}"' in html
    assert 'autocomplete="new-password"' in html


def test_sign_in_and_the_session_is_renewed(
    combined_server: LiveServer, web: requests.Session, account: Account
) -> None:
    base = combined_server.url
    before = form(web.get(f"{base}/account/sign_in").text, "/account/sign_in").fields
    r = web.post(
        f"{base}/account/sign_in",
        data={**before, "email": account.email.upper(), "password": account.password},
        allow_redirects=False,
    )
    assert r.status_code == 302 and r.headers["Location"] == "/account"
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    assert signed_in(web, base)
    # The session was started afresh: the CSRF token of the signed-out session is dead.
    stale = web.post(f"{base}/account/sign_out", data={"csrf_token": before["csrf_token"]})
    assert stale.status_code == 400 and signed_in(web, base)


def test_failed_sign_in_is_generic_and_audited(
    combined_server: LiveServer,
    web: requests.Session,
    account: Account,
    caplog: pytest.LogCaptureFixture,
) -> None:
    base = combined_server.url
    with caplog.at_level(logging.INFO, logger="artcat.audit"):
        wrong = sign_in(web, base, account.email, "Wrong password 1")
        unknown = sign_in(web, base, "nobody@example.org", "Wrong password 1")
    for r in (wrong, unknown):
        assert r.status_code == 400
        assert "The email or password is incorrect." in r.text
        assert 'role="alert"' in r.text and 'aria-describedby="form-error"' in r.text
        assert not signed_in(web, base)
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "artcat.audit"]
    failed = [line for line in lines if '"sign_in.failed"' in line]
    assert len(failed) == 2 and account.user_id in failed[0]
    assert not any("Wrong password" in line for line in lines)


def test_sign_up_without_mail_keeps_the_password_and_never_confirms(
    combined_server: LiveServer,
    web: requests.Session,
    clean_db: Any,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    # Email off (the default): nobody can prove an address, so the account keeps the password
    # typed at sign-up and its address stays unconfirmed; no link is made, and none works.
    base = combined_server.url
    page = web.get(f"{base}/account/sign_up", params={"next": "/account/applications"})
    f = form(page.text, "/account/sign_up")
    data = {**f.fields, "name": "Grace", "email": "Grace@Example.org", "password": "Tulips in 1637"}
    r = web.post(f"{base}/account/sign_up", data=data, allow_redirects=False)
    assert r.status_code == 200 and "Sign up received" in r.text
    assert "sends no email" in text(r.text)
    assert not signed_in(web, base)  # the password, at the sign-in page, signs in
    with sessions() as s:
        user = s.scalar(select(User).where(User.email == "grace@example.org"))
        assert user is not None and user.password_hash and "Tulips" not in user.password_hash
        assert user.email_verified_at is None
        user_id = user.id
    assert not list((base_settings.instance_dir / "outbox").glob("*.eml"))  # no link made
    f = form(web.get(f"{base}/account/sign_in").text, "/account/sign_in")
    data = {**f.fields, "email": "grace@example.org", "password": "Tulips in 1637"}
    r = web.post(f"{base}/account/sign_in", data=data, allow_redirects=False)
    assert r.status_code == 302 and signed_in(web, base)
    # A confirmation link signed with the service's own key is not honoured either.
    token = URLSafeTimedSerializer(base_settings.secret_key, salt=VERIFY_SALT).dumps(
        {"u": user_id, "e": "grace@example.org", "n": ""}
    )
    link = f"{base}/account/email/verify?token={token}"
    assert requests.get(link, timeout=10).status_code == 400
    with sessions() as s:
        assert s.get_one(User, user_id).email_verified_at is None


def test_an_unverified_account_can_sign_in_and_is_told(
    combined_server: LiveServer, web: requests.Session, account: Account, base_settings: Settings
) -> None:
    base = combined_server.url
    assert sign_in(web, base, account.email).status_code == 302
    home = web.get(f"{base}/account")
    assert "Your email address is not confirmed" in text(home.text)
    assert "sends no email" in text(home.text)
    assert "/account/email/resend" not in home.text  # email off: there is no link to send
    csrf = form(home.text, "/account/sign_out").fields["csrf_token"]
    r = web.post(f"{base}/account/email/resend", data={"csrf_token": csrf})
    assert r.status_code == 200 and "cannot confirm addresses" in text(r.text)
    assert not list((base_settings.instance_dir / "outbox").glob("*.eml"))


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("short1A", "at least 8 characters"),
        ("password123", "too easy to guess"),
        ("1234567890123", "too easy to guess"),
        ("aaaaaaaaaa1", "too easy to guess"),
        ("new@example.org", "email address or name"),
    ],
)
def test_sign_up_refuses_weak_passwords(
    combined_server: LiveServer, web: requests.Session, clean_db: Any, password: str, message: str
) -> None:
    base = combined_server.url
    f = form(web.get(f"{base}/account/sign_up").text, "/account/sign_up")
    data = {**f.fields, "name": "New", "email": "new@example.org", "password": password}
    r = web.post(f"{base}/account/sign_up", data=data, allow_redirects=False)
    assert r.status_code == 400
    assert message in r.text
    assert 'aria-describedby="password-hint password-error"' in r.text
    assert 'aria-invalid="true"' in r.text


@pytest.mark.parametrize(
    "next_value",
    [
        "//evil.example/",
        "https://evil.example/",
        "/\\evil.example",
        "\\\\evil.example",
        "/\\/evil.example",
        "javascript:alert(1)",
        "/\tevil",
        "/account\r\nLocation: https://evil.example",
        "evil.example",
        "http:/evil.example",
    ],
)
def test_next_cannot_leave_the_site(
    combined_server: LiveServer, web: requests.Session, account: Account, next_value: str
) -> None:
    base = combined_server.url
    page = web.get(f"{base}/account/sign_in", params={"next": next_value})
    assert "evil" not in form(page.text, "/account/sign_in").fields.get("next", "")
    # Even when posted directly, a foreign `next` is ignored.
    f = form(page.text, "/account/sign_in")
    data = {**f.fields, "email": account.email, "password": account.password, "next": next_value}
    r = web.post(f"{base}/account/sign_in", data=data, allow_redirects=False)
    assert r.status_code == 302 and r.headers["Location"] == "/account"


def test_next_inside_the_site_is_followed(
    combined_server: LiveServer, web: requests.Session, account: Account
) -> None:
    r = sign_in(web, combined_server.url, account.email, next="/account/authorizations?x=1")
    assert r.status_code == 302 and r.headers["Location"] == "/account/authorizations?x=1"


def test_sign_out_needs_a_post_with_csrf(
    combined_server: LiveServer, web: requests.Session, account: Account
) -> None:
    base = combined_server.url
    sign_in(web, base, account.email)
    assert web.post(f"{base}/account/sign_out", data={}).status_code == 400
    confirm = web.get(f"{base}/account/sign_out")
    assert confirm.status_code == 200 and signed_in(web, base)
    f = form(confirm.text, "/account/sign_out")
    r = web.post(f"{base}/account/sign_out", data=f.fields, allow_redirects=False)
    assert r.status_code == 302 and r.headers["Location"].startswith("/account/sign_in")
    assert not signed_in(web, base)
    assert "You are signed out." in web.get(f"{base}/account/sign_in").text


def test_account_pages_need_sign_in(combined_server: LiveServer, web: requests.Session) -> None:
    for path in ("/account", "/account/authorizations", "/account/applications"):
        r = web.get(combined_server.url + path, allow_redirects=False)
        assert r.status_code == 302
        assert r.headers["Location"].startswith("/account/sign_in")


def test_session_cookie_is_secure_when_configured(
    auth_settings: AuthSettings, stores: Stores, account: Account
) -> None:
    configured = {"session_cookie_secure": True, "public_url": "https://auth.example"}
    app = create_app(dataclasses.replace(auth_settings, **configured), stores)
    client = app.test_client()
    page = client.get("/account/sign_in", base_url="https://auth.example")
    f = form(page.get_data(as_text=True), "/account/sign_in")
    r = client.post(
        "/account/sign_in",
        base_url="https://auth.example",
        data={**f.fields, "email": account.email, "password": account.password},
    )
    # No Referer is sent under Referrer-Policy: no-referrer, and the sign-in still works on https.
    assert r.status_code == 302
    cookies = {c.split("=", 1)[0]: c for c in r.headers.getlist("Set-Cookie")}
    cookie = cookies["session"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    device = cookies["artcat_device"]  # the device cookie too (test_sign_in_lockout)
    assert "Secure" in device and "HttpOnly" in device and "SameSite=Strict" in device


def test_failed_sign_ins_are_throttled(
    auth_settings: AuthSettings, stores: Stores, account: Account
) -> None:
    settings = dataclasses.replace(
        auth_settings,
        login_attempts_per_account="3/minute",
        redis_prefix=auth_settings.redis_prefix + "-throttle",
    )
    try:
        with serving(create_app(settings, stores)) as live, requests.Session() as web:
            web.headers["Connection"] = "close"  # no idle connection to wait for at the end
            for _ in range(3):
                assert sign_in(web, live.url, account.email, "Wrong password 1").status_code == 400
            blocked = sign_in(web, live.url, account.email, account.password)
            assert blocked.status_code == 429
            assert "Too many failed sign-ins" in blocked.text
    finally:
        stores.redis.delete(*stores.redis.keys(settings.redis_prefix + ":*") or ["-"])


def test_malformed_input_is_never_a_server_error(
    combined_server: LiveServer, web: requests.Session, account: Account
) -> None:
    base = combined_server.url
    for path in ("/account/sign_in", "/account/sign_up"):
        f = form(web.get(base + path).text, path)
        data = {**f.fields, "name": "N\x00", "email": "a\x00@example.org", "password": "x\x00" * 6}
        assert web.post(base + path, data=data).status_code == 400
    for raw in ("client_id=%00", "client_id=%ff%fe&redirect_uri=%00", "client_id[]=1&state=%00"):
        assert web.get(f"{base}/oauth2/authorize?{raw}").status_code == 400
    sign_in(web, base, account.email)
    f = form(web.get(f"{base}/account/applications").text, "/account/applications")
    data = {**f.fields, "name": "App\x00", "redirect_uris": "https://a.example/\x00"}
    r = web.post(f"{base}/account/applications", data=data)
    assert r.status_code == 400 and "control characters" in r.text
    for path in ("/account/applications/%00/rotate", "/account/authorizations/%00/revoke"):
        assert web.post(base + path, data=f.fields).status_code == 404


def test_the_sign_in_page_names_the_application_asking(
    combined_server: LiveServer, account: Account
) -> None:
    base = combined_server.url

    def sign_in_page(client_id: str) -> str:
        authorize = f"/oauth2/authorize?client_id={client_id}&response_type=code&state=s"
        r = requests.get(f"{base}/account/sign_in", params={"next": authorize}, timeout=10)
        assert r.status_code == 200
        return text(r.text)

    assert f"{account.app_name} is asking to use your account" in sign_in_page(account.client_id)
    for unknown in ("no-such-client", "%00", ""):
        assert "is asking" not in sign_in_page(unknown)
    plain = requests.get(f"{base}/account/sign_in", params={"next": "/account"}, timeout=10)
    assert "is asking" not in text(plain.text)
