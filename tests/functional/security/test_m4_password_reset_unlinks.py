"""M4 (the account half): a password reset removes the social links and codes made before it.

Pre-account takeover: an attacker who got a social identity linked to the victim's account (by
registering the address first, or through a provider that does not verify emails) keeps signing
in with it after the victim has taken the account back with a reset. Now the reset unlinks every
social identity of the account and ends its pending authorization codes, as it ends its tokens.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterator

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app
from common.ids import new_id, utcnow
from common.models import SocialIdentity
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.mail_support import SENDER, Inbox, LateApp, link_in
from tests.functional.oauth_support import (
    REDIRECT_URI,
    StubProvider,
    World,
    assert_oauth_error,
    code_params,
    make_code,
    make_world,
    post,
)
from tests.pages import form, serving
from tests.servers import LiveServer

NEW_PASSWORD = "Sunflowers at Arles"


@pytest.fixture
def server(
    oauth_settings: AuthSettings, stores: Stores, inbox: tuple[Inbox, int]
) -> Iterator[LiveServer]:
    """An auth server with the stub social providers that sends mail to the local SMTP server."""
    late = LateApp()
    with serving(late) as live:
        late.app = create_app(
            dataclasses.replace(
                oauth_settings,
                email_enabled=True,
                smtp_host="127.0.0.1",
                smtp_port=inbox[1],
                smtp_security="none",
                smtp_from=SENDER,
                public_url=live.url,
            ),
            stores,
        )
        yield live
    late.app.extensions["artcat.mailer"].close()
    stores.redis.delete(*stores.redis.keys(f"{oauth_settings.redis_prefix}:pwreset:*") or ["-"])


@pytest.fixture
def victim(
    clean_db: object, sessions: sessionmaker[Session], oauth_settings: AuthSettings
) -> World:
    """The victim's account and an application registered with one redirect URI."""
    return make_world(sessions, oauth_settings, redirect_uris=[REDIRECT_URI])


def attacker_links_facebook(
    provider: StubProvider, sessions: sessionmaker[Session], user_id: str
) -> str:
    """Link an attacker's facebook account to the user, as a provider sign-in would have."""
    token = secrets.token_urlsafe(24)
    uid = str(secrets.randbelow(10**12))
    provider.facebook[token] = {"app_id": "fb-app-1", "user": {"id": uid, "name": "Mallory"}}
    with sessions() as s, s.begin():
        s.add(
            SocialIdentity(
                id=new_id(),
                user_id=user_id,
                provider="facebook",
                provider_uid=uid,
                created_at=utcnow(),
            )
        )
    return token


def social_sign_in(server: LiveServer, w: World, token: str) -> requests.Response:
    """Exchange a facebook token for an access token, as the attacker's app would."""
    return post(
        server,
        {
            **w.creds,
            "grant_type": "oauth_token",
            "oauth_provider": "facebook",
            "oauth_token": token,
        },
    )


def user_of(stores: Stores, access_token: str) -> str | None:
    """Return the user an access token acts for."""
    record = stores.tokens.lookup(access_token)
    assert record is not None
    return record.user_id


def reset_password(server: LiveServer, inbox: Inbox, email: str) -> None:
    """Reset the password through the forgotten-password page and the emailed link."""
    base = server.url
    with requests.Session() as web:
        forgot = form(web.get(f"{base}/account/password/forgot").text, "/password/forgot")
        web.post(base + forgot.action, data={**forgot.fields, "email": email})
        link = link_in(inbox.wait_for(1)[0])
        reset = form(web.get(link).text, "/account/password/reset/")
        done = web.post(
            base + reset.action,
            data={**reset.fields, "password": NEW_PASSWORD, "confirm": NEW_PASSWORD},
            allow_redirects=False,
        )
        assert done.status_code == 302, done.text


def test_a_reset_unlinks_the_attackers_social_identity(
    server: LiveServer,
    inbox: tuple[Inbox, int],
    victim: World,
    provider: StubProvider,
    sessions: sessionmaker[Session],
    stores: Stores,
) -> None:
    provider.mode = "up"
    token = attacker_links_facebook(provider, sessions, victim.user_id)
    before = social_sign_in(server, victim, token)
    assert before.status_code == 200, before.text
    assert user_of(stores, before.json()["access_token"]) == victim.user_id  # the takeover

    reset_password(server, inbox[0], victim.email)

    with sessions() as s:
        links = select(func.count()).select_from(SocialIdentity)
        assert s.scalar(links.where(SocialIdentity.user_id == victim.user_id)) == 0
    # The token the attacker got through the link ended with the reset.
    assert stores.tokens.lookup(before.json()["access_token"]) is None
    # The attacker's facebook account no longer reaches the victim's account.
    after = social_sign_in(server, victim, token)
    if after.status_code == 200:
        assert user_of(stores, after.json()["access_token"]) != victim.user_id
    else:
        assert_oauth_error(after, 400, "invalid_grant")


def test_a_code_issued_before_a_reset_cannot_be_redeemed_after_it(
    server: LiveServer,
    inbox: tuple[Inbox, int],
    victim: World,
    sessions: sessionmaker[Session],
) -> None:
    stale = make_code(sessions, victim)
    reset_password(server, inbox[0], victim.email)
    assert_oauth_error(post(server, code_params(victim, stale)), 400, "invalid_grant")
    # A code approved after the reset works: only what came before it ended.
    fresh = make_code(sessions, victim)
    assert post(server, code_params(victim, fresh)).status_code == 200
