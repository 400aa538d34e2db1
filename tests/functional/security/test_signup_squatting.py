"""Sign-up squatting: whoever types another person's address first keeps nothing of the account.

The attack (reproduced against a running instance before the fix): the attacker signs up with
the victim's address and a password of their choosing, takes a 25-year token with the
``credentials`` grant and has the confirmation mail sent again. When the victim opened the
link, the address was marked verified and the victim signed in, but the attacker's password,
token and session kept working, and a social sign-in with the address linked into the same
account. Signing up, then signing in with the chosen password, also told whether the address
already had an account.

What holds now (``auth_server/ownership.py``):

- where mail confirms addresses, sign-up keeps no password: the attacker's chosen password
  signs nothing in (sign-in page, ``credentials`` and ``password`` grants), answering exactly as
  a wrong password does. The owner chooses the password on the confirmation page.
- a squat made while the instance sent no mail (or before this fix) holds a password, a token,
  a session and a social link: once mail is on its password signs nothing in, and the owner's
  confirmation ends the token (401 at the catalog), the session and the link.
- sign-up, then sign-in with the chosen password, answers the same for a confirmed address, a
  squatted one and a new one.
- without mail nobody can confirm: no link is made or honoured, applications see
  ``email_verified: false``, and a provider's verified sign-in with the address never links
  into the squatted account.

Every step over real HTTP, against auth servers with and without mail on one database, the
catalog server, a local SMTP server and a stub facebook.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from itsdangerous import URLSafeTimedSerializer
from redis import Redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app
from auth_server.views.verify import SALT as VERIFY_SALT
from common.ids import new_id, utcnow
from common.models import SocialIdentity, User
from common.settings import AuthSettings, Settings
from common.stores import Stores
from tests import factories
from tests.functional.mail_support import SENDER, Inbox, LateApp, body_of, link_in
from tests.functional.oauth_support import (
    FB_APP_ID,
    StubProvider,
    assert_oauth_error,
    get_artists,
    post,
    serve_auth,
)
from tests.pages import form, serving, text
from tests.servers import LiveServer, forget_sign_in_throttle

VICTIM = "claude@example.org"
NEWCOMER = "newcomer@example.org"
SQUATTER_PASSWORD = "Water lilies at Giverny"
OWNER_PASSWORD = "Impression, soleil levant"
# Many sign-ups from one address in one run: the per-address sign-up budget is not under test.
LOOSE = {"sign_up_attempts_per_ip": "1000/hour"}


@pytest.fixture(autouse=True)
def fresh_budgets(redis_client: Redis, base_settings: Settings) -> Iterator[None]:
    """Start and leave with no sign-in or sign-up attempts counted (the servers share Redis)."""
    forget_sign_in_throttle(redis_client, base_settings.redis_prefix)
    yield
    forget_sign_in_throttle(redis_client, base_settings.redis_prefix)


@pytest.fixture
def mail_auth(
    oauth_settings: AuthSettings, stores: Stores, inbox: tuple[Inbox, int]
) -> Iterator[LiveServer]:
    """An auth server that sends mail (to the local SMTP server) and knows the stub facebook."""
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
                **LOOSE,
            ),
            stores,
        )
        yield live
    late.app.extensions["artcat.mailer"].close()


@pytest.fixture
def plain_auth(oauth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server that sends no mail (the default of a new instance), on the same stores."""
    with serve_auth(dataclasses.replace(oauth_settings, **LOOSE), stores) as live:
        yield live


@pytest.fixture
def client(
    clean_db: Any, sessions: sessionmaker[Session], oauth_settings: AuthSettings
) -> dict[str, str]:
    """A mobile application's credentials (it uses the credentials and social grants)."""
    with sessions() as s, s.begin():
        new = factories.application(s, None, name="Mobile app")
        return {"client_id": new.application.client_id, "client_secret": new.client_secret}


@pytest.fixture
def facebook(provider: StubProvider) -> StubProvider:
    """The stub facebook, up."""
    provider.mode = "up"
    return provider


def sign_up(base: str, email: str, password: str = SQUATTER_PASSWORD) -> requests.Response:
    """Sign up from a fresh browser, typing a password whether or not the form asks for one."""
    with requests.Session() as web:
        f = form(web.get(f"{base}/account/sign_up").text, "/account/sign_up")
        data = {**f.fields, "name": "Someone", "email": email, "password": password}
        return web.post(f"{base}/account/sign_up", data=data, allow_redirects=False)


def sign_in(web: requests.Session, base: str, email: str, password: str) -> requests.Response:
    """Sign in through the page; return the POST's answer (302 when signed in)."""
    f = form(web.get(f"{base}/account/sign_in").text, "/account/sign_in")
    data = {**f.fields, "email": email, "password": password}
    return web.post(f"{base}/account/sign_in", data=data, allow_redirects=False)


def signed_in(web: requests.Session, base: str) -> bool:
    """Tell whether the browser session sees the account page."""
    return web.get(f"{base}/account", allow_redirects=False).status_code == 200


def credentials(
    live: LiveServer, client: dict[str, str], email: str, password: str, grant: str = "credentials"
) -> requests.Response:
    """Ask for a long-lived user token with the reference API's credentials grant."""
    who = {"email": email} if grant == "credentials" else {"username": email}
    data = {**client, "grant_type": grant, "password": password, "scope": "offline_access"}
    return post(live, {**data, **who})


def user_id_of(sessions: sessionmaker[Session], email: str) -> str:
    """Return the id of the account with this address."""
    with sessions() as s:
        return s.scalars(select(User.id).where(User.email == email)).one()


def confirm(base: str, message: Any, password: str) -> requests.Session:
    """Open a confirmation link, choose the password there; return the signed-in browser."""
    web = requests.Session()
    page = web.get(link_in(message, "/account/email/verify?token="))
    assert page.status_code == 200 and 'type="password"' in page.text
    f = form(page.text, "/account/email/verify")
    data = {**f.fields, "password": password, "confirm": password}
    done = web.post(base + f.action, data=data, allow_redirects=False)
    assert done.status_code == 302, done.text
    assert signed_in(web, base)
    return web


def verified_at_catalog(resource: LiveServer, token: str, user_id: str) -> Any:
    """Return what the catalog tells an application of its user's address."""
    r = requests.get(
        f"{resource.url}/api/users/{user_id}", headers={"X-Access-Token": token}, timeout=10
    )
    assert r.status_code == 200, r.text
    details = requests.get(
        f"{resource.url}/api/user_details/{user_id}",
        headers={"X-Access-Token": token},
        timeout=10,
    ).json()
    assert details["email_verified"] == r.json()["email_verified"]
    return r.json()["email_verified"]


def facebook_account(stub: StubProvider, *, email: str | None, verified: bool) -> tuple[str, str]:
    """Open an account at the stub facebook; return its user token and uid."""
    token, uid = secrets.token_urlsafe(24), str(secrets.randbelow(10**12))
    user: dict[str, object] = {"id": uid, "name": "Someone", "verified": verified}
    if email is not None:
        user["email"] = email
    stub.facebook[token] = {"app_id": FB_APP_ID, "user": user}
    return token, uid


def social(live: LiveServer, client: dict[str, str], token: str) -> requests.Response:
    """Sign in with a facebook token through the mobile application."""
    data = {"grant_type": "oauth_token", "oauth_provider": "facebook", "oauth_token": token}
    return post(live, {**client, **data})


def acts_for(stores: Stores, access_token: str) -> str | None:
    """Return the user an access token acts for."""
    record = stores.tokens.lookup(access_token)
    return record.user_id if record is not None else None


def test_with_mail_the_squatters_password_signs_nothing_in_and_the_owner_takes_the_address(
    mail_auth: LiveServer,
    resource_server: LiveServer,
    inbox: tuple[Inbox, int],
    client: dict[str, str],
    sessions: sessionmaker[Session],
) -> None:
    base = mail_auth.url
    # The squatter signs up with the victim's address and a password of their choosing.
    r = sign_up(base, VICTIM)
    assert r.status_code == 200 and "Check your email" in text(r.text)
    assert 'name="password"' not in requests.get(f"{base}/account/sign_up", timeout=10).text
    with sessions() as s:
        squat = s.scalars(select(User).where(User.email == VICTIM)).one()
        assert squat.password_hash is None and squat.email_verified_at is None

    # The chosen password gets no token and no session, in the words of a wrong password.
    wrong = credentials(mail_auth, client, VICTIM, "Not the password 42")
    for grant in ("credentials", "password"):
        chosen = credentials(mail_auth, client, VICTIM, SQUATTER_PASSWORD, grant)
        assert_oauth_error(chosen, 400, "invalid_grant")
        assert chosen.json() == wrong.json()
    with requests.Session() as web:
        page = sign_in(web, base, VICTIM, SQUATTER_PASSWORD)
        assert page.status_code == 400 and "The email or password is incorrect." in page.text
        assert not signed_in(web, base)
    # Signing up again (the squatter's "send the link again") changes nothing of that.
    assert sign_up(base, VICTIM).status_code == 200
    assert_oauth_error(
        credentials(mail_auth, client, VICTIM, SQUATTER_PASSWORD), 400, "invalid_grant"
    )

    # The owner opens the link in their mailbox and chooses the password there.
    (message,) = [m for m in inbox[0].wait_for(1) if m["To"] == VICTIM]
    assert message["Subject"] == "Confirm your email address"
    assert "choose your password" in body_of(message)
    owner_web = confirm(base, message, OWNER_PASSWORD)
    again = requests.get(link_in(message, "/account/email/verify?token="), timeout=10)
    assert again.status_code == 400 and "no longer works" in text(again.text)  # works once
    user_id = user_id_of(sessions, VICTIM)
    token = credentials(mail_auth, client, VICTIM, OWNER_PASSWORD)
    assert token.status_code == 200, token.text
    assert verified_at_catalog(resource_server, token.json()["access_token"], user_id) is True
    assert_oauth_error(
        credentials(mail_auth, client, VICTIM, SQUATTER_PASSWORD), 400, "invalid_grant"
    )
    assert signed_in(owner_web, base)
    owner_web.close()


def test_a_squat_made_without_mail_loses_everything_when_the_owner_confirms(
    plain_auth: LiveServer,
    mail_auth: LiveServer,
    resource_server: LiveServer,
    inbox: tuple[Inbox, int],
    client: dict[str, str],
    facebook: StubProvider,
    sessions: sessionmaker[Session],
    stores: Stores,
) -> None:
    # While the instance sends no mail, the squatter signs up with the victim's address, takes
    # a 25-year token, keeps a signed-in browser and tries to link a facebook account.
    assert sign_up(plain_auth.url, VICTIM).status_code == 200
    user_id = user_id_of(sessions, VICTIM)
    grant = credentials(plain_auth, client, VICTIM, SQUATTER_PASSWORD)
    assert grant.status_code == 200, grant.text
    squat_token = grant.json()["access_token"]
    assert grant.json()["expires_in"] > 20 * 365 * 86400  # offline_access: 25 years
    assert get_artists(resource_server, squat_token) == 200
    assert verified_at_catalog(resource_server, squat_token, user_id) is False
    squatter = requests.Session()
    assert sign_in(squatter, plain_auth.url, VICTIM, SQUATTER_PASSWORD).status_code == 302
    # A facebook account showing the address, even verified there, is not linked to it...
    claimed, _ = facebook_account(facebook, email=VICTIM, verified=True)
    assert_oauth_error(social(plain_auth, client, claimed), 400, "invalid_grant")
    # ...but a link an older version made (or an operator's mistake) may exist: here is one.
    linked, uid = facebook_account(facebook, email=None, verified=False)
    with sessions() as s, s.begin():
        s.add(SocialIdentity(id=new_id(), user_id=user_id, provider="facebook",
                             provider_uid=uid, created_at=utcnow()))  # fmt: skip
    before = social(plain_auth, client, linked)
    assert before.status_code == 200 and acts_for(stores, before.json()["access_token"]) == user_id

    # The operator turns mail on: from now the unconfirmed account's password signs nothing in.
    assert_oauth_error(
        credentials(mail_auth, client, VICTIM, SQUATTER_PASSWORD), 400, "invalid_grant"
    )
    with requests.Session() as web:
        assert sign_in(web, mail_auth.url, VICTIM, SQUATTER_PASSWORD).status_code == 400

    # The owner signs up with their address: the unconfirmed account sends them a link.
    assert sign_up(mail_auth.url, VICTIM, "Anything at all 12").status_code == 200
    (message,) = inbox[0].wait_for(1)
    assert message["To"] == VICTIM and message["Subject"] == "Confirm your email address"
    owner_web = confirm(mail_auth.url, message, OWNER_PASSWORD)

    # Nothing the squatter held works any more.
    assert get_artists(resource_server, squat_token) == 401
    assert get_artists(resource_server, before.json()["access_token"]) == 401
    assert not signed_in(squatter, plain_auth.url)
    squatter.close()
    for live in (plain_auth, mail_auth):
        grant = credentials(live, client, VICTIM, SQUATTER_PASSWORD)
        assert_oauth_error(grant, 400, "invalid_grant")
        with requests.Session() as web:
            assert sign_in(web, live.url, VICTIM, SQUATTER_PASSWORD).status_code == 400
    after = social(mail_auth, client, linked)  # a new account of its own, not the owner's
    assert after.status_code == 200 and acts_for(stores, after.json()["access_token"]) != user_id
    with sessions() as s:
        links = select(func.count()).select_from(SocialIdentity)
        assert s.scalar(links.where(SocialIdentity.user_id == user_id)) == 0

    # The owner's password works, the catalog says the address is verified, and the owner's
    # own verified facebook account now links into the owner's account.
    assert signed_in(owner_web, mail_auth.url)
    owner_web.close()
    token = credentials(mail_auth, client, VICTIM, OWNER_PASSWORD)
    assert token.status_code == 200
    assert verified_at_catalog(resource_server, token.json()["access_token"], user_id) is True
    owners, _ = facebook_account(facebook, email=VICTIM, verified=True)
    mine = social(mail_auth, client, owners)
    assert mine.status_code == 200 and acts_for(stores, mine.json()["access_token"]) == user_id


def test_without_mail_an_address_is_never_verified_nor_handed_over(
    plain_auth: LiveServer,
    resource_server: LiveServer,
    client: dict[str, str],
    facebook: StubProvider,
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    r = sign_up(plain_auth.url, VICTIM)
    assert r.status_code == 200 and "sends no email" in text(r.text)
    user_id = user_id_of(sessions, VICTIM)
    grant = credentials(plain_auth, client, VICTIM, SQUATTER_PASSWORD)
    assert grant.status_code == 200
    token = grant.json()["access_token"]
    assert verified_at_catalog(resource_server, token, user_id) is False
    # No link was made, and one signed with the service's own key is not honoured.
    outbox = oauth_settings.instance_dir / "outbox"
    assert not any(VICTIM in p.read_text() for p in outbox.glob("*.eml"))
    link = URLSafeTimedSerializer(oauth_settings.secret_key, salt=VERIFY_SALT).dumps(
        {"u": user_id, "e": VICTIM, "n": ""}
    )
    with requests.Session() as web:
        page = web.get(f"{plain_auth.url}/account/email/verify", params={"token": link})
        assert page.status_code == 400
    # The owner's facebook account, whose address facebook verified, is not linked to the
    # squatted account (nor given it), whatever the squatter did.
    owners, _ = facebook_account(facebook, email=VICTIM, verified=True)
    assert_oauth_error(social(plain_auth, client, owners), 400, "invalid_grant")
    with sessions() as s:
        assert s.get_one(User, user_id).email_verified_at is None
        assert s.scalar(select(func.count()).select_from(SocialIdentity)) == 0
    assert verified_at_catalog(resource_server, token, user_id) is False


def shape(r: requests.Response, email: str) -> tuple[Any, ...]:
    """Return what a requester sees of an answer, the typed address (and the form's CSRF token,
    new with each browser) blanked out."""
    headers = sorted(k.lower() for k in r.headers if k.lower() not in ("date", "content-length"))
    body = re.sub(r'value="[\w.-]{40,}"', 'value="CSRF"', r.text.replace(email, "EMAIL"))
    return r.status_code, headers, body


def test_sign_up_then_sign_in_tells_nothing_about_an_address(
    mail_auth: LiveServer,
    inbox: tuple[Inbox, int],
    client: dict[str, str],
    sessions: sessionmaker[Session],
    oauth_settings: AuthSettings,
) -> None:
    confirmed, squatted = "berthe@example.org", "edouard@example.org"
    with sessions() as s, s.begin():
        factories.user(s, oauth_settings, email=confirmed, email_verified_at=utcnow())
        factories.user(s, oauth_settings, email=squatted, password=SQUATTER_PASSWORD)
    seen = []
    for email in (confirmed, squatted, NEWCOMER):
        # The prober signs up with a password of their choosing, then tries it everywhere.
        up = sign_up(mail_auth.url, email)
        grant = credentials(mail_auth, client, email, SQUATTER_PASSWORD)
        with requests.Session() as web:
            page = sign_in(web, mail_auth.url, email, SQUATTER_PASSWORD)
            in_ = signed_in(web, mail_auth.url)
        seen.append((shape(up, email), shape(grant, email), shape(page, email), in_))
    assert seen[0] == seen[1] == seen[2]
    assert seen[0][1][0] == 400 and seen[0][3] is False
    # Each owner got mail: a note for the confirmed account, a link for the others.
    subjects = {m["To"]: m["Subject"] for m in inbox[0].wait_for(3)}
    assert subjects == {
        confirmed: "Someone tried to sign up with your address",
        squatted: "Confirm your email address",
        NEWCOMER: "Confirm your email address",
    }
