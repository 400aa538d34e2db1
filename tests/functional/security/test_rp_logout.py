"""RP-initiated logout under attack, over real HTTP: an open redirect through an unregistered
``post_logout_redirect_uri``, a forged ``id_token_hint``, a sign-out forced on a user by a link
or a cross-site form; and the sign-out a genuine hint asks for ending every session."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from tests.functional.authorize_support import HTTPS_CB
from tests.functional.oidc_support import forgeries, relying_party, sign_in_with_artcat
from tests.functional.registration_support import AFTER_LOGOUT, LOGOUT
from tests.pages import Account, form, make_account, query, sign_in
from tests.servers import LiveServer

pytestmark = [pytest.mark.functional, pytest.mark.usefixtures("fresh_keys")]

ELSEWHERE = "https://evil.example/phish"


@pytest.fixture
def id_token(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    sessions: sessionmaker[Session],
) -> str:
    """An ID token of the signed-in user, for the application that registered AFTER_LOGOUT."""
    with sessions() as s, s.begin():
        s.execute(
            update(Application)
            .where(Application.id == account.app_id)
            .values(post_logout_redirect_uris=[AFTER_LOGOUT])
        )
    got = sign_in_with_artcat(relying_party(auth_server.url, account), signed_in, auth_server.url)
    return str(got["token"]["id_token"])


def still_signed_in(web: requests.Session, base: str) -> bool:
    """Tell whether the browser's session still opens the account page."""
    return web.get(f"{base}/account", allow_redirects=False).status_code == 200


def test_an_unregistered_post_logout_uri_never_redirects(
    auth_server: LiveServer, account: Account, signed_in: requests.Session, id_token: str
) -> None:
    base = auth_server.url
    for target in (ELSEWHERE, HTTPS_CB, AFTER_LOGOUT + "/../x", AFTER_LOGOUT + "?next=evil"):
        params = {"id_token_hint": id_token, "post_logout_redirect_uri": target, "state": "s"}
        r = signed_in.get(base + LOGOUT, params=params, allow_redirects=False)
        assert r.status_code == 200, r.text
        assert "Location" not in r.headers
        assert "signed out" in r.text and "evil.example" not in r.text
    assert not still_signed_in(signed_in, base)
    # Without a hint, and confirmed by the user: still never to a URI the client did not register.
    with requests.Session() as web:
        assert sign_in(web, base, account.email).status_code == 302
        params = {"client_id": account.client_id, "post_logout_redirect_uri": ELSEWHERE}
        ask = web.get(base + LOGOUT, params=params, allow_redirects=False)
        assert ask.status_code == 200
        confirm = form(ask.text, LOGOUT)
        done = web.post(
            base + confirm.action, data=confirm.fields | {"confirm": "1"}, allow_redirects=False
        )
        assert done.status_code == 200 and "Location" not in done.headers
        assert not still_signed_in(web, base)


def test_a_forged_id_token_hint_is_refused(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    id_token: str,
    sessions: sessionmaker[Session],
    base_settings: Any,
) -> None:
    base = auth_server.url
    jwks = requests.get(f"{base}/oauth2/jwks", timeout=10).json()
    other = make_account(sessions, base_settings, email="victim@example.org")
    for forged in [*forgeries(id_token, jwks, other.user_id), "a.b", "e30.e30.e30"]:
        params = {"id_token_hint": forged, "post_logout_redirect_uri": AFTER_LOGOUT}
        r = signed_in.get(base + LOGOUT, params=params, allow_redirects=False)
        assert r.status_code == 400, forged
        assert "Location" not in r.headers and r.headers["Content-Type"].startswith("text/html")
    assert still_signed_in(signed_in, base)
    # A genuine hint, but another client's id beside it: refused too.
    params = {"id_token_hint": id_token, "client_id": other.client_id}
    assert signed_in.get(base + LOGOUT, params=params, allow_redirects=False).status_code == 400
    assert still_signed_in(signed_in, base)


def test_a_genuine_hint_signs_out_everywhere_and_goes_back(
    auth_server: LiveServer, account: Account, signed_in: requests.Session, id_token: str
) -> None:
    base = auth_server.url
    copied = dict(signed_in.cookies)
    params = {"id_token_hint": id_token, "post_logout_redirect_uri": AFTER_LOGOUT, "state": "xyz"}
    # A HEAD (a link prefetched) only reads.
    assert signed_in.head(base + LOGOUT, params=params, allow_redirects=False).status_code == 200
    assert still_signed_in(signed_in, base)
    r = signed_in.post(base + LOGOUT, data=params, allow_redirects=False)  # the RP's form post
    assert r.status_code == 302
    assert r.headers["Location"] == f"{AFTER_LOGOUT}?state=xyz"
    assert not still_signed_in(signed_in, base)
    with requests.Session() as replay:  # a copy of the cookie taken before is refused
        replay.cookies.update(copied)
        assert not still_signed_in(replay, base)


def test_a_sign_out_without_a_matching_hint_is_confirmed_first(
    auth_server: LiveServer,
    account: Account,
    signed_in: requests.Session,
    id_token: str,
    sessions: sessionmaker[Session],
    base_settings: Any,
) -> None:
    base = auth_server.url
    # A link (or a cross-site form) with no hint signs nobody out by itself.
    ask = signed_in.get(base + LOGOUT, allow_redirects=False)
    assert ask.status_code == 200 and still_signed_in(signed_in, base)
    forged = signed_in.post(base + LOGOUT, data={"confirm": "1"}, allow_redirects=False)
    assert forged.status_code == 400 and still_signed_in(signed_in, base)  # no CSRF token
    # Someone else's genuine hint does not sign this user out either.
    with requests.Session() as other_web:
        other = make_account(
            sessions, base_settings, email="other@example.org", redirect_uris=[HTTPS_CB]
        )
        assert sign_in(other_web, base, other.email).status_code == 302
        r = other_web.get(base + LOGOUT, params={"id_token_hint": id_token}, allow_redirects=False)
        assert r.status_code == 200 and "Sign out?" in r.text
        assert still_signed_in(other_web, base)
    # Confirmed on the form (a client_id and its registered URI): signed out, sent back.
    params = {
        "client_id": account.client_id,
        "post_logout_redirect_uri": AFTER_LOGOUT,
        "state": "q",
    }
    ask = signed_in.get(base + LOGOUT, params=params, allow_redirects=False)
    assert account.app_name in ask.text
    confirm = form(ask.text, LOGOUT)
    done = signed_in.post(
        base + confirm.action, data=confirm.fields | {"confirm": "1"}, allow_redirects=False
    )
    assert done.status_code == 302
    assert query(done.headers["Location"]) == {"state": "q"}
    assert not still_signed_in(signed_in, base)
