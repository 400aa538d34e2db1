"""``grant_type=authorization_code``: redeem a code once, bound to client, redirect URI and PKCE."""

from __future__ import annotations

from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError, InvalidScopeError

from auth_server.codes import redeem_code
from auth_server.grants.base import Granted, GrantRequest, issue_access
from common.models import User


def authorization_code_grant(req: GrantRequest) -> Granted:
    """Exchange a code for an access token; the code and the token commit together."""
    code = req.params.get("code")
    if not code:
        raise InvalidRequestError(description="The code parameter is required.")
    redirect_uri = req.params.get("redirect_uri")
    if not redirect_uri:
        description = "The redirect_uri of the authorization request is required."
        raise InvalidRequestError(description=description)
    svc = req.svc
    with svc.stores.sessions() as session, session.begin():
        redemption = redeem_code(
            session,
            svc.stores.tokens,
            code=code,
            application_id=req.application.id,
            redirect_uri=redirect_uri,
            code_verifier=req.params.get("code_verifier"),
            max_age=svc.settings.code_ttl,
        )
        granted = None
        row = redemption.code
        if row is not None:
            scope = row.scope
            if req.scope is not None:
                # A token never gets more than the user consented to; raising rolls the
                # redemption back, so the client may retry without the extra scope.
                if set(req.scope.split()) - set(row.scope.split()):
                    description = "The scope exceeds what the user granted."
                    raise InvalidScopeError(description=description)
                scope = req.scope
            user = session.get(User, row.user_id)
            if user is None or not user.enabled:
                raise InvalidGrantError(description="The user account is disabled.")
            granted = issue_access(session, req, user_id=row.user_id, scope=scope, code_id=row.id)
    if redemption.expired:
        svc.stores.tokens.tombstone(redemption.expired)
    if redemption.error is not None:
        raise redemption.error
    assert granted is not None
    return granted
