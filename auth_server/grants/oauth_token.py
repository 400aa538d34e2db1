"""``grant_type=oauth_token``: a facebook or twitter token, verified with the provider.

A provider identity is linked to exactly one user; a new identity gets a new user. An identity
is never linked to an existing account by email (emails at providers may be unverified): when
the provider's email already belongs to a user, the grant is refused and that user must sign in
with their password instead.
"""

from __future__ import annotations

import re

from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from auth_server.accounts import AccountError, create_user, find_user_by_email
from auth_server.audit import audit
from auth_server.context import AuthServices
from auth_server.grants.base import Granted, GrantRequest, issue_access
from auth_server.inputs import is_clean
from auth_server.social import PROVIDERS, ProviderError, ProviderIdentity, configured, verify
from common.ids import new_id, utcnow
from common.models import SocialIdentity, User

EMAIL_TAKEN = (
    "An account already uses the email address of this {provider} account. Sign in with that "
    "account's email and password instead."
)


def oauth_token_grant(req: GrantRequest) -> Granted:
    """Verify a provider token server-side, find or create its user, and issue a token."""
    provider = req.params.get("oauth_provider", "").strip().lower()
    token = req.params.get("oauth_token", "")
    secret = req.params.get("oauth_token_secret")
    if provider not in PROVIDERS:
        raise InvalidRequestError(description="The oauth_provider must be facebook or twitter.")
    if not token:
        raise InvalidRequestError(description="The oauth_token parameter is required.")
    if provider == "twitter" and not secret:
        raise InvalidRequestError(description="The oauth_token_secret is required for twitter.")
    svc = req.svc
    if not configured(provider, svc.settings):
        raise InvalidGrantError(description=f"Sign-in with {provider} is not enabled here.")
    try:
        identity = verify(provider, svc.settings, token, secret)
    except ProviderError as ex:
        audit("signin.failed", grant="oauth_token", provider=provider, reason=str(ex), ip=req.ip)
        raise InvalidGrantError(
            description=f"The {provider} token could not be verified."
        ) from None
    for attempt in (1, 2):
        try:
            with svc.stores.sessions() as session, session.begin():
                user = find_or_create_user(session, svc, identity)
                return issue_access(session, req, user_id=user.id, scope=req.scope or "")
        except IntegrityError:
            # A concurrent first sign-in with the same identity created it first: look again.
            if attempt == 2:
                raise InvalidGrantError(description="Please try again.") from None
    raise AssertionError("unreachable")


def find_or_create_user(session: Session, svc: AuthServices, identity: ProviderIdentity) -> User:
    """Return the user linked to the identity, creating both for a new identity."""
    if not is_clean(identity.uid, 200):
        raise InvalidGrantError(description="The provider returned an unusable identity.")
    linked = session.scalar(
        select(SocialIdentity).where(
            SocialIdentity.provider == identity.provider,
            SocialIdentity.provider_uid == identity.uid,
        )
    )
    if linked is not None:
        user = session.get(User, linked.user_id)
        if user is None or not user.enabled:
            raise InvalidGrantError(description="This account is disabled.")
        return user
    email = identity.email if identity.email and is_clean(identity.email, 320) else None
    if email and find_user_by_email(session, email) is not None:
        audit("signin.refused", grant="oauth_token", provider=identity.provider, reason="email")
        raise InvalidGrantError(description=EMAIL_TAKEN.format(provider=identity.provider))
    name = identity.name if is_clean(identity.name, 200) and identity.name else None
    name = name or f"{identity.provider.capitalize()} user"
    try:
        user = create_user(session, svc.hasher, email=email or "", name=name, password=None)
    except AccountError:
        user = create_user(
            session, svc.hasher, email=placeholder_email(identity), name=name, password=None
        )
    session.add(
        SocialIdentity(
            id=new_id(),
            user_id=user.id,
            provider=identity.provider,
            provider_uid=identity.uid,
            created_at=utcnow(),
        )
    )
    session.flush()
    audit("user.created", user_id=user.id, via=identity.provider)
    return user


def placeholder_email(identity: ProviderIdentity) -> str:
    """Return a unique, undeliverable address for an identity without a usable email."""
    uid = re.sub(r"[^A-Za-z0-9_-]", "-", identity.uid)[:100]
    return f"{identity.provider}-{uid}@users.invalid"
