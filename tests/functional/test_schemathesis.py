"""Generated requests (Schemathesis) for every operation of the OpenAPI document, over real HTTP.

The document is loaded from the live combined server (``/api/openapi.json``). Each operation gets
positive and negative cases, sent with a real token where its ``security`` asks for one: where any
token will do, once with an XAPP token and once with a user token; where only a user's will, with
a user token. Every check Schemathesis has is on (no 5xx, documented statuses, content types,
headers and schemas, required headers, Allow on 405, use after free, resource availability,
object-level authorization, positive data accepted, negative data rejected, auth not ignored),
and any failure fails the test. Where a check's expectation cannot hold, ``CONFIG`` (per named
operation) and ``as_positive_request`` (per named parameter) say why; generated token headers the
server by design reads as no credential (blank, or another scheme than Bearer) are dropped, so
the ignored-auth check judges the credentials that are sent; as in Schemathesis's own runner,
its probes (without the token, with a bad one) run until an operation has refused them once.
About 2,500 requests in all (1,900 generated, 550 probes): about 30 seconds on one core.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests
import schemathesis
import schemathesis.specs.openapi.checks  # registers the OpenAPI checks
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS as REGISTRY
from sqlalchemy import Engine, select

from artcat.loaders.demo import DEMO_EMAIL, demo_credentials, load_demo
from common.models import (
    Application,
    Artist,
    Artwork,
    Bidder,
    Collection,
    CollectionItem,
    Edition,
    Fair,
    Gene,
    Image,
    Partner,
    Profile,
    Sale,
    SaleArtwork,
    Show,
    User,
)
from common.settings import Settings
from common.stores import Stores
from tests import factories
from tests.db_state import truncate_all
from tests.functional import log_secrets
from tests.functional.catalog_support import demo_xapp_token, issue_user_token
from tests.openapi_check import document
from tests.servers import LiveServer, forget_sign_in_throttle

# Examples per run: an operation any token may call runs twice (XAPP, user); operations
# without parameters exhaust their cases sooner (the total is asserted below). HEAD is not an
# operation of the document (every GET answers it), so each GET runs more examples.
MAX_EXAMPLES = 20
MIN_REQUESTS = 1500
# Every check is on. Where its expectation cannot hold, the reason is stated here, per named
# operation (``CONFIG``) or parameter (``as_positive_request``); nothing else is relaxed.
CHECKS = REGISTRY.get_all()
POSITIVE_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "429"]
CONFIG = schemathesis.Config.from_dict(
    {
        "operations": [
            {
                # The auth server's HTML pages are browser forms: their fields and the session's
                # CSRF token are not in the document, so a generated POST is refused (a 400
                # page), as is a link whose token (email, password reset) or an authorization
                # request whose client the server never issued (or a device's user code).
                "include-path-regex": "^/(account|oauth2/authorize|activate)",
                "checks": {
                    "positive_data_acceptance": {"expected-statuses": [*POSITIVE_STATUSES, "400"]}
                },
            },
            {
                # The token to expire comes in a header or in the query: one of two places,
                # which OpenAPI cannot require; images are a show's or an artwork's
                # (``show_id`` or ``artwork_id``): one of two parameters. Redirect URIs follow
                # a registration policy (schemes, loopback hosts, no fragment or user
                # information) that no JSON Schema pattern states. A position's bound is the
                # collection's size at the time of the move (stated in the document's
                # description; not a fixed maximum). A device authorization's scope names
                # scopes of a fixed set, in the combinations OpenID Connect allows (profile and
                # email with openid), which no pattern states.
                "include-name": [
                    "DELETE /api/tokens/access_token",
                    "GET /api/images",
                    "POST /api/applications",
                    "POST /oauth2/device_authorization",
                    "PUT /api/applications/{app_id}",
                    "PUT /api/collection_items/{id}",
                ],
                "checks": {
                    "positive_data_acceptance": {"expected-statuses": [*POSITIVE_STATUSES, "400"]}
                },
            },
        ]
    }
)
# Generated values the server by design does not take as a credential: a blank token header
# presents nothing, and an Authorization header of another scheme than Bearer is not ours.
TOKEN_HEADERS = ("X-Xapp-Token", "X-Access-Token", "X-Auth-Token")


def token_kinds(security: list[dict[str, Any]] | None) -> list[str]:
    """Return the token kinds an operation is run with: both where any token will do."""
    schemes = {name for requirement in security or [] for name in requirement}
    if "xappToken" in schemes:
        return ["xapp", "user"]
    return ["user"] if schemes else ["none"]


OPERATIONS = [
    (method.upper(), path, kind)
    for path, ops in document()["paths"].items()
    for method in sorted(ops)
    for kind in token_kinds(ops[method].get("security"))
]
ITEMS: dict[str, Any] = {
    "/api/artists/{id}": Artist,
    "/api/artworks/{id}": Artwork,
    "/api/bidders/{id}": Bidder,
    "/api/collection_items/{id}": CollectionItem,
    "/api/collections/{id}": Collection,
    "/api/editions/{id}": Edition,
    "/api/fairs/{id}": Fair,
    "/api/genes/{id}": Gene,
    "/api/images/{id}": Image,
    "/api/partners/{id}": Partner,
    "/api/profiles/{id}": Profile,
    "/api/sale_artworks/{id}": SaleArtwork,
    "/api/sales/{id}": Sale,
    "/api/shows/{id}": Show,
    "/api/users/{id}": User,
}
# Operations whose auth the ignored-auth check confirmed (it probes without and with a bad token).
AUTH_ENFORCED: set[str] = set()
# Requests sent per operation (the last test checks the total when every operation ran).
SENT: dict[str, int] = {}


@dataclass(frozen=True)
class World:
    """The live schema, the demo client's credentials and the tokens the cases are sent with."""

    schema: Any
    client_id: str
    client_secret: str
    xapp: str
    user: str
    ids: dict[str, list[str]]  # item path -> ids of rows that exist


@pytest.fixture(scope="module")
def schema_and_tokens(
    engine: Engine,
    base_settings: Settings,
    stores: Stores,
    redis_client: Redis,
    auth_server: LiveServer,
    combined_server: LiveServer,
) -> Iterator[World]:
    """The demo catalog (read by the list operations) and the schema served by the live server."""
    truncate_all(engine)
    load_demo(engine, base_settings, seed=1, artworks=60)
    creds = demo_credentials(base_settings)
    with stores.sessions() as s:
        app_id = s.scalar(select(Application.id).where(Application.client_id == creds.client_id))
        user_id = s.scalar(select(User.id).where(User.email == DEMO_EMAIL))
        ids = {
            path: list(s.scalars(select(model.id).order_by(model.id).limit(8)))
            for path, model in ITEMS.items()
        }
    assert app_id and user_id
    with stores.sessions() as s, s.begin():
        # Applications the generated writes may change or delete: not the one of the tokens.
        owner = s.get_one(User, user_id)
        # The user token may write /api/applications only when issued to a first-party app.
        s.get_one(Application, app_id).first_party = True
        ids["/api/applications/{app_id}"] = [
            factories.application(s, owner).application.id for _ in range(3)
        ]
    ids["/api/user_details/{id}"] = [user_id]
    schema = schemathesis.openapi.from_url(f"{combined_server.url}/api/openapi.json", config=CONFIG)
    known_secrets = set(log_secrets.SECRETS)
    yield World(
        schema=schema,
        client_id=creds.client_id,
        client_secret=creds.client_secret,
        xapp=demo_xapp_token(auth_server, base_settings),
        user=issue_user_token(stores, app_id, user_id),
        ids=ids,
    )
    truncate_all(engine)
    log_secrets.forget_generated(known_secrets)
    # Sign-in attempts with the real client count against the login throttle of every test
    # server: forget them, so later tests start with a fresh allowance.
    forget_sign_in_throttle(redis_client, base_settings.redis_prefix)


def auth_headers(schema_and_tokens: World, kind: str) -> dict[str, str]:
    """Return the token header of a kind of token (none for ``none``)."""
    if kind == "xapp":
        return {"X-Xapp-Token": schema_and_tokens.xapp}
    if kind == "user":
        return {"X-Access-Token": schema_and_tokens.user}
    return {}


def with_real_client(schema_and_tokens: World, case: Any) -> None:
    """Put the demo application's real credentials in a generated body that names a client.

    Positive cases only: a negative case's invalid part may be the credentials themselves (a
    secret generated as an array, say), which real ones would make valid again, while the
    check still expects the request refused for it.
    """
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    if isinstance(case.body, dict) and "client_id" in case.body:
        case.body["client_id"] = schema_and_tokens.client_id
        case.body["client_secret"] = schema_and_tokens.client_secret


def without_ignored_credentials(case: Any) -> None:
    """Drop generated token headers that the server by design does not read as a credential.

    The ignored-auth check takes any security header the test did not set as a generated,
    invalid credential that must be refused; a blank one or another scheme's is no credential.
    Non-blank generated tokens stay: the server refuses them, even beside the real token.
    """
    headers = case.headers or {}
    for name in list(headers):
        value = str(headers[name]).strip()
        if name.title() in TOKEN_HEADERS and not value:
            del headers[name]
        elif name.lower() == "authorization":
            scheme, _, token = value.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                del headers[name]


def generated_credentials(case: Any) -> bool:
    """Tell whether a case carries a generated token header (the test's own are passed apart)."""
    names = {name.title() for name in case.headers or {}}
    return bool(names & {*TOKEN_HEADERS, "Authorization"})


def as_positive_request(case: Any, path: str) -> None:
    """Leave out of a positive case the query values no generator can make valid.

    A ``cursor`` is opaque: only the server makes one (a ``next`` link), so a generated one
    is a forgery it refuses (400), as it refuses one with ``offset``. An artworks
    ``collection_id`` names a collection only with its owner's ``user_id`` (400 without it):
    the document says so in the parameter's description, as no schema can. So does it of a
    parameter the auth server takes in the query string or the body: in one of them, or in
    both with one value (two values are refused).
    """
    if case.meta is None or not case.meta.generation.mode.is_positive or not case.query:
        return
    case.query.pop("cursor", None)
    if isinstance(case.body, dict):
        for name in [n for n in case.query if n in case.body]:
            if str(case.query[name]) != str(case.body[name]):
                case.query.pop(name)
    if path == "/api/artworks" and not case.query.get("user_id"):
        case.query.pop("collection_id", None)


def path_id(path: str) -> str:
    """Return the name of an item path's id parameter (``{id}``, ``{app_id}``)."""
    return path.rsplit("{", 1)[1].rstrip("}")


@pytest.mark.parametrize(
    ("method", "path", "kind"), OPERATIONS, ids=[f"{m} {p} {k}" for m, p, k in OPERATIONS]
)
def test_generated_requests_get_documented_answers(
    schema_and_tokens: World, method: str, path: str, kind: str
) -> None:
    operation = schema_and_tokens.schema[path][method]
    headers = auth_headers(schema_and_tokens, kind)
    strategies = [
        operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
        operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    ]
    if schema_and_tokens.ids.get(path):
        # Ids that exist, so the item representations are generated and checked too: one
        # strategy per id, built once (building one for each example drawn cost more than
        # the rest of the test), drawn as often as each of the others together.
        by_id = [
            operation.as_strategy(path_parameters={path_id(path): id_})
            for id_ in schema_and_tokens.ids[path]
        ]
        strategies.append(st.sampled_from(by_id).flatmap(lambda strategy: strategy))
    cases = st.one_of(strategies)
    label = f"{method} {path} {kind}"
    SENT[label] = 0

    @given(case=cases, real_client=st.booleans())
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any, real_client: bool) -> None:
        if real_client:
            with_real_client(schema_and_tokens, case)
        without_ignored_credentials(case)
        as_positive_request(case, path)
        with requests.Session() as session:
            response = case.call(session=session, headers=headers, timeout=30)
        SENT[label] += 1
        checks = CHECKS
        if label in AUTH_ENFORCED and not generated_credentials(case):
            # As Schemathesis's own runner does: once the operation refused a request without
            # the real token and with an invalid one, those probes prove nothing new.
            checks = [check for check in CHECKS if check.__name__ != "ignored_auth"]
        case.validate_response(response, checks=checks, headers=headers)
        if headers and 200 <= response.status_code < 300:
            AUTH_ENFORCED.add(label)

    run()
    assert SENT[label] > 0


def test_enough_generated_requests() -> None:
    if len(SENT) < len(OPERATIONS):
        pytest.skip("only a selection of the generated tests ran")
    assert sum(SENT.values()) >= MIN_REQUESTS, SENT
