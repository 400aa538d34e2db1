"""RFC 9207: every authorization response names its issuer, so a client talking to several
authorization servers can tell a mixed-up response (a code from another server) from its own."""

from __future__ import annotations

import secrets

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2 import rfc9207
from oauthlib.oauth2 import WebApplicationClient
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from tests.functional.authorize_support import HTTPS_CB, approve, authorize_url
from tests.pages import Account, form, query, sign_in
from tests.servers import LiveServer


def metadata(base: str) -> dict[str, object]:
    """Return the server's RFC 8414 metadata."""
    doc: dict[str, object] = requests.get(
        f"{base}/.well-known/oauth-authorization-server", timeout=10
    ).json()
    return doc


@pytest.fixture
def web(combined_server: LiveServer, registered: Account) -> requests.Session:
    """A browser-like session signed in as the owner of an application registering HTTPS_CB."""
    session = requests.Session()
    assert sign_in(session, combined_server.url, registered.email).status_code == 302
    return session


def test_metadata_says_so(combined_server: LiveServer) -> None:
    doc = rfc9207.AuthorizationServerMetadata(metadata(combined_server.url))
    doc.validate_authorization_response_iss_parameter_supported()
    assert doc["authorization_response_iss_parameter_supported"] is True


def test_a_code_response_carries_the_issuer(
    combined_server: LiveServer, web: requests.Session, registered: Account
) -> None:
    base = combined_server.url
    url = authorize_url(
        base, client_id=registered.client_id, redirect_uri=HTTPS_CB, response_type="code"
    )
    q = query(approve(web, base, url))
    assert q["iss"] == metadata(base)["issuer"] == base and q["code"]


def test_error_responses_carry_the_issuer(
    combined_server: LiveServer, web: requests.Session, registered: Account
) -> None:
    base = combined_server.url
    values = {"client_id": registered.client_id, "redirect_uri": HTTPS_CB, "state": "s"}
    # A request error (invalid_scope), before the consent page.
    bad = web.get(
        authorize_url(base, response_type="code", scope="admin", **values), allow_redirects=False
    )
    assert bad.status_code == 302
    assert query(bad.headers["Location"])["iss"] == base
    # The user's refusal (access_denied).
    page = web.get(authorize_url(base, response_type="code", **values), allow_redirects=False)
    fields = form(page.text, "/oauth2/authorize").fields
    denied = web.post(
        f"{base}/oauth2/authorize", data={**fields, "deny": "Deny"}, allow_redirects=False
    )
    q = query(denied.headers["Location"])
    assert q["error"] == "access_denied" and q["iss"] == base and q["state"] == "s"


def test_a_stock_client_checks_the_issuer_before_redeeming(
    combined_server: LiveServer,
    web: requests.Session,
    registered: Account,
    sessions: sessionmaker[Session],
) -> None:
    """The client parses the response with oauthlib, compares ``iss`` with the issuer it
    discovered, and only then redeems the code with Authlib's client."""
    with sessions() as s, s.begin():  # Authlib's client reads an integer expires_in
        s.execute(update(Application).values(standard_token_response=True))
    base = combined_server.url
    expected = metadata(base)["issuer"]
    verifier = secrets.token_urlsafe(64)
    with OAuth2Session(
        registered.client_id,
        registered.client_secret,
        redirect_uri=HTTPS_CB,
        code_challenge_method="S256",
    ) as client:
        url, state = client.create_authorization_url(
            f"{base}/oauth2/authorize", code_verifier=verifier
        )
        location = approve(web, base, url)
        parsed = WebApplicationClient(registered.client_id).parse_request_uri_response(
            location, state=state
        )
        assert parsed["iss"] == expected
        # A response naming another issuer is a mix-up: the client would stop here.
        mixed_up = location.replace(f"iss={requests.utils.quote(base, safe='')}", "iss=x")
        assert query(mixed_up)["iss"] != expected
        token = client.fetch_token(
            f"{base}/oauth2/access_token", authorization_response=location, code_verifier=verifier
        )
    assert token["access_token"]
