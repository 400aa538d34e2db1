"""The device authorization grant (RFC 8628): user codes, the stored grants, and their throttle.

A device (a TV, a picture frame) asks ``/oauth2/device_authorization`` for a device code and a
user code, shows the user code, and polls the token endpoint with the device code while its
user approves at ``/activate`` in a browser (``auth_server.views.device``). Authlib's endpoint
and grant call the functions here through their hooks (``auth_server.grants.device_code``).

- User codes are 8 characters of an alphabet without look-alikes and vowels (no 0/O, 1/I/L,
  no words), shown as ``XXXX-XXXX`` and read case- and dash-insensitively. They are stored as
  a keyed HMAC (SECRET_KEY): 19^8 codes are too few for a plain digest to hide them from a
  brute force of a database dump. Device codes (256 random bits) are stored as SHA-256.
- Guessing user codes is throttled per client IP and per signed-in account (wrong codes only:
  a right code gives its attempt back), counted in one Redis step before any lookup
  (``auth_server.device_throttles``).
- A device code buys one token: the redemption is one conditional UPDATE, committed with the
  token. The user can revoke an approved grant from their account, which expires its token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, or_, select, update
from sqlalchemy.orm import Session

from auth_server.audit import audit
from auth_server.context import services
from auth_server.refresh import revoke_families
from common.ids import new_id, utcnow
from common.models import (
    Application,
    DeviceAuthorization,
    RefreshFamily,
    RefreshToken,
    Token,
    User,
)
from common.models.device import APPROVED, DENIED, PENDING, REVOKED, USED
from common.stores import Stores
from common.tokens import TokenStore, digest

# RFC 8628 6.1: consonants only (no words), and none that reads like a digit or another letter.
ALPHABET = "BCDFGHJKMNPQRSTVWXZ"
CODE_LENGTH = 8
# What people type between the halves, or copy along: dashes (ASCII, en and em), spaces.
SEPARATORS = frozenset("-\u2013\u2014 \t")
# RFC 8628 3.5: each slow_down adds 5 seconds to the interval.
SLOW_DOWN_STEP = 5
# A poll this much earlier than the interval is still on time (clocks and networks jitter).
POLL_TOLERANCE = 1
LIST_LIMIT = 100
# What the user may be shown about each scope on the consent page.
SCOPE_TEXT = {
    "offline_access": "stay connected for years, until you revoke it",
    "openid": "know who you are (your account id)",
    "profile": "see your name",
    "email": "see your email address",
}


def new_user_code() -> str:
    """Return a fresh user code, as shown: ``XXXX-XXXX``."""
    code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
    return f"{code[:4]}-{code[4:]}"


def normalise_user_code(typed: str) -> str | None:
    """Return the code as stored (upper case, no dashes or spaces); None if it cannot be one."""
    code = "".join(c for c in typed if c not in SEPARATORS).upper()
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code


def display_user_code(code: str) -> str:
    """Return a normalised code as people read it."""
    return f"{code[:4]}-{code[4:]}"


def user_code_digest(code: str) -> str:
    """Return the keyed digest of a normalised user code (what is stored)."""
    key = services().settings.secret_key.encode()
    return hmac.new(key, b"user-code:" + code.encode(), hashlib.sha256).hexdigest()


def start(
    db: Session, application: Application, scope: str, device_code: str, user_code: str
) -> str:
    """Store a new pending grant of these codes (their digests); return the user code, drawn
    again in the rare case that it is a live code already."""
    settings = services().settings
    now = utcnow()
    code_digest = user_code_digest(normalise_user_code(user_code) or "")
    while find_pending(db, code_digest) is not None:
        user_code = new_user_code()
        code_digest = user_code_digest(normalise_user_code(user_code) or "")
    row = DeviceAuthorization(
        id=new_id(),
        device_code_digest=digest(device_code),
        user_code_digest=code_digest,
        application_id=application.id,
        scope=scope,
        status=PENDING,
        created_at=now,
        expires_at=now + timedelta(seconds=settings.device_code_ttl),
        interval=settings.device_poll_interval,
    )
    db.add(row)
    db.flush()
    audit("device.started", device_id=row.id, application_id=application.id, scope=scope)
    return user_code


def find_pending(db: Session, code_digest: str) -> DeviceAuthorization | None:
    """Return the live, undecided grant of a user code's digest, if any."""
    return db.scalar(
        select(DeviceAuthorization)
        .where(
            DeviceAuthorization.user_code_digest == code_digest,
            DeviceAuthorization.status == PENDING,
            DeviceAuthorization.expires_at > utcnow(),
        )
        .limit(1)
    )


def find_by_device_code(db: Session, device_code: str) -> DeviceAuthorization | None:
    """Return the grant of a device code, whatever its state."""
    return db.scalar(
        select(DeviceAuthorization).where(
            DeviceAuthorization.device_code_digest == digest(device_code)
        )
    )


def updated(db: Session, *where: ColumnElement[bool], **values: Any) -> int:
    """UPDATE the device grants matching every ``where`` condition with ``values`` (one
    statement, in the caller's transaction, the session left unsynchronized); return how many
    rows changed (a conditional UPDATE's 1 or 0)."""
    result = cast(
        CursorResult[Any],
        db.execute(
            update(DeviceAuthorization)
            .where(*where)
            .values(**values)
            .execution_options(synchronize_session=False)
        ),
    )
    return result.rowcount


def decide(
    db: Session, grant: DeviceAuthorization, user: User, *, approved: bool, auth_time: int | None
) -> bool:
    """Record the user's decision on a pending grant (one conditional UPDATE, committed).

    Returns False when the grant was no longer pending (decided in another tab, or expired).
    """
    now = utcnow()
    changed = updated(
        db,
        DeviceAuthorization.id == grant.id,
        DeviceAuthorization.status == PENDING,
        DeviceAuthorization.expires_at > now,
        status=APPROVED if approved else DENIED,
        user_id=user.id,
        decided_at=now,
        auth_time=datetime.fromtimestamp(auth_time, now.tzinfo) if auth_time else None,
    )
    db.commit()
    return changed == 1


def polled(db: Session, grant_id: str, interval: int) -> bool:
    """Record a poll of a pending grant; tell whether it came too early (then slow down).

    One conditional UPDATE takes a poll on time; a poll too early raises the interval by 5
    seconds instead (RFC 8628 3.5), for it and every later poll. Committed at once.
    """
    now = utcnow()
    on_time = updated(
        db,
        DeviceAuthorization.id == grant_id,
        or_(
            DeviceAuthorization.last_polled_at.is_(None),
            DeviceAuthorization.last_polled_at
            <= now - timedelta(seconds=max(0, interval - POLL_TOLERANCE)),
        ),
        last_polled_at=now,
    )
    early = on_time != 1
    if early:
        updated(
            db,
            DeviceAuthorization.id == grant_id,
            last_polled_at=now,
            interval=DeviceAuthorization.interval + SLOW_DOWN_STEP,
        )
    db.commit()
    return early


def spend(db: Session, grant_id: str) -> bool:
    """Mark an approved grant used, in the caller's transaction (committed with its token).

    One conditional UPDATE: of concurrent redemptions exactly one wins; False for the others.
    """
    now = utcnow()
    changed = updated(
        db,
        DeviceAuthorization.id == grant_id,
        DeviceAuthorization.status == APPROVED,
        DeviceAuthorization.expires_at > now,
        status=USED,
        used_at=now,
    )
    return changed == 1


def link_token(db: Session, grant_id: str, token_id: str) -> None:
    """Remember the token a grant bought (in the transaction that issues it)."""
    updated(db, DeviceAuthorization.id == grant_id, token_id=token_id)


@dataclass(frozen=True)
class DeviceGrantView:
    """An approved device grant, as the account page lists it."""

    id: str
    app_name: str
    approved_at: datetime
    scope: str


def device_grants_of(db: Session, user_id: str) -> list[DeviceGrantView]:
    """Return the user's device grants still in force, latest first (one bounded query).

    In force: approved and not yet redeemed (the device may still fetch its token), or redeemed
    for a token that is still live.
    """
    now = utcnow()
    rows = db.execute(
        select(
            DeviceAuthorization.id,
            Application.name,
            DeviceAuthorization.decided_at,
            DeviceAuthorization.scope,
        )
        .join(Application, Application.id == DeviceAuthorization.application_id)
        .outerjoin(Token, Token.id == DeviceAuthorization.token_id)
        .where(
            DeviceAuthorization.user_id == user_id,
            or_(
                and_(DeviceAuthorization.status == APPROVED, DeviceAuthorization.expires_at > now),
                and_(
                    DeviceAuthorization.status == USED,
                    Token.expired_at.is_(None),
                    Token.expires_at > now,
                ),
            ),
        )
        .order_by(DeviceAuthorization.decided_at.desc(), DeviceAuthorization.id)
        .limit(LIST_LIMIT)
    ).all()
    # An approved grant always has its decision time.
    return [DeviceGrantView(i, name, at, scope) for i, name, at, scope in rows if at is not None]


def approved_device_grants(user: User) -> list[DeviceGrantView]:
    """Return a user's device grants in force (the account page's list)."""
    with services().stores.reads() as db:
        return device_grants_of(db, user.id)


def bought_tokens_ended(db: Session, tokens: TokenStore, grant: DeviceAuthorization) -> list[Token]:
    """Expire the token a grant bought, and the refresh token family it started with every
    token issued from it (the caller commits, then tombstones what this returns)."""
    if grant.token_id is None:
        return []
    started = select(RefreshToken.family_id).where(RefreshToken.access_token_id == grant.token_id)
    expired = revoke_families(db, tokens, RefreshFamily.id.in_(started))
    return expired + tokens.expire_where(db, Token.id == grant.token_id)


def replayed(db: Session, tokens: TokenStore, grant: DeviceAuthorization) -> None:
    """A device code used again: it leaked, or the device lost its answer. Expire what it
    bought (committed at once), as a replayed authorization code does (RFC 6749 4.1.2)."""
    db.rollback()  # nothing of this request's own work survives a replay
    expired = bought_tokens_ended(db, tokens, grant)
    db.commit()
    tokens.tombstone(expired)
    audit(
        "device.replayed",
        device_id=grant.id,
        application_id=grant.application_id,
        user_id=grant.user_id,
        tokens_expired=len(expired),
    )


def revoke(stores: Stores, user_id: str, grant_id: str) -> bool:
    """Withdraw one of the user's device grants and expire the tokens it bought.

    Returns False when the user has no such grant in force (someone else's is not told apart).
    """
    with stores.sessions() as db:
        grant = db.get(DeviceAuthorization, grant_id)
        if grant is None or grant.user_id != user_id or grant.status not in (APPROVED, USED):
            return False
        changed = updated(
            db,
            DeviceAuthorization.id == grant_id,
            DeviceAuthorization.status.in_((APPROVED, USED)),
            status=REVOKED,
        )
        if changed != 1:
            return False
        expired = bought_tokens_ended(db, stores.tokens, grant)
        application_id = grant.application_id
        db.commit()
    stores.tokens.tombstone(expired)
    audit(
        "device.revoked",
        device_id=grant_id,
        application_id=application_id,
        user_id=user_id,
        tokens_expired=len(expired),
    )
    return True
