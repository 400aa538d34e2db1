"""Client metadata of dynamic registration (RFC 7591 2), checked by this server's rules.

Redirect URIs and post-logout redirect URIs follow the policy the command line and the developer
page apply (``auth_server.applications.check_redirect_urls``); ``client_uri``, ``logo_uri``,
``policy_uri`` and ``tos_uri`` must be https URLs; ``contacts`` email addresses; grant types are
``authorization_code`` (with response type ``code``), ``refresh_token`` (only beside
``authorization_code``: a refresh token comes from a user's grant, so a client that cannot get
one has nothing to refresh; it registers the application for refresh tokens) and, for a
confidential client, ``client_credentials``; ``token_endpoint_auth_method`` ``none`` makes a
public client. Every failure is an OAuth error (``invalid_redirect_uri`` or
``invalid_client_metadata``), checked before Authlib's own checks run on values of the right
types.
"""

from __future__ import annotations

from typing import Any

from authlib.oauth2.rfc7591 import (
    ClientMetadataClaims,
    InvalidClientMetadataError,
    InvalidRedirectURIError,
)

from auth_server.applications import check_name, check_redirect_urls
from auth_server.inputs import is_clean
from auth_server.keys import ALGORITHMS
from auth_server.redirects import parse_target
from common.api.errors import APIError

SECRET_METHODS = ["client_secret_basic", "client_secret_post"]
AUTH_METHODS = [*SECRET_METHODS, "none"]
CODE = "authorization_code"
REFRESH = "refresh_token"
GRANT_TYPES = [CODE, REFRESH, "client_credentials"]
# The metadata a registration keeps (and answers), beside the client's id and secret.
URL_FIELDS = ("client_uri", "logo_uri", "policy_uri", "tos_uri")
TEXT_FIELDS = ("client_name", "token_endpoint_auth_method", "id_token_signed_response_alg")
LIST_FIELDS = (
    "redirect_uris",
    "post_logout_redirect_uris",
    "grant_types",
    "response_types",
    "contacts",
)
MAX_CONTACTS = 10
MAX_URL = 2000


def server_metadata() -> dict[str, Any]:
    """Return what a registration may ask for (Authlib builds its claim options from it)."""
    return {
        "response_types_supported": ["code"],
        "grant_types_supported": GRANT_TYPES,
        "token_endpoint_auth_methods_supported": AUTH_METHODS,
    }


def _refuse(field: str, reason: str) -> InvalidClientMetadataError:
    return InvalidClientMetadataError(description=f"{field} {reason}.")


class Metadata(ClientMetadataClaims):
    """Client metadata, checked by this server's rules (see the module's docstring)."""

    REGISTERED_CLAIMS = [*TEXT_FIELDS, *URL_FIELDS, *LIST_FIELDS]

    def validate(self, now: Any = None, leeway: int = 0) -> None:
        """Check the types first (Authlib's checks assume them), then the values."""
        for name in [k for k, v in self.items() if v is None]:
            del self[name]  # null is an omitted value (RFC 7591 2)
        for name in (*TEXT_FIELDS, *URL_FIELDS):
            value = self.get(name)
            if value is not None and (not isinstance(value, str) or not is_clean(value, MAX_URL)):
                raise _refuse(name, "must be a string")
        for name in LIST_FIELDS:
            value = self.get(name)
            if value is not None and (
                not isinstance(value, list)
                or len(value) > 50
                or not all(isinstance(v, str) and is_clean(v, MAX_URL) for v in value)
            ):
                raise _refuse(name, "must be an array of strings")
        self.setdefault("grant_types", [CODE])
        self.setdefault("response_types", ["code"] if CODE in self["grant_types"] else [])
        self.validate_supported()
        super().validate(now, leeway)
        self.validate_grants_and_responses()
        self.validate_id_token_signed_response_alg()
        self.validate_post_logout_redirect_uris()

    def validate_supported(self) -> None:
        """Refuse what this server does not offer, before Authlib's own checks (which would
        refuse it too, with a less telling description)."""
        method = self.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in AUTH_METHODS:
            raise _refuse("token_endpoint_auth_method", f"must be one of {', '.join(AUTH_METHODS)}")
        if not set(self["grant_types"]) <= set(GRANT_TYPES):
            raise _refuse("grant_types", f"may name {', '.join(GRANT_TYPES)} only")
        if not set(self["response_types"]) <= {"code"}:
            raise _refuse("response_types", "may name code only")

    def validate_redirect_uris(self) -> None:
        """Apply the redirect URI policy of the command line and the developer page."""
        try:
            uris = check_redirect_urls(self.get("redirect_uris", []))
        except APIError as ex:
            raise InvalidRedirectURIError(description=ex.message) from None
        if CODE in self.get("grant_types", [CODE]) and not uris:
            raise InvalidRedirectURIError(
                description="redirect_uris must name at least one URI for authorization_code."
            )
        if uris:
            self["redirect_uris"] = uris

    def validate_post_logout_redirect_uris(self) -> None:
        """Apply the redirect URI policy to the URIs a sign-out may go back to."""
        try:
            uris = check_redirect_urls(
                self.get("post_logout_redirect_uris", []), "post_logout_redirect_uris"
            )
        except APIError as ex:
            raise InvalidClientMetadataError(description=ex.message) from None
        if uris:
            self["post_logout_redirect_uris"] = uris

    def validate_grants_and_responses(self) -> None:
        """Keep grant and response types consistent, and public clients off secret grants."""
        grants, responses = self["grant_types"], self["response_types"]
        if not grants:
            raise _refuse("grant_types", "must name at least one grant type")
        if (CODE in grants) != ("code" in responses):
            raise _refuse("response_types", "must be code exactly when authorization_code is")
        if REFRESH in grants and CODE not in grants:
            raise _refuse("grant_types", "may include refresh_token only with authorization_code")
        if self.get("token_endpoint_auth_method") == "none" and "client_credentials" in grants:
            raise _refuse("grant_types", "cannot include client_credentials for a public client")

    def validate_id_token_signed_response_alg(self) -> None:
        """Take the algorithms the server signs ID tokens with."""
        alg = self.get("id_token_signed_response_alg")
        if alg is not None and alg not in ALGORITHMS:
            raise _refuse("id_token_signed_response_alg", f"must be one of {', '.join(ALGORITHMS)}")

    def validate_client_name(self) -> None:
        """A name of the application name's rules."""
        if "client_name" in self:
            try:
                self["client_name"] = check_name(self["client_name"])
            except APIError:
                raise _refuse("client_name", "must be 1 to 200 characters") from None

    def _https_url(self, key: str) -> None:
        value = self.get(key)
        if value is not None:
            target, _ = parse_target(value)
            if target is None or target.kind != "web":
                raise _refuse(key, "must be an https URL")

    def validate_client_uri(self) -> None:
        """An https URL."""
        self._https_url("client_uri")

    def validate_logo_uri(self) -> None:
        """An https URL."""
        self._https_url("logo_uri")

    def validate_policy_uri(self) -> None:
        """An https URL."""
        self._https_url("policy_uri")

    def validate_tos_uri(self) -> None:
        """An https URL."""
        self._https_url("tos_uri")

    def validate_contacts(self) -> None:
        """Email addresses, at most ten."""
        contacts = self.get("contacts", [])
        if len(contacts) > MAX_CONTACTS:
            raise _refuse("contacts", f"must name at most {MAX_CONTACTS} addresses")
        for contact in contacts:
            local, at, domain = contact.partition("@")
            if not (local and at and "." in domain) or any(c.isspace() for c in contact):
                raise _refuse("contacts", "must be email addresses")

    # Not registered here (RFC 7591 2: a server may ignore metadata it does not support).
    def validate_scope(self) -> None:
        """Every client may ask for every scope: not registered."""

    def validate_jwks_uri(self) -> None:
        """No private_key_jwt here: not registered."""

    def validate_jwks(self) -> None:
        """No private_key_jwt here: not registered."""

    def validate_software_id(self) -> None:
        """Not registered."""

    def validate_software_version(self) -> None:
        """Not registered."""
