"""M4: social pre-account takeover, attacked through the ``oauth_token`` grant.

A provider account whose email equals an account's is linked to that account only when both
sides proved the mailbox (the provider verified the email, the account confirmed it here);
otherwise the grant is refused. Someone who signs up first with a victim's address therefore
never receives the victim's later social sign-in, and a provider account with an unverified copy
of the victim's address never reaches the victim's account. A new identity gets a new account,
on the provider's email only when the provider verified it, else on an undeliverable
placeholder. Someone squatting on a placeholder address must not break (500) or capture the
later social sign-in.
Each attack runs over real HTTP against the auth server and a local stub provider.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.ids import utcnow
from common.models import SocialIdentity, User
from common.settings import AuthSettings
from common.stores import Stores
from tests import factories
from tests.functional.oauth_support import (
    FB_APP_ID,
    StubProvider,
    World,
    post,
)
from tests.servers import LiveServer


@pytest.fixture
def stub(provider: StubProvider) -> Iterator[StubProvider]:
    """The stub provider, up."""
    provider.mode = "up"
    yield provider


def facebook_account(
    stub: StubProvider, *, email: str | None, verified: bool, uid: str | None = None
) -> tuple[str, str]:
    """Open an account at the stub facebook; return its user token and uid."""
    token, uid = secrets.token_urlsafe(24), uid or str(secrets.randbelow(10**12))
    user: dict[str, object] = {"id": uid, "name": "Mallory", "verified": verified}
    if email is not None:
        user["email"] = email
    stub.facebook[token] = {"app_id": FB_APP_ID, "user": user}
    return token, uid


def grant(w: World, token: str) -> dict[str, str]:
    """Return the parameters of a facebook sign-in through the client app."""
    return {
        **w.creds,
        "grant_type": "oauth_token",
        "oauth_provider": "facebook",
        "oauth_token": token,
    }


def social_sign_in(live: LiveServer, w: World, token: str) -> str:
    """Sign in with a facebook token through the client app; return the access token."""
    r = post(live, grant(w, token))
    assert r.status_code == 200, r.text
    return str(r.json()["access_token"])


def owner(stores: Stores, access_token: str) -> str:
    """Return the user an access token acts for."""
    record = stores.tokens.lookup(access_token)
    assert record is not None and record.user_id is not None
    return record.user_id


def account_of(sessions: sessionmaker[Session], user_id: str) -> User:
    """Return a user row."""
    with sessions() as s:
        return s.get_one(User, user_id)


def refused(live: LiveServer, w: World, token: str) -> None:
    """Assert a social sign-in is refused with invalid_grant."""
    r = post(
        live,
        {
            **w.creds,
            "grant_type": "oauth_token",
            "oauth_provider": "facebook",
            "oauth_token": token,
        },
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant", r.text


@pytest.mark.parametrize("verified", [False, True], ids=["unverified", "verified"])
def test_a_provider_email_equal_to_an_unconfirmed_account_reaches_nobody(
    oauth_server: LiveServer,
    app_and_user: World,
    stub: StubProvider,
    sessions: sessionmaker[Session],
    verified: bool,
) -> None:
    # The account (``app_and_user``) signed up first and never confirmed its address: it may be an
    # attacker's squat on the victim's address, or the victim's own. A facebook account showing
    # that address, verified or not, is linked to it neither way.
    token, _ = facebook_account(stub, email=app_and_user.email.upper(), verified=verified)
    refused(oauth_server, app_and_user, token)
    with sessions() as s:
        assert s.scalars(select(SocialIdentity)).all() == []
        assert s.scalar(select(func.count()).select_from(User)) == 1  # no account made either


def test_an_unverified_provider_email_never_reaches_a_confirmed_account(
    oauth_server: LiveServer,
    app_and_user: World,
    stub: StubProvider,
    sessions: sessionmaker[Session],
) -> None:
    with sessions() as s, s.begin():
        s.get_one(User, app_and_user.user_id).email_verified_at = utcnow()
    token, _ = facebook_account(stub, email=app_and_user.email, verified=False)
    refused(oauth_server, app_and_user, token)
    with sessions() as s:
        assert s.scalars(select(SocialIdentity)).all() == []


def test_both_sides_verified_links_the_owners_identity(
    oauth_server: LiveServer,
    app_and_user: World,
    stub: StubProvider,
    stores: Stores,
    sessions: sessionmaker[Session],
) -> None:
    with sessions() as s, s.begin():
        s.get_one(User, app_and_user.user_id).email_verified_at = utcnow()
    token, _ = facebook_account(stub, email=app_and_user.email, verified=True)
    assert owner(stores, social_sign_in(oauth_server, app_and_user, token)) == app_and_user.user_id


def test_an_unverified_email_claimed_before_the_victim_signs_up_stays_unclaimed(
    oauth_server: LiveServer,
    app_and_user: World,
    stub: StubProvider,
    stores: Stores,
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    victim_email = "victim@example.org"
    token, _ = facebook_account(stub, email=victim_email, verified=False)
    attacker = owner(stores, social_sign_in(oauth_server, app_and_user, token))
    # The attacker's account did not take the address: the victim can still sign up with it,
    # and the attacker's next sign-in lands in the attacker's own account, not the victim's.
    assert account_of(sessions, attacker).email != victim_email
    with sessions() as s, s.begin():
        victim = factories.user(s, oauth_settings, email=victim_email).id
    assert owner(stores, social_sign_in(oauth_server, app_and_user, token)) == attacker != victim


def test_a_verified_free_email_is_taken(
    oauth_server: LiveServer,
    app_and_user: World,
    stub: StubProvider,
    stores: Stores,
    sessions: sessionmaker[Session],
) -> None:
    token, _ = facebook_account(stub, email="frida@example.org", verified=True)
    user = account_of(sessions, owner(stores, social_sign_in(oauth_server, app_and_user, token)))
    assert user.email == "frida@example.org" and user.email_verified_at is not None


def test_a_squatted_placeholder_address_neither_fails_nor_captures_the_sign_in(
    oauth_server: LiveServer,
    app_and_user: World,
    stub: StubProvider,
    stores: Stores,
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    uid = str(secrets.randbelow(10**12))
    with sessions() as s, s.begin():
        squatter = factories.user(
            s, oauth_settings, email=f"facebook-{uid}@users.invalid", password="squatter pw 1"
        ).id
    token, _ = facebook_account(stub, email=None, verified=False, uid=uid)
    user_id = owner(stores, social_sign_in(oauth_server, app_and_user, token))  # was a 500
    assert user_id != squatter
    email = account_of(sessions, user_id).email
    assert email.startswith(f"facebook-{uid}-") and email.endswith("@users.invalid")
