"""Refresh tokens: issued in families, rotated on every use, a reuse ending the family.

An application registered for refresh tokens (``Application.refresh_tokens``) that is granted the
``offline_access`` scope gets a refresh token beside a short-lived access token. Only the
SHA-256 digest of a refresh token is stored, with its family (the grant: user, application,
scope, sign-in time) and the access token issued beside it.

Each refresh rotates: the token presented is marked rotated by one conditional UPDATE (``WHERE
rotated_at IS NULL``), and a new refresh token and access token are issued in the same
transaction. Of concurrent refreshes with one token exactly one rotates it. The others, and any
later use of a rotated token, are a reuse (RFC 9700 4.14.2): the whole family is revoked, its
refresh tokens and every access token issued from it, at once at every resource server
(tombstones). One exception: within the grace period (``REFRESH_GRACE_PERIOD`` seconds, at most
10) the same client presenting the same token again gets the same new pair back, which the
rotation kept in Redis for that long only, encrypted under a key derived from SECRET_KEY. That
is the race of a client that refreshed twice at once (two tabs, a retry after a timeout).

Every rotation and every revocation updates the family row first, so on PostgreSQL the two are
serialised by its row lock (and on SQLite by the database's write lock): a family revoked while
a rotation was in flight loses the rotation's tokens too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from authlib.oauth2.rfc6749 import TokenMixin
from authlib.oauth2.rfc6749.errors import InvalidGrantError
from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Exists,
    Select,
    Table,
    bindparam,
    exists,
    func,
    literal_column,
    null,
    select,
    true,
    update,
)
from sqlalchemy.orm import Session

from auth_server.audit import audit
from auth_server.grace_pairs import GracePairs
from common.api.constants import OFFLINE_ACCESS
from common.api.prepared import Prepared
from common.db import insert_rows
from common.ids import new_id, utcnow
from common.models import Application, RefreshFamily, RefreshToken, Token, User
from common.tokens import (
    TOKENS,
    IssuedToken,
    TokenStore,
    digest,
    generate_secret,
    issued_token,
)

ACCESS = "access"  # the kind of the access tokens a refresh issues (a user's)
INVALID_REFRESH = "The refresh token is invalid, expired, revoked or was issued to another client."
GRANT_TYPE = "refresh_token"

FAMILIES: Table = RefreshFamily.__table__  # type: ignore[assignment]
REFRESH_TOKENS: Table = RefreshToken.__table__  # type: ignore[assignment]
USERS: Table = User.__table__  # type: ignore[assignment]


def wants_refresh(app: Application, user: Any, scope: str, grant_type: str) -> bool:
    """Tell whether a token issued by ``grant_type`` comes with a refresh token.

    Only for applications registered for them, acting for a user, with ``offline_access``. A
    refresh always continues its family (whatever narrower scope the access token asks for,
    and also once the application is no longer registered: its families live on until
    revoked or expired).
    """
    if user is None:
        return False
    if grant_type == GRANT_TYPE:
        return True
    return bool(app.refresh_tokens) and OFFLINE_ACCESS in scope.split()


def short_lived(app: Application, user: Any, grant_type: str) -> bool:
    """Tell whether a user's access token gets the refresh-token lifetime (an hour)."""
    return user is not None and (bool(app.refresh_tokens) or grant_type == GRANT_TYPE)


@dataclass
class Presented(TokenMixin):
    """A refresh token this request rotated: its family, as the grant and the ID token read it."""

    digest: str
    family_id: str
    application_id: str
    user_id: str
    scope: str
    auth_time: int | None  # Unix seconds
    # The family's user when the rotation read it too (PostgreSQL), else None.
    user: FamilyUser | None = field(default=None, compare=False, repr=False)
    # The new pair the rotation wrote in its own statement (PostgreSQL), else None.
    renewed: Renewed | None = field(default=None, compare=False, repr=False)

    def check_client(self, client: Any) -> bool:
        """Tell whether the token was issued to ``client``."""
        return bool(self.application_id == client.app.id)

    def get_scope(self) -> str:
        """Return the family's scope."""
        return self.scope

    def get_expires_in(self) -> int:
        """Not asked of a refresh token."""
        return 0

    def is_expired(self) -> bool:
        """It was live when rotated."""
        return False

    def is_revoked(self) -> bool:
        """It was live when rotated."""
        return False

    # OpenID Connect: what a refreshed ID token repeats (OIDC Core 12.2: no nonce).
    def get_nonce(self) -> None:
        """A refreshed ID token carries no nonce."""

    def get_auth_time(self) -> int | None:
        """Return when the user signed in (the original authentication)."""
        return self.auth_time

    def get_acr(self) -> None:
        """No authentication context classes are defined here."""

    def get_amr(self) -> list[str] | None:
        """Browser sessions start with a password only."""
        return ["pwd"] if self.auth_time is not None else None


@dataclass(frozen=True, slots=True)
class FamilyUser:
    """What a refresh reads of the family's user (``USER_COLUMNS``, in their order): its token
    and ID token ask no more. A plain object, not a ``User``: building an ORM instance cost a
    twentieth of a refresh."""

    id: str
    name: str
    email: str
    enabled: bool
    email_verified_at: datetime | None
    updated_at: datetime | None


@dataclass(frozen=True)
class Renewal:
    """The new pair of a refresh, drawn before the rotation so that, on PostgreSQL, the
    rotation's statement writes it too (one statement, one round trip): the access token
    (a user's, of the family's user and scope) and the refresh token that goes with it.
    It is written only when the rotation claimed the token presented; a refresh that then fails
    (a disabled user) rolls it back with the rotation."""

    access_value: str
    access_id: str
    refresh_value: str
    refresh_id: str
    now: datetime
    access_ttl: int
    refresh_ttl: int

    @classmethod
    def draw(cls, *, access_ttl: int, refresh_ttl: int) -> Renewal:
        """Draw the values of a new pair (written by ``rotate``)."""
        return cls(
            generate_secret(), new_id(), generate_secret(), new_id(), utcnow(), access_ttl,
            refresh_ttl,
        )  # fmt: skip

    def binds(self) -> dict[str, Any]:
        """Return the values the rotation's statement binds."""
        return {
            "b_access_id": self.access_id,
            "b_access_digest": digest(self.access_value),
            "b_access_expires": self.now + timedelta(seconds=self.access_ttl),
            "b_refresh_id": self.refresh_id,
            "b_refresh_digest": digest(self.refresh_value),
            "b_refresh_expires": self.now + timedelta(seconds=self.refresh_ttl),
        }

    def written(self, *, application_id: str, user_id: str, scope: str) -> Renewed:
        """Return the pair as the rotation wrote it for this family."""
        access = issued_token(
            self.access_value,
            self.access_id,
            self.now,
            kind=ACCESS,
            application_id=application_id,
            user_id=user_id,
            ttl=self.access_ttl,
            scope=scope,
        )
        return Renewed(access, self.refresh_value, self.refresh_id, self.access_ttl)


@dataclass(frozen=True)
class Renewed:
    """The pair a rotation wrote: its access token, the refresh token's value and id, and the
    access token's lifetime."""

    access: IssuedToken
    refresh_value: str
    refresh_id: str
    access_ttl: int


@dataclass(frozen=True)
class Replay:
    """A refresh within the grace period: the pair the first one got, to answer again."""

    body: dict[str, Any]
    presented: Presented


# -- issuing ---------------------------------------------------------------------------------


def new_family(
    *, application_id: str, user_id: str, scope: str, auth_time: int | None
) -> dict[str, Any]:
    """Return a new family's row values (not yet written)."""
    now = utcnow()
    return {
        "id": new_id(),
        "application_id": application_id,
        "user_id": user_id,
        "scope": scope,
        "auth_time": datetime.fromtimestamp(auth_time, UTC) if auth_time else None,
        "created_at": now,
        "used_at": now,
        "revoked_at": None,
    }


def start_family(
    db: Session,
    *,
    application_id: str,
    user_id: str,
    scope: str,
    auth_time: int | None,
) -> str:
    """Insert a new family in the caller's transaction and return its id."""
    family = new_family(
        application_id=application_id, user_id=user_id, scope=scope, auth_time=auth_time
    )
    db.execute(FAMILIES.insert(), family)
    return str(family["id"])


def new_refresh(
    *, family_id: str, application_id: str, access_token_id: str | None, ttl: int
) -> tuple[str, dict[str, Any]]:
    """Return a new refresh token of the family: its value and its row values (not written)."""
    value = generate_secret()
    now = utcnow()
    return value, {
        "id": new_id(),
        "digest": digest(value),
        "family_id": family_id,
        "application_id": application_id,
        "access_token_id": access_token_id,
        "created_at": now,
        "expires_at": now + timedelta(seconds=ttl),
        "rotated_at": None,
        "revoked_at": None,
    }


def issue_refresh(
    db: Session, *, family_id: str, application_id: str, access_token_id: str | None, ttl: int
) -> str:
    """Insert a refresh token of the family in the caller's transaction; return its value."""
    value, row = new_refresh(
        family_id=family_id, application_id=application_id, access_token_id=access_token_id, ttl=ttl
    )
    db.execute(REFRESH_TOKENS.insert(), row)
    return value


# -- rotating --------------------------------------------------------------------------------

# Built once: a refresh runs these two statements, and building a statement costs as much CPU
# as executing it. ``now`` binds with the columns' own type (UTC-aware datetimes).
_NOW = bindparam("b_now", type_=REFRESH_TOKENS.c.expires_at.type)


# The family's row first (the lock every revocation takes first too), in one statement with
# finding the token: a revoked family, an unknown token and another client's token (neither
# acknowledged nor revoked by a client not its own) all stop here.
def _touch_family(*more: ColumnElement[Any]) -> Any:
    """Return the family's UPDATE, RETURNING its row (and ``more``: built whole, as a
    statement's RETURNING columns are worked out once)."""
    return (
        FAMILIES.update()
        .where(
            FAMILIES.c.id
            == select(REFRESH_TOKENS.c.family_id)
            .where(
                REFRESH_TOKENS.c.digest == bindparam("b_digest"),
                REFRESH_TOKENS.c.application_id == bindparam("b_application_id"),
            )
            .scalar_subquery(),
            FAMILIES.c.revoked_at.is_(None),
        )
        .values(used_at=_NOW)
        .returning(FAMILIES.c.id, FAMILIES.c.user_id, FAMILIES.c.scope, FAMILIES.c.auth_time, *more)
    )


_TOUCH_FAMILY = _touch_family()
# The conditional UPDATE of which, among concurrent refreshes with one token, exactly one wins.
_CLAIM = (
    REFRESH_TOKENS.update()
    .where(
        REFRESH_TOKENS.c.digest == bindparam("b_digest"),
        REFRESH_TOKENS.c.rotated_at.is_(None),
        REFRESH_TOKENS.c.revoked_at.is_(None),
        REFRESH_TOKENS.c.expires_at > _NOW,
    )
    .values(rotated_at=_NOW)
    .returning(REFRESH_TOKENS.c.id)
)
# What a refresh reads of the family's user (a token and an ID token need no more).
USER_COLUMNS = (
    USERS.c.id,
    USERS.c.name,
    USERS.c.email,
    USERS.c.enabled,
    USERS.c.email_verified_at,
    USERS.c.updated_at,
)
_USER_BY_ID = select(*USER_COLUMNS).where(USERS.c.id == bindparam("b_user_id"))


def _rotate_in_one() -> Select[Any]:
    """PostgreSQL: the two UPDATEs above and the user's row in one statement (one round trip,
    one statement's CPU instead of three). The claim's EXISTS on the family's CTE makes the
    family's row lock come first, as in the two statements; each UPDATE rechecks its row once
    a concurrent transaction holding it commits, so exactly one rotation wins."""
    family = _TOUCH_FAMILY.cte("family")
    claim = _CLAIM.where(exists(select(family.c.id))).cte("claim")
    claimed = select(claim.c.id).scalar_subquery().label("claimed")
    return select(family, claimed, *(c.label(f"u_{c.name}") for c in USER_COLUMNS)).select_from(
        family.outerjoin(USERS, USERS.c.id == family.c.user_id)
    )


def _rotate_and_renew() -> Select[Any]:
    """PostgreSQL: the rotation of ``_rotate_in_one`` and the new pair (``Renewal``) in one
    statement. The pair is written only once the token was claimed, for the family's user (a
    user deleted since cannot be given a token: nothing is written, and the grant refuses);
    its foreign keys are checked at the end of the statement (the refresh token names the
    access token written beside it)."""
    family = _TOUCH_FAMILY.cte("family")
    claim = _CLAIM.where(exists(select(family.c.id))).cte("claim")
    app: BindParameter[str] = bindparam("b_application_id")
    access_values: dict[str, Any] = {
        "id": bindparam("b_access_id"),
        "digest": bindparam("b_access_digest"),
        "kind": literal_column(f"'{ACCESS}'"),
        "application_id": app,
        "user_id": family.c.user_id,
        "scope": family.c.scope,
        "code_id": null(),
        "created_at": _NOW,
        "expires_at": bindparam("b_access_expires", type_=TOKENS.c.expires_at.type),
        "expired_at": null(),
    }
    access = (
        TOKENS.insert()
        .from_select(
            list(access_values),
            select(*access_values.values())
            .select_from(family.join(USERS, USERS.c.id == family.c.user_id))
            .where(exists(select(claim.c.id))),
        )
        .returning(TOKENS.c.id)
        .cte("access")
    )
    refresh_values: dict[str, Any] = {
        "id": bindparam("b_refresh_id"),
        "digest": bindparam("b_refresh_digest"),
        "family_id": family.c.id,
        "application_id": app,
        "access_token_id": access.c.id,
        "created_at": _NOW,
        "expires_at": bindparam("b_refresh_expires", type_=REFRESH_TOKENS.c.expires_at.type),
        "rotated_at": null(),
        "revoked_at": null(),
    }
    for table, values in ((TOKENS, access_values), (REFRESH_TOKENS, refresh_values)):
        if set(values) != set(table.c.keys()):  # a column left out would need its default here
            raise ValueError(f"the rotation's INSERT into {table.name} names other columns")
    renewed = (
        REFRESH_TOKENS.insert()
        .from_select(
            list(refresh_values),
            select(*refresh_values.values()).select_from(family.join(access, true())),
        )
        .returning(REFRESH_TOKENS.c.id)
        .cte("renewed")
    )
    claimed = select(claim.c.id).scalar_subquery().label("claimed")
    issued = select(renewed.c.id).scalar_subquery().label("issued")
    return select(
        family, claimed, issued, *(c.label(f"u_{c.name}") for c in USER_COLUMNS)
    ).select_from(family.outerjoin(USERS, USERS.c.id == family.c.user_id))


_ROTATE_IN_ONE = _rotate_in_one()


def _touch_and_read() -> Any:
    """SQLite: the family's row and its user's in one statement (the claim is another: no
    UPDATE in a WITH clause there). RETURNING names the updated table's columns unqualified: the
    user's table is aliased, so that each name resolves to one table only."""
    owner = USERS.alias("owner")
    return _touch_family(
        *(
            select(owner.c[c.name])
            .where(owner.c.id == FAMILIES.c.user_id)
            .scalar_subquery()
            .label(f"u_{c.name}")
            for c in USER_COLUMNS
        )
    )


_TOUCH_AND_READ = _touch_and_read()
# Run on the driver's cursor (``common.api.prepared``): a refresh's statement through SQLAlchemy's
# execution costs about as much CPU again as the driver and the database.
_ROTATE_PREPARED = Prepared(_ROTATE_IN_ONE)
_ROTATE_AND_RENEW = Prepared(_rotate_and_renew())
_TOUCH_PREPARED = Prepared(_TOUCH_AND_READ)
_CLAIM_PREPARED = Prepared(_CLAIM)
_USER_PREPARED = Prepared(_USER_BY_ID)
# A refresh's rows, one INSERT each where they are not written in one statement (SQLite).
_INSERTS = {table: Prepared(table.insert()) for table in (TOKENS, FAMILIES, REFRESH_TOKENS)}


def rotate(
    db: Session,
    tokens: TokenStore,
    pairs: GracePairs,
    *,
    value: str,
    application_id: str,
    renewal: Renewal | None = None,
) -> Presented | Replay:
    """Rotate the refresh token ``value`` of ``application_id`` in the caller's transaction.

    Returns the token's family (the caller issues the new pair and commits), or the pair a
    concurrent rotation just issued (within the grace period). Raises InvalidGrantError for any
    other token; a reuse past the grace period first revokes the family (committed here).
    On PostgreSQL the rotation also writes the ``renewal`` given (``Presented.renewed``: the
    caller then writes no pair of its own).
    """
    token_digest = digest(value)
    now = renewal.now if renewal is not None else utcnow()
    keys = {"b_digest": token_digest, "b_application_id": application_id, "b_now": now}
    one_statement = db.get_bind().dialect.name == "postgresql"
    conn = db.connection()
    if one_statement and renewal is not None:
        found = _ROTATE_AND_RENEW.rows(conn, {**keys, **renewal.binds()})
    elif one_statement:
        found = _ROTATE_PREPARED.rows(conn, keys)
    else:
        found = _TOUCH_PREPARED.rows(conn, keys)
    family = found[0] if found else None
    if family is None:
        db.rollback()
        raise InvalidGrantError(description=INVALID_REFRESH)
    presented = Presented(
        token_digest,
        family.id,
        application_id,
        family.user_id,
        family.scope,
        int(family.auth_time.timestamp()) if family.auth_time is not None else None,
    )
    if family.u_id is not None:
        presented.user = user_of(family, prefix="u_")
    if one_statement:
        claimed = family.claimed
        if renewal is not None and getattr(family, "issued", None) is not None:
            presented.renewed = renewal.written(
                application_id=application_id, user_id=family.user_id, scope=family.scope
            )
    else:
        claimed = _CLAIM_PREPARED.scalar(conn, keys)
    if claimed is not None:
        return presented
    rotated_at = db.scalar(
        select(RefreshToken.rotated_at).where(RefreshToken.digest == token_digest)
    )
    if rotated_at is None:  # expired (or revoked) while live: no reuse, just refused
        db.rollback()
        raise InvalidGrantError(description=INVALID_REFRESH)
    if now - rotated_at <= timedelta(seconds=pairs.seconds):
        body = pairs.recall(token_digest)
        if body is not None:
            db.rollback()
            audit(
                "refresh.replayed_in_grace",
                family_id=family.id,
                application_id=application_id,
                user_id=family.user_id,
            )
            return Replay(body, presented)
    expired = revoke_families(db, tokens, RefreshFamily.id == family.id)
    db.commit()
    tokens.tombstone(expired)
    audit(
        "refresh.reused",
        family_id=family.id,
        application_id=application_id,
        user_id=family.user_id,
        tokens_expired=len(expired),
    )
    raise InvalidGrantError(description=INVALID_REFRESH)


def discard_renewed(db: Session, renewed: Renewed) -> None:
    """Delete the pair a rotation wrote, in the caller's transaction (the grant issues another:
    never seen, as the two statements' transaction is one)."""
    db.execute(REFRESH_TOKENS.delete().where(REFRESH_TOKENS.c.id == renewed.refresh_id))
    db.execute(TOKENS.delete().where(TOKENS.c.id == renewed.access.row.id))


def user_of(row: Any, *, prefix: str = "") -> FamilyUser:
    """Return the user of a row holding ``USER_COLUMNS`` (under ``prefix``)."""
    return FamilyUser(*(getattr(row, prefix + c.name) for c in USER_COLUMNS))


def family_user(db: Session, presented: Presented) -> FamilyUser | None:
    """Return the user of the family ``presented`` rotated (read by the rotation when it could)."""
    if presented.user is not None:
        return presented.user
    found = _USER_PREPARED.rows(db.connection(), {"b_user_id": presented.user_id})
    row = found[0] if found else None
    return user_of(row) if row is not None else None


# -- revoking --------------------------------------------------------------------------------


def revoke_families(
    db: Session, tokens: TokenStore, *conditions: ColumnElement[bool]
) -> list[Token]:
    """Revoke every live family matching ``conditions``: its refresh tokens and every access
    token issued from it. Returns the expired access tokens: tombstone them after the commit."""
    now = utcnow()
    family_ids = list(
        db.scalars(
            update(RefreshFamily)
            .where(RefreshFamily.revoked_at.is_(None), *conditions)
            .values(revoked_at=now)
            .execution_options(synchronize_session=False)
            .returning(RefreshFamily.id)
        )
    )
    if not family_ids:
        return []
    db.execute(
        update(RefreshToken)
        .where(RefreshToken.family_id.in_(family_ids), RefreshToken.revoked_at.is_(None))
        .values(revoked_at=now)
        .execution_options(synchronize_session=False)
    )
    issued = select(RefreshToken.access_token_id).where(RefreshToken.family_id.in_(family_ids))
    return tokens.expire_where(db, Token.id.in_(issued))


def family_of(db: Session, value: str) -> tuple[str, str, str] | None:
    """Return (family id, application id, user id) of a refresh token's live family, or None."""
    found = db.execute(
        select(RefreshFamily.id, RefreshFamily.application_id, RefreshFamily.user_id)
        .join(RefreshToken, RefreshToken.family_id == RefreshFamily.id)
        .where(RefreshToken.digest == digest(value), RefreshFamily.revoked_at.is_(None))
    ).first()
    return (found.id, found.application_id, found.user_id) if found is not None else None


@dataclass(frozen=True)
class LiveRefresh:
    """A live refresh token as introspection describes it (RFC 7662)."""

    application_id: str
    user_id: str
    scope: str
    created_at: datetime
    expires_at: datetime
    expired_at: None = None  # found live: never expired early (as a token row says it)


def live_refresh(db: Session, value: str) -> LiveRefresh | None:
    """Return the refresh token ``value`` while it can still be used (neither rotated, revoked
    nor expired, its family live), else None."""
    now = utcnow()
    found = db.execute(
        select(RefreshToken, RefreshFamily.user_id, RefreshFamily.scope)
        .join(RefreshFamily, RefreshToken.family_id == RefreshFamily.id)
        .where(
            RefreshToken.digest == digest(value),
            RefreshToken.rotated_at.is_(None),
            RefreshToken.revoked_at.is_(None),
            RefreshToken.expires_at > now,
            RefreshFamily.revoked_at.is_(None),
        )
    ).first()
    if found is None:
        return None
    token, user_id, scope = found
    return LiveRefresh(token.application_id, user_id, scope, token.created_at, token.expires_at)


def revoke_presented(
    db: Session, tokens: TokenStore, value: str, *, application_id: str | None = None
) -> tuple[str, str, str] | None:
    """Revoke the family of the refresh token ``value`` (of ``application_id``, when named),
    and commit; return (family id, application id, user id), or None when there is none."""
    found = family_of(db, value)
    if found is None or (application_id is not None and found[1] != application_id):
        return None
    expired = revoke_families(db, tokens, RefreshFamily.id == found[0])
    db.commit()
    tokens.tombstone(expired)
    audit(
        "refresh.revoked",
        family_id=found[0],
        application_id=found[1],
        user_id=found[2],
        tokens_expired=len(expired),
    )
    return found


@dataclass(frozen=True)
class Holder:
    """An application holding a live refresh token for a user."""

    application_id: str
    name: str
    families: int
    last_used: datetime


def live_token_exists(now: datetime) -> Exists:
    """An EXISTS on a live token (neither rotated, revoked nor expired at ``now``) of the
    ``RefreshFamily`` row of the enclosing query (its family_id index finds them)."""
    return (
        select(RefreshToken.id)
        .where(
            RefreshToken.family_id == RefreshFamily.id,
            RefreshToken.rotated_at.is_(None),
            RefreshToken.revoked_at.is_(None),
            RefreshToken.expires_at > now,
        )
        .exists()
    )


def holders_of(db: Session, user_id: str, *, limit: int = 100) -> list[Holder]:
    """Return the applications holding a live refresh token for the user, latest used first."""
    live = live_token_exists(utcnow())
    last = func.max(RefreshFamily.used_at)
    rows = db.execute(
        select(Application.id, Application.name, func.count(RefreshFamily.id), last)
        .join(RefreshFamily, RefreshFamily.application_id == Application.id)
        .where(
            RefreshFamily.user_id == user_id,
            RefreshFamily.revoked_at.is_(None),
            live,
        )
        .group_by(Application.id, Application.name)
        .order_by(last.desc())
        .limit(limit)
    ).all()
    return [Holder(app_id, name, count, used) for app_id, name, count, used in rows]


def issue_beside(db: Session, oauth_request: Any, access: IssuedToken, *, ttl: int) -> str:
    """Write the access token ``access`` and the refresh token that goes with it (caller's
    transaction; one statement on PostgreSQL); return the refresh token's value.

    A refresh continues the family of the token it rotated; any other grant starts a family
    with the scope granted and, for the code flow, when the user signed in.
    """
    row = access.row
    rows: list[tuple[Table, dict[str, Any]]] = [(TOKENS, access.values())]
    presented: Presented | None = oauth_request.refresh_token
    if presented is not None:
        family_id = presented.family_id
    else:
        code = oauth_request.authorization_code
        family = new_family(
            application_id=row.application_id,
            user_id=row.user_id or "",
            scope=row.scope,
            auth_time=code.get_auth_time() if code is not None else None,
        )
        rows.append((FAMILIES, family))
        family_id = family["id"]
    value, refresh = new_refresh(
        family_id=family_id, application_id=row.application_id, access_token_id=row.id, ttl=ttl
    )
    rows.append((REFRESH_TOKENS, refresh))
    if db.get_bind().dialect.name == "postgresql":
        insert_rows(db, *rows)  # one statement
    else:
        conn = db.connection()
        for table, values in rows:
            _INSERTS[table].rows(conn, values)
    return value
