"""Client metadata of dynamic registration: defaults, and what is refused with which error."""

from __future__ import annotations

from typing import Any

import pytest
from authlib.oauth2.rfc7591 import InvalidClientMetadataError, InvalidRedirectURIError

from auth_server.client_metadata import Metadata, server_metadata
from auth_server.views.discovery import openid_metadata
from auth_server.views.discovery import server_metadata as discovery

CB = "https://client.example/cb"


def checked(claims: dict[str, Any]) -> dict[str, Any]:
    """Validate claims as the registration endpoint does; return what is registered."""
    options = Metadata.get_claims_options(server_metadata())
    metadata = Metadata(claims, {}, options, server_metadata())
    metadata.validate()
    return dict(metadata.get_registered_claims())


def test_defaults_are_the_code_flow_with_a_secret() -> None:
    got = checked({"redirect_uris": [CB], "client_name": " Viewer ", "jwks_uri": "x"})
    assert got == {
        "client_name": "Viewer",
        "token_endpoint_auth_method": "client_secret_basic",
        "redirect_uris": [CB],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
    }


def test_a_native_app_registers_loopback_and_private_use_uris() -> None:
    uris = ["http://127.0.0.1/cb", "com.example.app:/cb", CB, CB]
    got = checked({"redirect_uris": uris, "token_endpoint_auth_method": "none"})
    assert got["redirect_uris"] == uris[:3]  # duplicates dropped


@pytest.mark.parametrize(
    ("claims", "error"),
    [
        ({"redirect_uris": ["javascript:alert(1)"]}, InvalidRedirectURIError),
        ({}, InvalidRedirectURIError),  # the code flow needs a redirect URI
        ({"redirect_uris": [CB], "grant_types": ["implicit"]}, InvalidClientMetadataError),
        ({"redirect_uris": [CB], "response_types": ["code id_token"]}, InvalidClientMetadataError),
        (
            {"redirect_uris": [CB], "token_endpoint_auth_method": "tls_client_auth"},
            InvalidClientMetadataError,
        ),
        (
            {"redirect_uris": [CB], "tos_uri": "http://client.example/tos"},
            InvalidClientMetadataError,
        ),
        ({"redirect_uris": [CB], "contacts": ["@"]}, InvalidClientMetadataError),
        ({"redirect_uris": [CB], "contacts": ["a@b.example"] * 11}, InvalidClientMetadataError),
        ({"redirect_uris": [CB], "grant_types": {"a": 1}}, InvalidClientMetadataError),
    ],
)
def test_refused(claims: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        checked(claims)


def test_refresh_token_only_beside_the_code_flow() -> None:
    got = checked({"redirect_uris": [CB], "grant_types": ["authorization_code", "refresh_token"]})
    assert got["grant_types"] == ["authorization_code", "refresh_token"]
    assert got["response_types"] == ["code"]
    assert "refresh_token" in server_metadata()["grant_types_supported"]
    for grants in (["refresh_token"], ["client_credentials", "refresh_token"]):
        with pytest.raises(InvalidClientMetadataError, match="only with authorization_code"):
            checked({"redirect_uris": [CB], "grant_types": grants, "response_types": []})


def test_discovery_names_the_registration_endpoint_only_when_offered() -> None:
    base = "https://api.example.org"
    assert "registration_endpoint" not in discovery(base)
    assert discovery(base, registration=True)["registration_endpoint"] == f"{base}/oauth2/register"
    meta = openid_metadata(base, registration=True)
    assert meta["end_session_endpoint"] == f"{base}/oauth2/logout"
    assert meta["registration_endpoint"] == f"{base}/oauth2/register"
