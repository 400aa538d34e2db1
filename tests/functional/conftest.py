"""The services under test on the real test stores: served in-process to ``requests`` by default,
and as real HTTP servers (waitress on free loopback ports) where the transport is under test.

``auth_server``, ``resource_server`` and ``combined_server`` are the apps served in-process
(``tests.functional.in_process``): the test bodies keep their ``requests`` calls, and every
response still passes through ``requests.Session.send``, where it is checked against the OpenAPI
document and its secrets are collected for the log check. ``http_auth_server``,
``http_resource_server`` and ``http_combined_server`` are the same apps over real HTTP, for the
tests of what only a socket shows (framing, request limits, raw and malformed requests), and
for the attack modules of ``security/``, whose conftest gives them the real servers under the
usual names.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
import requests
from redis import Redis
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from auth_server.app import create_app as create_auth
from common.catalog_version import bump_catalog_version
from common.observability import METRICS_PATH
from common.serve import PathDispatcher
from common.settings import AuthSettings, ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests.db_state import truncate_all
from tests.functional import log_secrets, process_support
from tests.functional.in_process import InProcessServer, route, serve_in_process
from tests.functional.process_support import RedisServer, private_redis
from tests.openapi_check import check_response
from tests.servers import CHECKED_PORTS, LiveServer, checked, start_server

if TYPE_CHECKING:
    from tests.pages import Account

pytestmark = pytest.mark.functional


def _checked_in_process(app: Any) -> InProcessServer:
    served = serve_in_process(app)
    CHECKED_PORTS.add(served.port)
    return served


@pytest.fixture(scope="session", autouse=True)
def requests_reach_in_process_apps() -> Iterator[None]:
    """Send the requests addressed to an app served in-process to that app (in every thread)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(requests.Session, "get_adapter", route(requests.Session.get_adapter))
        yield


@pytest.fixture(scope="session")
def auth_server(auth_settings: AuthSettings, stores: Stores) -> Iterator[InProcessServer]:
    """The auth server alone, served in-process."""
    served = _checked_in_process(create_auth(auth_settings, stores))
    yield served
    served.stop()


@pytest.fixture(scope="session")
def resource_server(
    resource_settings: ResourceSettings, stores: Stores
) -> Iterator[InProcessServer]:
    """The resource server alone, served in-process."""
    served = _checked_in_process(create_resource(resource_settings, stores))
    yield served
    served.stop()


@pytest.fixture(scope="session")
def combined_server(
    auth_settings: AuthSettings, resource_settings: ResourceSettings, stores: Stores
) -> Iterator[InProcessServer]:
    """Both services behind the path dispatcher, as ``serve all`` runs them, in-process."""
    app = PathDispatcher(
        create_auth(auth_settings, stores), create_resource(resource_settings, stores)
    )
    served = _checked_in_process(app)
    yield served
    served.stop()


@pytest.fixture(scope="session")
def http_auth_server(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """The auth server alone, over real HTTP."""
    live = checked(start_server(create_auth(auth_settings, stores)))
    yield live
    live.stop()


@pytest.fixture(scope="session")
def http_resource_server(
    resource_settings: ResourceSettings, stores: Stores
) -> Iterator[LiveServer]:
    """The resource server alone, over real HTTP."""
    live = checked(start_server(create_resource(resource_settings, stores)))
    yield live
    live.stop()


@pytest.fixture
def app_credentials(
    clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings
) -> dict[str, str]:
    """An application's clear credentials (``client_id``, ``client_secret``) in an empty
    catalog."""
    from tests import factories

    with sessions() as s, s.begin():
        owner = factories.user(s, base_settings)
        new = factories.application(s, owner)
        return {"client_id": new.application.client_id, "client_secret": new.client_secret}


@pytest.fixture(scope="module")
def module_db(engine: Engine, redis_client: Redis, base_settings: Settings) -> Iterator[Engine]:
    """An empty database for a module whose servers run as processes (emptied afterwards;
    the catalog version bumped each time, as ``clean_db`` does)."""
    truncate_all(engine)
    bump_catalog_version(redis_client, base_settings.redis_prefix)
    yield engine
    truncate_all(engine)
    bump_catalog_version(redis_client, base_settings.redis_prefix)


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server of the module's own, which its tests may stop, flush and restart
    (skips the module when there is no redis-server)."""
    with private_redis() as server:
        yield server


@pytest.fixture(autouse=True)
def responses_match_the_openapi_document(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Check every response of the servers under test against the OpenAPI document."""
    original = requests.Session.send
    problems: list[str] = []

    def send(self: requests.Session, request: requests.PreparedRequest, **kw: Any) -> Any:
        response = original(self, request, **kw)
        log_secrets.harvest(request, response)
        # A redirect followed answers the last request of the chain (each hop was checked as
        # it was sent): check the response against the request it answers.
        request = response.request or request
        url = urlsplit(request.url or "")
        # /metrics is the operator's, outside the API (and its document).
        if url.hostname == "127.0.0.1" and url.port in CHECKED_PORTS and url.path != METRICS_PATH:
            content_type = response.headers.get("Content-Type", "")
            body: Any = None
            if "json" in content_type and response.content:
                try:
                    body = response.json()
                except ValueError:
                    problems.append(f"{request.method} {url.path}: the body is not JSON")
            problem = check_response(
                request.method or "GET", request.url or "", response.status_code, content_type, body
            )
            if problem:
                problems.append(problem)
        return response

    monkeypatch.setattr(requests.Session, "send", send)
    yield
    assert not problems, "responses that break the OpenAPI document:\n" + "\n".join(problems)


@pytest.fixture(scope="session", autouse=True)
def no_secret_in_any_log_line() -> Iterator[None]:
    """Capture every log line of the run (access lines included); fail if one holds a secret.

    The secrets are those the requests of the run carried or received (see ``log_secrets``).
    """
    capture = log_secrets.LogCapture()
    root = logging.getLogger()
    root.addHandler(capture)
    artcat = logging.getLogger("artcat")
    previous = artcat.level
    artcat.setLevel(logging.INFO)  # access and audit lines are INFO
    yield
    artcat.setLevel(previous)
    root.removeHandler(capture)
    found = log_secrets.leaks(capture.lines + log_secrets.log_file_lines(), log_secrets.SECRETS)
    assert not found, "secrets in the logs of the run:\n" + "\n".join(found[:20])


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind() -> Iterator[None]:
    """At the end of the session no process a test started still runs (a server, or a worker
    its killed supervisor left): each found is killed, and named in the failure."""
    yield
    left = process_support.left_behind()
    assert not left, "processes the tests left running (killed now):\n" + "\n".join(left)


# -- the /oauth2/authorize tests' fixtures (files may define their own of the same name) --


@pytest.fixture
def web() -> Iterator[requests.Session]:
    """A browser-like session (the shared ``http`` fixture cannot see a 302 with requests 2.34)."""
    with requests.Session() as s:
        yield s


@pytest.fixture
def account(clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings) -> Account:
    """A user who owns an application with web, loopback and private-use redirect URIs."""
    from tests.functional.authorize_support import ACCOUNT_REDIRECT_URIS
    from tests.pages import make_account  # tests.pages imports this module

    return make_account(
        sessions, base_settings, name="Ada Owner", redirect_uris=ACCOUNT_REDIRECT_URIS
    )


@pytest.fixture
def signed_in(auth_server: LiveServer, account: Account, web: requests.Session) -> requests.Session:
    """The account's user, signed in on the auth server in a browser-like session."""
    from tests.pages import sign_in  # tests.pages imports this module

    assert sign_in(web, auth_server.url, account.email).status_code == 302
    return web


@pytest.fixture
def fresh_keys(clean_db: Any, stores: Stores, auth_settings: AuthSettings) -> None:
    """An empty database and key table, as the servers then learn (``usefixtures`` it)."""
    from tests.functional.oidc_support import forget_cached_keys

    forget_cached_keys(stores, auth_settings)


@pytest.fixture(scope="module")
def no_grace_server(auth_settings: AuthSettings, stores: Stores) -> Iterator[LiveServer]:
    """An auth server without a refresh grace period: a second use of a token is a reuse at
    once (with one, the same client presenting it within seconds gets the same pair back)."""
    from tests.functional.oauth_support import serve_auth  # it imports this module

    with serve_auth(replace(auth_settings, refresh_grace_period=0), stores) as live:
        yield live


@pytest.fixture
def registered(clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings) -> Account:
    """A user who owns an application that registered one redirect URI."""
    from tests.functional.authorize_support import HTTPS_CB
    from tests.pages import make_account  # tests.pages imports this module

    return make_account(sessions, base_settings, redirect_uris=[HTTPS_CB], app_name="Registered")
