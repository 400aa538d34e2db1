"""Server-side verification of social provider tokens (facebook, twitter) for ``oauth_token``.

Facebook: ``debug_token`` (with our app token) must say the token is valid and was issued to our
app id; then ``/me`` gives the identity, and ``verified`` whether facebook confirmed the account
(its email included). Twitter: an OAuth 1.0a HMAC-SHA1 signed ``verify_credentials``, whose
``include_email`` returns only verified addresses. Every failure, including a provider that is
down or slow, is a :class:`ProviderError`; the caller answers ``invalid_grant``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from dataclasses import dataclass
from typing import Any

import requests
from authlib.integrations.requests_client import OAuth1Auth
from requests.auth import AuthBase

from auth_server.token_params import OAUTH_PROVIDERS
from common.settings import AuthSettings

PROVIDERS = OAUTH_PROVIDERS


class _RedactQueryStrings(logging.Filter):
    """Drop query strings from urllib3's debug lines: provider calls carry tokens in them."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's arguments; never drop the record."""
        if isinstance(record.args, tuple):
            record.args = tuple(
                a.split("?", 1)[0] + "?..." if isinstance(a, str) and "?" in a else a
                for a in record.args
            )
        return True


logging.getLogger("urllib3.connectionpool").addFilter(_RedactQueryStrings())


class ProviderError(Exception):
    """The provider did not confirm the token; the message is safe to log (no token in it)."""


@dataclass(frozen=True)
class ProviderIdentity:
    """A user identity confirmed by a provider."""

    provider: str
    uid: str
    name: str
    email: str | None
    email_verified: bool = False  # the provider confirmed the owner reads mail at ``email``


def configured(provider: str, settings: AuthSettings) -> bool:
    """Tell whether sign-in with ``provider`` is set up on this server."""
    if provider == "facebook":
        return bool(settings.facebook_app_id and settings.facebook_app_secret)
    if provider == "twitter":
        return bool(settings.twitter_consumer_key and settings.twitter_consumer_secret)
    return False


def verify(
    provider: str, settings: AuthSettings, token: str, token_secret: str | None
) -> ProviderIdentity:
    """Verify a provider token with the provider and return the identity it belongs to."""
    if provider == "facebook":
        return verify_facebook(settings, token)
    if provider == "twitter" and token_secret:
        return verify_twitter(settings, token, token_secret)
    raise ProviderError("unsupported provider")


def verify_facebook(settings: AuthSettings, token: str) -> ProviderIdentity:
    """Check a facebook user token with ``debug_token``, then read ``/me``."""
    base = settings.facebook_graph_url.rstrip("/")
    app_token = f"{settings.facebook_app_id}|{settings.facebook_app_secret}"
    debug = _get_json(
        settings, f"{base}/debug_token", {"input_token": token, "access_token": app_token}
    )
    data = debug.get("data")
    if not isinstance(data, dict) or data.get("is_valid") is not True:
        raise ProviderError("token not valid")
    if str(data.get("app_id", "")) != settings.facebook_app_id:
        raise ProviderError("token issued to another app")
    proof = hmac.new(
        settings.facebook_app_secret.encode(), token.encode(), hashlib.sha256
    ).hexdigest()
    me = _get_json(
        settings,
        f"{base}/me",
        {"fields": "id,name,email,verified", "access_token": token, "appsecret_proof": proof},
    )
    uid = str(me.get("id") or "")
    if not uid or ("user_id" in data and str(data["user_id"]) != uid):
        raise ProviderError("identity does not match the token")
    email = _text(me.get("email")) or None
    verified = me.get("verified") is True
    return ProviderIdentity("facebook", uid, _text(me.get("name")), email, verified)


def verify_twitter(settings: AuthSettings, token: str, token_secret: str) -> ProviderIdentity:
    """Call twitter's ``verify_credentials`` signed with OAuth 1.0a (HMAC-SHA1)."""
    auth = OAuth1Auth(
        client_id=settings.twitter_consumer_key,
        client_secret=settings.twitter_consumer_secret,
        token=token,
        token_secret=token_secret,
    )
    me = _get_json(
        settings,
        f"{settings.twitter_api_url.rstrip('/')}/1.1/account/verify_credentials.json",
        {"include_email": "true", "skip_status": "true"},
        auth=auth,
    )
    uid = str(me.get("id_str") or me.get("id") or "")
    if not uid:
        raise ProviderError("no identity in the answer")
    name = _text(me.get("name")) or _text(me.get("screen_name"))
    email = _text(me.get("email")) or None
    # Twitter answers include_email with the address only once its owner verified it.
    return ProviderIdentity("twitter", uid, name, email, email is not None)


def _get_json(
    settings: AuthSettings, url: str, params: dict[str, str], auth: AuthBase | None = None
) -> dict[str, Any]:
    try:
        resp = requests.get(
            url, params=params, auth=auth, timeout=settings.social_timeout, allow_redirects=False
        )
    except requests.RequestException as ex:
        # The exception text can hold the URL and so the token: log only its type.
        raise ProviderError(f"provider unreachable ({type(ex).__name__})") from None
    if resp.status_code != 200:
        raise ProviderError(f"provider answered {resp.status_code}")
    try:
        body = resp.json()
    except ValueError:
        raise ProviderError("provider answer is not JSON") from None
    if not isinstance(body, dict):
        raise ProviderError("provider answer is not an object")
    return body


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
