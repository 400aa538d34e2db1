"""Device cookies (OWASP): a browser that signed in with the right password keeps its own budget.

A successful sign-in at the page sets a cookie naming the account (by a keyed digest of its
email address, the key the throttle counts the account under, so the cookie shows no address and
checking it needs no database read) and a random device id, signed with the secret key
(``itsdangerous``, with a salt of its own), ``HttpOnly``,
``SameSite=Strict``, ``Secure`` when the session cookie is, sent to ``/account`` only, valid for
a year. The cookie authenticates nothing: it only tells the sign-in throttle to count this
browser's attempts in the device's own budget instead of the anonymous ones, so a guesser who
spends an account's anonymous budget does not lock out its owner at a browser used before. A
cookie that is forged, expired or of another account (or address) counts as none.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from flask import request
from itsdangerous import BadData, URLSafeTimedSerializer
from werkzeug.wrappers import Response

from auth_server.accounts import normalise_email
from auth_server.context import services
from common.settings import DAY

COOKIE = "artcat_device"
PATH = "/account"
TTL = 365 * DAY
_SALT = "artcat.device-cookie"
_MAX_LENGTH = 512  # a genuine cookie is about 120 characters


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(services().settings.secret_key, salt=_SALT)


def _account(email: str) -> str:
    """Return the account's tag in a cookie: a keyed digest of its normalised email address."""
    key = services().settings.secret_key.encode()
    address = normalise_email(email).encode("utf-8", "surrogatepass")
    return hmac.new(key, b"device-account:" + address, hashlib.sha256).hexdigest()[:32]


def trusted_device(email: str) -> str | None:
    """Return this browser's device id when its cookie is genuine, recent and ``email``'s."""
    raw = request.cookies.get(COOKIE)
    if not raw or len(raw) > _MAX_LENGTH:
        return None
    try:
        data = _serializer().loads(raw, max_age=TTL)
    except BadData:
        return None
    if not isinstance(data, dict):
        return None
    account, device = data.get("a"), data.get("d")
    if not isinstance(account, str) or not isinstance(device, str) or not device.isalnum():
        return None
    return device if hmac.compare_digest(account.encode(), _account(email).encode()) else None


def remember_device(response: Response, email: str) -> None:
    """Give this browser a fresh device cookie of the account (after a right password)."""
    value = _serializer().dumps({"a": _account(email), "d": secrets.token_hex(16)})
    response.set_cookie(
        COOKIE,
        value,
        max_age=TTL,
        path=PATH,
        secure=services().settings.cookie_secure,
        httponly=True,
        samesite="Strict",
    )
