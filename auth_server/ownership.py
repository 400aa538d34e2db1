"""Who may use an account: the rule that keeps someone who registers another's address out.

Anyone can type any address into the sign-up form. Where the service sends mail (the mailer is
enabled), an address counts only once its owner has proved it, by a confirmation link or a
password-reset link:

- sign-up stores no password; the owner chooses it on the confirmation page;
- an unconfirmed account's password signs nothing in (sign-in page, ``credentials`` and
  ``password`` grants, and so the authorize flow): the answer is that of a wrong password;
- proving the address (:func:`take_over`) ends everything issued before: every token of the
  account, every pending code, every browser session, every social link. (Applications
  registered under the account stay, listed on its developer page, where the owner can
  rotate their secrets; where mail confirms addresses, an unconfirmed account cannot sign in
  to register any.)

Where no mail is sent (the default of a new instance), nobody can prove an address: accounts
keep the password chosen at sign-up and stay unconfirmed, never shown to applications as
verified. A social sign-in links only into a confirmed account (``grants/oauth_token.py``), so
an unconfirmed account never becomes a verified one with its first registrant still inside.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, request
from sqlalchemy import delete
from sqlalchemy.orm import Session

from auth_server.accounts import end_sessions
from auth_server.audit import audit
from auth_server.context import services
from auth_server.revocation import revoke_all
from common.ids import utcnow
from common.models import SocialIdentity, Token, User
from common.tokens import TokenStore


def mail_confirms() -> bool:
    """Tell whether this server sends mail, and so can have addresses confirmed."""
    mailer: Any = current_app.extensions["artcat.mailer"]
    return bool(mailer.enabled)


def password_may_sign_in(user: User) -> bool:
    """Tell whether a right password of ``user`` may sign in (enabled aside).

    Where mail confirms addresses, only a confirmed account's password does: the password of
    an unconfirmed one may be a squatter's.
    """
    return user.email_verified_at is not None or not mail_confirms()


def take_over(db: Session, tokens: TokenStore, user: User) -> tuple[list[Token], int]:
    """The owner proved the address: end everything anyone got from the account before (no commit).

    Marks the address confirmed and ends every browser session, every token (of any kind) and
    pending code of the user, and every social link. Returns the expired token rows (tombstone
    them after the commit) and how many social links went.
    """
    user.email_verified_at = user.email_verified_at or utcnow()
    end_sessions(db, user)
    rows = revoke_all(db, tokens, user_id=user.id)
    unlinked = db.execute(
        delete(SocialIdentity)
        .where(SocialIdentity.user_id == user.id)
        .execution_options(synchronize_session=False)
    )
    return rows, int(getattr(unlinked, "rowcount", 0) or 0)


def take_over_with_password(db: Session, user: User, password: str, event: str) -> None:
    """Give the proven owner the account with a new password (``take_over``), commit, and
    record ``event``: the page that proved the address (a reset or confirmation link)."""
    svc = services()
    user.password_hash = svc.hasher.hash(password)
    rows, unlinked = take_over(db, svc.stores.tokens, user)
    db.commit()
    svc.stores.tokens.tombstone(rows)
    audit(
        event,
        user_id=user.id,
        tokens_expired=len(rows),
        social_unlinked=unlinked,
        ip=request.remote_addr,
    )
