"""prompt=none under attack, over real HTTP: a page sending a signed-in user's browser to the
authorize endpoint with ``prompt=none`` gets a code only for an application the user already
authorized for that scope. Never for another application (the attacker's own), a wider scope,
a grant revoked, expired or another user's, nor through a cross-site POST."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.ids import utcnow
from common.models import Token
from common.settings import Settings
from tests.functional.authorize_support import HTTPS_CB, code_count
from tests.functional.oidc_support import (
    grant_and_redeem,
    openid_url,
    silently,
)
from tests.pages import Account, form, make_account, sign_in
from tests.servers import LiveServer

pytestmark = [pytest.mark.functional, pytest.mark.usefixtures("fresh_keys")]


@pytest.fixture
def attacker(sessions: sessionmaker[Session], base_settings: Settings, account: Account) -> Account:
    """Another user, with an application of their own (its callback where they read codes)."""
    return make_account(
        sessions, base_settings, email="mallory@example.org", redirect_uris=[HTTPS_CB]
    )


def refused(
    web: requests.Session,
    base: str,
    account: Account,
    sessions: sessionmaker[Session],
    **extra: str,
) -> str:
    """Ask silently; check no code is made or sent; return the error."""
    before = code_count(sessions)
    back = silently(web, base, account, **extra)
    assert "code" not in back and code_count(sessions) == before
    return back["error"]


def test_no_code_for_an_application_never_authorized(
    auth_server: LiveServer,
    account: Account,
    attacker: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    base = auth_server.url
    grant_and_redeem(signed_in, base, account, "openid profile email")
    assert refused(signed_in, base, attacker, sessions) == "consent_required"


def test_no_code_for_a_wider_scope(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    base = auth_server.url
    grant_and_redeem(signed_in, base, account, "openid")
    for scope in ("openid email", "openid profile", "openid offline_access"):
        assert refused(signed_in, base, account, sessions, scope=scope) == "consent_required"
    assert "code" in silently(signed_in, base, account)  # the grant itself still answers


def test_no_code_on_a_revoked_or_expired_grant(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    base = auth_server.url
    grant_and_redeem(signed_in, base, account, "openid")
    with sessions() as s, s.begin():
        s.execute(update(Token).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert refused(signed_in, base, account, sessions) == "consent_required"
    grant_and_redeem(signed_in, base, account, "openid")
    page = signed_in.get(f"{base}/account/authorizations")
    revoke = form(page.text, f"/account/authorizations/{account.app_id}/revoke")
    assert signed_in.post(base + revoke.action, data=revoke.fields).status_code == 200
    assert refused(signed_in, base, account, sessions) == "consent_required"


def test_no_code_on_another_users_grant(
    auth_server: LiveServer,
    account: Account,
    attacker: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    """The attacker authorized the victim's application for themselves: that is no grant of
    the victim's."""
    base = auth_server.url
    with requests.Session() as mallory:
        assert sign_in(mallory, base, attacker.email).status_code == 302
        grant_and_redeem(mallory, base, account, "openid")
        assert "code" in silently(mallory, base, account)
    assert refused(signed_in, base, account, sessions) == "consent_required"


def test_no_silent_code_through_a_cross_site_post(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> None:
    """prompt=none is answered on a GET only: a POST is a decision, and needs the form's CSRF
    token and a choice."""
    base = auth_server.url
    grant_and_redeem(signed_in, base, account, "openid")
    before = code_count(sessions)
    fields = dict(
        client_id=account.client_id,
        redirect_uri=HTTPS_CB,
        response_type="code",
        scope="openid",
        state="s-1",
        prompt="none",
    )
    for data in (fields, {**fields, "approve": "Allow"}):
        r = signed_in.post(f"{base}/oauth2/authorize", data=data, allow_redirects=False)
        assert r.status_code == 400, r.text
        assert "code=" not in r.headers.get("Location", "")
    assert code_count(sessions) == before
    # The same request as a GET, from the user's own browser, is answered.
    r = signed_in.get(openid_url(base, account, prompt="none"), allow_redirects=False)
    assert "code=" in r.headers["Location"]
