"""The services an auth server app runs with, reachable from its views."""

from __future__ import annotations

from dataclasses import dataclass

from argon2 import PasswordHasher
from flask import current_app, request

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


def issuer() -> str:
    """Return the issuer: the configured public URL, else this request's scheme and host."""
    return (services().settings.public_url or request.host_url).rstrip("/")
