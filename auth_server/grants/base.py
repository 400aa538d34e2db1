"""What every grant shares: the request it handles and the access token it issues."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy.orm import Session

from auth_server.context import AuthServices
from auth_server.oauth import token_ttl
from common.models import Application
from common.tokens import IssuedToken


@dataclass(frozen=True)
class GrantRequest:
    """A token request after client authentication and scope parsing."""

    svc: AuthServices
    application: Application
    params: Mapping[str, str]
    scope: str | None  # normalised; None when the request named no scope
    ip: str


@dataclass(frozen=True)
class Granted:
    """An access token issued by a grant (its row flushed and already published to Redis)."""

    issued: IssuedToken
    scope: str
    ttl: int


def issue_access(
    session: Session, req: GrantRequest, *, user_id: str, scope: str, code_id: str | None = None
) -> Granted:
    """Add a user access token to the caller's transaction and publish it to Redis.

    It is published before the commit on purpose: an expiry that can see the row (a replayed
    code, a deleted application) runs after the commit, so its tombstone always lands after
    this record. Published after the commit, a plain SET could overwrite that tombstone. If
    the commit fails, the record names a token nobody was given.
    """
    ttl = token_ttl(req.svc.settings, scope)
    tokens = req.svc.stores.tokens
    issued = tokens.issue(
        session,
        kind="access",
        application_id=req.application.id,
        user_id=user_id,
        ttl=ttl,
        scope=scope,
        code_id=code_id,
    )
    tokens.publish(issued.row)
    return Granted(issued, scope, ttl)
