"""The grant types of the token endpoint, by ``grant_type``."""

from __future__ import annotations

from collections.abc import Callable

from auth_server.grants.authorization_code import authorization_code_grant
from auth_server.grants.base import Granted, GrantRequest
from auth_server.grants.credentials import credentials_grant
from auth_server.grants.oauth_token import oauth_token_grant
from common.models import Application

GRANTS: dict[str, Callable[[GrantRequest], Granted]] = {
    "authorization_code": authorization_code_grant,
    "credentials": credentials_grant,
    "oauth_token": oauth_token_grant,
}
GRANT_ROLE = "grant:"


def grant_allowed(app: Application, grant_type: str) -> bool:
    """Tell whether an application may use a grant.

    Every grant is open by default (as in the reference API). An operator restricts an
    application by giving it ``grant:<type>`` roles: then only those grants are allowed.
    """
    allowed = {r[len(GRANT_ROLE) :] for r in app.roles or [] if r.startswith(GRANT_ROLE)}
    return not allowed or grant_type in allowed


__all__ = ["GRANTS", "GrantRequest", "Granted", "grant_allowed"]
