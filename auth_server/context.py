"""The services an auth server app runs with, reachable from its views."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from argon2 import PasswordHasher
from flask import Request, current_app, request

from common.settings import AuthSettings
from common.stores import Stores


@dataclass(frozen=True)
class AuthServices:
    """Settings, stores and the password hasher of one auth server app."""

    settings: AuthSettings
    stores: Stores
    hasher: PasswordHasher


def services() -> AuthServices:
    """Return the services of the current app."""
    svc: AuthServices = current_app.extensions["artcat"]
    return svc


# The request ``auth_server.token_path`` answers without Flask's request context, while it does.
bare_request: ContextVar[Request | None] = ContextVar("artcat.bare_request", default=None)


def current_request() -> Request:
    """Return the request being answered: Flask's, or the one ``auth_server.token_path``
    answers before Flask (the same class, over the same environ)."""
    bare = bare_request.get()
    return bare if bare is not None else request


def issuer() -> str:
    """Return the issuer: the configured public URL, else this request's scheme and host."""
    return (services().settings.public_url or current_request().host_url).rstrip("/")
