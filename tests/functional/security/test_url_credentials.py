"""Credentials in URLs: the reference API's own request forms work, and nothing leaks from them.

The reference API takes every parameter of a POST in the query string too (its Getting Started
page sends ``POST /api/tokens/xapp_token?client_id=...&client_secret=...``) and answers GET on
``/oauth2/access_token``; its clients do both. By default (``URL_CREDENTIALS=accept``) those
forms work, for every grant but the password ones. What holds whatever the setting:

- a password in a URL is refused (``invalid_request`` on the token endpoint, a ``param_error``
  elsewhere), before any work, however its name is percent-encoded;
- a client secret, code or token that came in a URL never appears in the clear in a log line,
  in ``/metrics`` or in an error body, and token answers are ``Cache-Control: no-store``;
- routes the reference never had (RFC 7009 revocation, RFC 7662 introspection, the HTML pages)
  refuse secrets in the URL, as their standards and forms send them in the body.

With ``URL_CREDENTIALS=refuse`` no secret is taken from a URL and the token endpoint takes POST
only: the attacks of a leaked URL find nothing to replay.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from auth_server.params import SECRET_PARAMS
from common.models import Token
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional import log_secrets
from tests.functional.oauth_support import (
    FB_APP_ID,
    PASSWORD,
    REDIRECT_URI,
    StubProvider,
    World,
    code_params,
    make_code,
    serve_auth,
)
from tests.servers import CHECKED_PORTS, LiveServer

TOKEN_PATH = "/oauth2/access_token"
XAPP_PATH = "/api/tokens/xapp_token"
NO_STORE = "no-store"


@pytest.fixture(autouse=True)
def checked(oauth_server: LiveServer) -> Iterator[None]:
    """Check this module's answers of the OAuth server against the OpenAPI document too."""
    port = oauth_server.server.effective_port
    CHECKED_PORTS.add(int(port))
    yield
    CHECKED_PORTS.discard(int(port))


@pytest.fixture(scope="module")
def strict_server(oauth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server whose operator set URL_CREDENTIALS=refuse."""
    with serve_auth(replace(oauth_settings, url_credentials="refuse"), stores) as live:
        CHECKED_PORTS.add(int(live.server.effective_port))
        yield live
        CHECKED_PORTS.discard(int(live.server.effective_port))


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Capture the services' log lines (access and audit lines are INFO)."""
    with caplog.at_level(logging.INFO, logger="artcat"):
        yield caplog


def tokens(sessions: sessionmaker[Session]) -> int:
    """Return how many tokens exist."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(Token)) or 0)


def access_lines(caplog: pytest.LogCaptureFixture, count: int) -> list[str]:
    """Wait (with a deadline) until ``count`` access lines were written; return them.

    A response's access line is written as the server closes it, which may come just after the
    client has read the answer.
    """
    end = time.monotonic() + 10
    while True:
        lines = [r.getMessage() for r in caplog.records if r.name == "artcat.access"]
        if len(lines) >= count or time.monotonic() > end:
            return lines


def assert_nowhere(live: LiveServer, caplog: pytest.LogCaptureFixture, *values: str) -> None:
    """Check that no value is in a captured log line or in /metrics (plain or URL-encoded)."""
    text = "\n".join(r.getMessage() for r in caplog.records)
    text += requests.get(f"{live.url}/metrics", timeout=10).text
    for value in values:
        assert value, "nothing to look for"
        for form in {value, quote(value, safe=""), quote_plus(value)}:
            assert form not in text, f"{value!r} is in the log or the metrics"


def xapp_works(resource: LiveServer, token: str) -> bool:
    """Tell whether the catalog takes ``token`` as an application token."""
    r = requests.get(f"{resource.url}/api/artists", headers={"X-Xapp-Token": token}, timeout=10)
    return r.status_code == 200


def user_token_works(resource: LiveServer, token: str) -> bool:
    """Tell whether the catalog takes ``token`` as a user's token."""
    headers = {"X-Access-Token": token}
    r = requests.get(f"{resource.url}/api/current_user", headers=headers, timeout=10)
    return r.status_code in (200, 302)


def assert_issued(r: requests.Response) -> str:
    """Check a token answer of the token endpoint and return the token."""
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == NO_STORE
    token: str = r.json()["access_token"]
    return token


def assert_refused(r: requests.Response, *names: str) -> dict[str, Any]:
    """Check an OAuth invalid_request that says which parameters not to send in the URL."""
    assert r.status_code == 400, r.text
    body: dict[str, Any] = r.json()
    assert body["error"] == "invalid_request", body
    assert all(name in body["error_description"] for name in names), body
    assert "never in the URL" in body["error_description"] or "POST" in body["error_description"]
    assert r.headers["Cache-Control"] == NO_STORE
    return body


# -- the reference's forms, by default ---------------------------------------------------------


def test_xapp_token_with_the_secret_in_the_query_string(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    logs: pytest.LogCaptureFixture,
) -> None:
    # The reference's Getting Started request, to the letter.
    r = requests.post(f"{oauth_server.url}{XAPP_PATH}", params=app_and_user.creds, timeout=10)
    assert r.status_code == 201, r.text
    assert r.headers["Cache-Control"] == NO_STORE
    token = r.json()["token"]
    assert xapp_works(resource_server, token)
    # Mixed: the id in the URL, the secret in a JSON body.
    mixed = requests.post(
        f"{oauth_server.url}{XAPP_PATH}",
        params={"client_id": app_and_user.client_id},
        json={"client_secret": app_and_user.client_secret},
        timeout=10,
    )
    assert mixed.status_code == 201, mixed.text
    lines = access_lines(logs, 2)
    assert any("[redacted]" in line and XAPP_PATH in line for line in lines), lines
    assert_nowhere(oauth_server, logs, app_and_user.client_secret, token, mixed.json()["token"])


def test_a_wrong_secret_in_the_url_is_a_plain_auth_error(
    oauth_server: LiveServer, app_and_user: World, logs: pytest.LogCaptureFixture
) -> None:
    wrong = "Wr0ng-secret-in-the-url-" + app_and_user.client_secret[:8]
    r = requests.post(
        f"{oauth_server.url}{XAPP_PATH}",
        params={"client_id": app_and_user.client_id, "client_secret": wrong},
        timeout=10,
    )
    assert r.status_code == 401 and r.json()["type"] == "auth_error"
    assert wrong not in r.text
    access_lines(logs, 1)
    assert_nowhere(oauth_server, logs, wrong)


def test_a_parameter_with_two_values_in_the_url_and_the_body_is_refused(
    oauth_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    logs: pytest.LogCaptureFixture,
) -> None:
    # Which of two values a request means is ambiguous, and a check of one would not hold for
    # the other: the right secret in the body does not cover another in the URL, on either route.
    other = "An0ther-secret-in-the-url-" + app_and_user.client_secret[:8]
    before = tokens(sessions)
    for path, body in (
        (XAPP_PATH, app_and_user.creds),
        (TOKEN_PATH, {**app_and_user.creds, "grant_type": "client_credentials"}),
    ):
        r = requests.post(
            f"{oauth_server.url}{path}", params={"client_secret": other}, data=body, timeout=10
        )
        assert r.status_code == 400, (path, r.text)
        assert "client_secret" in r.text and other not in r.text
        assert app_and_user.client_secret not in r.text
    same = requests.post(
        f"{oauth_server.url}{XAPP_PATH}",
        params={"client_secret": app_and_user.client_secret},
        data=app_and_user.creds,
        timeout=10,
    )
    assert same.status_code == 201, same.text  # the same value twice is one value
    assert tokens(sessions) == before + 1
    access_lines(logs, 3)
    assert_nowhere(oauth_server, logs, other, app_and_user.client_secret)


def test_get_on_the_token_endpoint_with_client_credentials(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    logs: pytest.LogCaptureFixture,
) -> None:
    params = {**app_and_user.creds, "grant_type": "client_credentials"}
    r = requests.get(f"{oauth_server.url}{TOKEN_PATH}", params=params, timeout=10)
    token = assert_issued(r)
    assert xapp_works(resource_server, token)
    access_lines(logs, 1)
    assert_nowhere(oauth_server, logs, app_and_user.client_secret, token)


def test_get_on_the_token_endpoint_with_an_authorization_code(
    oauth_server: LiveServer,
    resource_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    logs: pytest.LogCaptureFixture,
) -> None:
    code = make_code(sessions, app_and_user)
    log_secrets.keep(code, issued=True)  # the run's own log check looks for it too
    url = f"{oauth_server.url}{TOKEN_PATH}"
    r = requests.get(url, params=code_params(app_and_user, code, state="st-4711"), timeout=10)
    token = assert_issued(r)
    assert r.json()["state"] == "st-4711"
    assert user_token_works(resource_server, token)
    # A replayed URL (from a log, a proxy, a browser history) redeems nothing, and the token the
    # code gave is expired (RFC 6749 4.1.2).
    again = requests.get(url, params=code_params(app_and_user, code), timeout=10)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert code not in again.text and app_and_user.client_secret not in again.text
    assert not user_token_works(resource_server, token)
    access_lines(logs, 2)
    assert_nowhere(oauth_server, logs, app_and_user.client_secret, code, token, "st-4711")


@pytest.mark.parametrize("grant", ["client_credentials", "authorization_code", "oauth_token"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_every_grant_takes_its_parameters_from_the_url(
    oauth_server: LiveServer,
    provider: StubProvider,
    app_and_user: World,
    sessions: sessionmaker[Session],
    logs: pytest.LogCaptureFixture,
    grant: str,
    method: str,
) -> None:
    params: dict[str, str] = {**app_and_user.creds, "grant_type": grant, "state": "st-url"}
    secret = app_and_user.client_secret
    if grant == "authorization_code":
        secret = make_code(sessions, app_and_user)
        log_secrets.keep(secret, issued=True)
        params.update(code=secret, redirect_uri=REDIRECT_URI)
    elif grant == "oauth_token":
        params.update(scope="offline_access")
        secret = f"fb-user-token-{method}-{app_and_user.user_id}"
        log_secrets.keep(secret)
        user = {"id": f"fb-{method}", "name": "Url Person"}
        provider.facebook[secret] = {"app_id": FB_APP_ID, "user": user}
        params.update(oauth_token=secret, oauth_provider="facebook")
    # POST: every parameter in the query string, an empty form body (as the reference's
    # clients send it).
    r = requests.request(method, f"{oauth_server.url}{TOKEN_PATH}", params=params, timeout=10)
    token = assert_issued(r)
    access_lines(logs, 1)
    assert_nowhere(oauth_server, logs, app_and_user.client_secret, secret, token)


def test_basic_authentication_with_the_grant_in_the_url(
    oauth_server: LiveServer, app_and_user: World
) -> None:
    r = requests.get(
        f"{oauth_server.url}{TOKEN_PATH}",
        params={"grant_type": "client_credentials"},
        auth=(app_and_user.client_id, app_and_user.client_secret),
        timeout=10,
    )
    assert_issued(r)


def test_expiring_a_token_named_in_the_url(
    oauth_server: LiveServer, app_and_user: World, logs: pytest.LogCaptureFixture
) -> None:
    # The reference documents ``?access_token=`` for DELETE /api/tokens/access_token.
    token = requests.post(f"{oauth_server.url}{XAPP_PATH}", data=app_and_user.creds, timeout=10)
    value = token.json()["token"]
    r = requests.delete(
        f"{oauth_server.url}/api/tokens/access_token", params={"access_token": value}, timeout=10
    )
    assert r.status_code == 200 and r.headers["Cache-Control"] == NO_STORE
    access_lines(logs, 2)
    assert_nowhere(oauth_server, logs, value)


# -- a password never goes in a URL --------------------------------------------------------------


def password_requests(base: str, app_and_user: World) -> list[requests.Response]:
    """Send the password in a URL in every way a client might; return the answers."""
    grant = {
        **app_and_user.creds,
        "grant_type": "credentials",
        "email": app_and_user.email,
        "password": PASSWORD,
    }
    url = f"{base}{TOKEN_PATH}"
    no_password = {k: v for k, v in grant.items() if k != "password"}
    return [
        requests.get(url, params=grant, timeout=10),
        requests.get(
            url, params={**grant, "grant_type": "password", "username": app_and_user.email}
        ),
        requests.post(url, params=grant, timeout=10),
        requests.post(url, params={"password": PASSWORD}, data=no_password, timeout=10),
        # a percent-encoded name is the same name
        requests.post(f"{url}?%70assword={quote(PASSWORD)}", data=no_password, timeout=10),
    ]


@pytest.mark.parametrize("strict", [False, True], ids=["accept", "refuse"])
def test_a_password_in_the_url_is_refused_under_both_settings(
    oauth_server: LiveServer,
    strict_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    logs: pytest.LogCaptureFixture,
    strict: bool,
) -> None:
    live = strict_server if strict else oauth_server
    for r in password_requests(live.url, app_and_user):
        body = assert_refused(r, "password")
        assert PASSWORD not in r.text and quote(PASSWORD) not in r.text, body
    xapp = requests.post(
        f"{live.url}{XAPP_PATH}", params={"password": PASSWORD}, data=app_and_user.creds, timeout=10
    )
    assert xapp.status_code == 400 and xapp.json()["type"] == "param_error", xapp.text
    assert "password" in xapp.json()["message"] and PASSWORD not in xapp.text
    assert tokens(sessions) == 0
    access_lines(logs, 6)
    assert_nowhere(live, logs, PASSWORD, app_and_user.client_secret)


def test_a_password_grant_by_get_with_a_body_is_refused(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    # A GET is the reference's URL form: the password grants are never taken by GET.
    grant = {
        **app_and_user.creds,
        "grant_type": "credentials",
        "email": app_and_user.email,
        "password": PASSWORD,
    }
    r = requests.get(f"{oauth_server.url}{TOKEN_PATH}", data=grant, timeout=10)
    assert_refused(r, "POST")
    assert tokens(sessions) == 0


def test_head_issues_nothing(
    oauth_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    # HEAD is answered by the GET route: it must not issue a token whose answer is thrown away.
    params = {**app_and_user.creds, "grant_type": "client_credentials"}
    r = requests.head(f"{oauth_server.url}{TOKEN_PATH}", params=params, timeout=10)
    assert r.status_code == 400
    assert tokens(sessions) == 0


# -- routes the reference never had keep refusing secrets in the URL ------------------------------


@pytest.mark.parametrize("name", SECRET_PARAMS)
@pytest.mark.parametrize("path", ["/oauth2/revoke", "/oauth2/introspect"])
def test_revocation_and_introspection_refuse_secrets_in_the_url(
    oauth_server: LiveServer, app_and_user: World, path: str, name: str
) -> None:
    r = requests.post(
        f"{oauth_server.url}{path}",
        params={name: "s3cret-value-in-url"},
        data={**app_and_user.creds, "token": "t0ken-in-the-body"},
        timeout=10,
    )
    assert_refused(r, name)
    assert "s3cret-value-in-url" not in r.text


@pytest.mark.parametrize("path", ["/oauth2/revoke", "/oauth2/introspect"])
def test_revocation_and_introspection_take_the_token_in_the_body(
    oauth_server: LiveServer, app_and_user: World, path: str
) -> None:
    token = requests.post(f"{oauth_server.url}{XAPP_PATH}", data=app_and_user.creds, timeout=10)
    value = token.json()["token"]
    r = requests.post(f"{oauth_server.url}{path}", data={**app_and_user.creds, "token": value})
    assert r.status_code == 200, r.text
    assert value not in r.text


@pytest.mark.parametrize("path", ["/account/sign_in", "/account/sign_up", "/oauth2/authorize"])
def test_pages_refuse_a_password_in_the_url(oauth_server: LiveServer, path: str) -> None:
    r = requests.post(f"{oauth_server.url}{path}", params={"password": "hunter2 hunter2"})
    assert r.status_code == 400
    assert r.headers["Content-Type"].startswith("text/html")
    assert "never in the URL" in r.text and "hunter2" not in r.text


# -- URL_CREDENTIALS=refuse: no secret from a URL, POST only --------------------------------------


@pytest.mark.parametrize("name", SECRET_PARAMS)
@pytest.mark.parametrize("path", [TOKEN_PATH, "/oauth2/revoke", "/oauth2/introspect"])
def test_strict_refuses_every_secret_in_the_url(
    strict_server: LiveServer,
    app_and_user: World,
    sessions: sessionmaker[Session],
    path: str,
    name: str,
) -> None:
    r = requests.post(
        f"{strict_server.url}{path}",
        params={name: "s3cret-value-in-url"},
        data={
            **app_and_user.creds,
            "grant_type": "client_credentials",
            "token": "t0ken-in-the-body",
        },
        timeout=10,
    )
    assert_refused(r, name)
    assert "s3cret-value-in-url" not in r.text
    assert tokens(sessions) == 0


def test_strict_refuses_percent_encoded_names_too(
    strict_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    r = requests.post(
        f"{strict_server.url}{TOKEN_PATH}?client%5Fsecret=x&c%6Fde=y",
        data={"grant_type": "client_credentials", "client_id": app_and_user.client_id},
        timeout=10,
    )
    assert_refused(r, "client_secret", "code")
    assert tokens(sessions) == 0


def test_strict_refuses_the_reference_xapp_request(
    strict_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    r = requests.post(f"{strict_server.url}{XAPP_PATH}", params=app_and_user.creds, timeout=10)
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["type"] == "param_error"
    assert "client_secret" in body["message"] and "request body" in body["message"]
    assert app_and_user.client_secret not in r.text
    assert tokens(sessions) == 0
    ok = requests.post(f"{strict_server.url}{XAPP_PATH}", data=app_and_user.creds, timeout=10)
    assert ok.status_code == 201


def test_strict_refuses_get_on_the_token_endpoint(
    strict_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    url = f"{strict_server.url}{TOKEN_PATH}"
    # With the secret in the URL: refused for the secret.
    params = {**app_and_user.creds, "grant_type": "client_credentials"}
    assert_refused(requests.get(url, params=params, timeout=10), "client_secret")
    # With no secret in the URL at all (Basic): refused for the method.
    r = requests.get(
        url,
        params={"grant_type": "client_credentials"},
        auth=(app_and_user.client_id, app_and_user.client_secret),
        timeout=10,
    )
    assert_refused(r, "POST")
    assert tokens(sessions) == 0


def test_strict_refuses_a_token_in_the_url_of_an_api_post(strict_server: LiveServer) -> None:
    r = requests.post(
        f"{strict_server.url}/api/applications", params={"access_token": "t0ken"}, timeout=10
    )
    assert r.status_code == 400
    assert r.json()["type"] == "param_error" and "access_token" in r.json()["message"]


def test_strict_still_takes_secrets_in_the_body(
    strict_server: LiveServer, app_and_user: World, sessions: sessionmaker[Session]
) -> None:
    # The client id and grant type in the URL are no secrets.
    r = requests.post(
        f"{strict_server.url}{TOKEN_PATH}",
        params={"grant_type": "client_credentials", "client_id": app_and_user.client_id},
        data={"client_secret": app_and_user.client_secret},
        timeout=10,
    )
    assert_issued(r)
    code = make_code(sessions, app_and_user)
    log_secrets.keep(code, issued=True)
    r = requests.post(
        f"{strict_server.url}{TOKEN_PATH}",
        params={"grant_type": "authorization_code", "redirect_uri": REDIRECT_URI},
        data={**app_and_user.creds, "code": code},
        timeout=10,
    )
    assert_issued(r)
