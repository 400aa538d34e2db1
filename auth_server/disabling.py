"""Disabling and enabling users and applications (the operator's ``artcat`` commands).

Disabling ends at once what the user or application holds: every live token and pending code
(``auth_server.revocation.revoke_all``) and, for a user, every browser session (the session
generation moves on). Enabling lets them sign in and be granted access again; it brings no
old token back, because those were expired, not suspended.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from auth_server.accounts import end_sessions, find_user_by_email
from auth_server.audit import audit
from auth_server.revocation import revoke_all
from common.models import Application, Token, User
from common.stores import Stores
from common.tokens import TokenStore


class NotFound(LookupError):
    """No user with this email, or no application with this client id."""


@dataclass(frozen=True)
class Change:
    """What enabling or disabling did."""

    name: str  # the user's email or the application's client id
    enabled: bool
    was_enabled: bool
    tokens_expired: int


def set_user_enabled(stores: Stores, email: str, *, enabled: bool) -> Change:
    """Enable or disable the user with ``email``; disabling ends their tokens, codes, sessions."""
    tokens = stores.tokens
    with stores.sessions() as session, session.begin():
        user = find_user_by_email(session, email)
        if user is None:
            raise NotFound(f"no user with email {email}")
        was_enabled, user_id = bool(user.enabled), user.id
        expired = _apply_to_user(session, tokens, user, enabled)
    change = Change(email, enabled, was_enabled, len(expired))
    return _settle(tokens, expired, change, "user", "cli", user_id=user_id)


def _apply_to_user(session: Session, tokens: TokenStore, user: User, enabled: bool) -> list[Token]:
    user.enabled = enabled
    if enabled:
        return []
    end_sessions(session, user)
    return revoke_all(session, tokens, user_id=user.id)


def set_application_enabled(
    stores: Stores, client_id: str, *, enabled: bool, via: str = "cli"
) -> Change:
    """Enable or disable an application; disabling ends its tokens and pending codes."""
    tokens = stores.tokens
    with stores.sessions() as session, session.begin():
        app = session.scalar(select(Application).where(Application.client_id == client_id))
        if app is None:
            raise NotFound(f"no application with client id {client_id}")
        was_enabled, app_id = bool(app.enabled), app.id
        app.enabled = enabled
        expired = [] if enabled else revoke_all(session, tokens, application_id=app.id)
    change = Change(client_id, enabled, was_enabled, len(expired))
    return _settle(tokens, expired, change, "application", via, application_id=app_id)


def _settle(
    tokens: TokenStore, expired: list[Token], change: Change, kind: str, via: str, **ids: str
) -> Change:
    """After the commit, tombstone the expired tokens (a read-through now finds the rows
    expired), and audit the change of the ``kind`` ("user" or "application") ``ids`` name."""
    tokens.tombstone(expired)
    state = "enabled" if change.enabled else "disabled"
    audit(f"{kind}.{state}", **ids, tokens_expired=change.tokens_expired, via=via)
    return change
