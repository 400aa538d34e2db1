"""``grant_type=oauth_token``: a facebook or twitter token, verified with the provider.

A provider identity is linked to exactly one user. A new identity whose email belongs to an
account is linked to it only when both sides proved the mailbox: the provider verified the email
and the account confirmed it here (a confirmation link, or a password reset). Otherwise whoever
registered the address first, here or at the provider without verifying it, would get the
other's account: the grant is refused and the user told to sign in with the password. A new
identity with no account gets a new user, on the provider's email when the provider verified it,
else on an undeliverable placeholder address.
"""

from __future__ import annotations

import re
import secrets

from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.errors import (
    InvalidGrantError,
    InvalidRequestError,
    UnauthorizedClientError,
)
from flask import request
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from auth_server.accounts import AccountError, create_user, find_user_by_email
from auth_server.audit import audit
from auth_server.context import AuthServices, services
from auth_server.inputs import is_clean
from auth_server.server import request_db
from auth_server.social import PROVIDERS, ProviderError, ProviderIdentity, configured, verify
from auth_server.token_params import TOKEN_METHODS
from common.ids import new_id, utcnow
from common.models import SocialIdentity, User

EMAIL_TAKEN = (
    "An account already uses the email address of this {provider} account. Sign in with that "
    "account's email and password; once its address is confirmed, signing in with {provider} "
    "links the two."
)


class SocialGrant(grants.BaseGrant, grants.TokenEndpointMixin):
    """The reference API's social sign-in grant."""

    GRANT_TYPE = "oauth_token"
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
    # Which methods a request may use is the server's to decide (Server.get_token_grant).
    TOKEN_ENDPOINT_HTTP_METHODS = TOKEN_METHODS

    def validate_token_request(self) -> None:
        """Authenticate the client, verify the provider token, find or create its user."""
        client = self.authenticate_token_endpoint_client()
        if not client.check_grant_type(self.GRANT_TYPE):
            raise UnauthorizedClientError(description="This application may not use this grant.")
        form = self.request.form
        provider = form.get("oauth_provider", "").strip().lower()
        token = form.get("oauth_token", "")
        secret = form.get("oauth_token_secret")
        if provider not in PROVIDERS:
            raise InvalidRequestError(description="The oauth_provider must be facebook or twitter.")
        if not token:
            raise InvalidRequestError(description="The oauth_token parameter is required.")
        if provider == "twitter" and not secret:
            raise InvalidRequestError(description="The oauth_token_secret is required for twitter.")
        self.validate_requested_scope()
        svc = services()
        if not configured(provider, svc.settings):
            raise InvalidGrantError(description=f"Sign-in with {provider} is not enabled here.")
        ip = request.remote_addr
        try:
            identity = verify(provider, svc.settings, token, secret)
        except ProviderError as ex:
            audit("signin.failed", grant="oauth_token", provider=provider, reason=str(ex), ip=ip)
            raise InvalidGrantError(
                description=f"The {provider} token could not be verified."
            ) from None
        db = request_db(self.request)
        for attempt in (1, 2):
            try:
                self.request.user = find_or_create_user(db, svc, identity)
                break
            except (IntegrityError, AccountError):
                # A concurrent first sign-in with the same identity created it (or its address)
                # first: look again, and find it linked.
                db.rollback()
                if attempt == 2:
                    raise InvalidGrantError(description="Please try again.") from None
        self.request.client = client

    def create_token_response(self) -> tuple[int, dict[str, object], list[tuple[str, str]]]:
        """Issue the user's token (committed with a new account, if one was made)."""
        token = self.generate_token(
            user=self.request.user, scope=self.request.payload.scope, include_refresh_token=False
        )
        self.save_token(token)
        return 200, token, self.TOKEN_RESPONSE_HEADER


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
    existing = account_with_email(session, identity)
    if existing is not None:
        return link(session, existing, identity)
    name = identity.name if is_clean(identity.name, 200) and identity.name else None
    name = name or f"{identity.provider.capitalize()} user"
    email = usable_email(identity)
    user = create_user(
        session,
        svc.hasher,
        email=email or free_placeholder(session, identity),
        name=name,
        password=None,
    )
    if email:
        user.email_verified_at = utcnow()  # the provider verified it
    add_identity(session, user, identity)
    audit("user.created", user_id=user.id, via=identity.provider, verified_email=bool(email))
    return user


def usable_email(identity: ProviderIdentity) -> str | None:
    """Return the provider's email when it is verified and well formed."""
    email = identity.email
    if not email or not identity.email_verified or not is_clean(email, 320) or "@" not in email:
        return None
    return email


def account_with_email(session: Session, identity: ProviderIdentity) -> User | None:
    """Return the account that already uses the provider's email, if any."""
    email = identity.email
    if not email or not is_clean(email, 320) or "@" not in email:
        return None
    return find_user_by_email(session, email)


def link(session: Session, user: User, identity: ProviderIdentity) -> User:
    """Link a new identity to the account with its email, when both sides proved the mailbox."""
    if not (identity.email_verified and user.email_verified_at is not None):
        audit("signin.refused", grant="oauth_token", provider=identity.provider, reason="email")
        raise InvalidGrantError(description=EMAIL_TAKEN.format(provider=identity.provider))
    if not user.enabled:
        raise InvalidGrantError(description="This account is disabled.")
    add_identity(session, user, identity)
    audit("social.linked", user_id=user.id, via=identity.provider)
    return user


def placeholder_email(identity: ProviderIdentity) -> str:
    """Return the undeliverable address of an identity without a usable email."""
    uid = re.sub(r"[^A-Za-z0-9_-]", "-", identity.uid)[:100]
    return f"{identity.provider}-{uid}@users.invalid"


def free_placeholder(session: Session, identity: ProviderIdentity) -> str:
    """Return the identity's placeholder, or a random variant when someone took it first."""
    email = placeholder_email(identity)
    if find_user_by_email(session, email) is None:
        return email
    return email.replace("@", f"-{secrets.token_hex(6)}@")


def add_identity(session: Session, user: User, identity: ProviderIdentity) -> None:
    """Link a provider identity to a user (unique per provider and uid)."""
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
