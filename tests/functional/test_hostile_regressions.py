"""One focused test per bug the hostile corpus and the generated requests found, over real HTTP."""

from __future__ import annotations

import base64
import http.client
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import falcon.testing
import orjson
import pytest
import requests
from redis import Redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker
from werkzeug.test import Client

from auth_server.app import create_app as create_auth
from common.models import Application, Collection
from common.serve import MAX_REQUEST_BODY
from common.settings import AuthSettings, ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests.functional.catalog_support import Catalog
from tests.functional.hostile_corpus import INJECTIONS, XSS_MARKERS
from tests.functional.user_api_support import Caller, make_caller
from tests.pages import Account, form, forms, sign_in
from tests.servers import LiveServer, forget_sign_in_throttle


@pytest.fixture
def caller(
    clean_db: Any, sessions: sessionmaker[Session], stores: Stores, base_settings: Settings
) -> Caller:
    """A user with an access token of a first-party application, in an empty database."""
    return make_caller(sessions, stores, base_settings, first_party=True)


def post_raw(live: LiveServer, path: str, body: bytes, content_type: str) -> tuple[int, Any]:
    """POST with http.client (the suite's request log check would parse a deep JSON body)."""
    conn = http.client.HTTPConnection("127.0.0.1", int(live.server.effective_port), timeout=30)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": content_type})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def count(sessions: sessionmaker[Session], model: Any) -> int:
    """Return the number of rows of a model."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(model)) or 0)


# -- auth server: a deeply nested JSON body was a RecursionError (500) -------------------------


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000])
def test_deeply_nested_json_is_a_400_on_the_auth_server(
    http_auth_server: LiveServer, body: bytes
) -> None:
    status, answer = post_raw(http_auth_server, "/api/tokens/xapp_token", body, "application/json")
    assert status == 400 and answer["detail"] == {"body": ["is not valid JSON"]}, answer
    status, answer = post_raw(http_auth_server, "/oauth2/access_token", body, "application/json")
    assert status == 400 and answer["error"] == "invalid_request", answer


def test_nan_and_infinity_are_not_json_to_the_auth_server(
    auth_server: LiveServer, caller: Caller, sessions: sessionmaker[Session]
) -> None:
    # json.loads took them: an application named NaN was created as "nan".
    apps = count(sessions, Application)
    for body in (b'{"name": NaN}', b'{"name": Infinity}', b'{"name": -Infinity}'):
        r = requests.post(
            f"{auth_server.url}/api/applications",
            data=body,
            headers={**caller.headers, "Content-Type": "application/json"},
            timeout=30,
        )
        assert r.status_code == 400 and r.json()["detail"] == {"body": ["is not valid JSON"]}
    assert count(sessions, Application) == apps


# -- resource server: cursors of the wrong types reached SQL (a 500) ----------------------------


def forged(values: list[Any]) -> str:
    """Return a cursor that decodes (it is base64 JSON) but was never issued."""
    return base64.urlsafe_b64encode(orjson.dumps(values)).decode().rstrip("=")


@pytest.mark.parametrize("values", [[None], [1], [18446744073709551615], [True], [1.5]])
@pytest.mark.parametrize("path", ["/users", "/collections", "/bidders"])
def test_forged_cursors_are_400_on_every_pager(
    catalog: Catalog, path: str, values: list[Any]
) -> None:
    params = {"cursor": forged(values)}
    if path == "/collections":
        params["user_id"] = catalog.user_id
    r = catalog.get(path, catalog.user, **params)
    assert r.status_code == 400, r.text
    assert r.json()["detail"] == {"cursor": ["is invalid"]}


def test_position_cursors_past_the_column_are_400(catalog: Catalog) -> None:
    with catalog.sessions() as s:
        collection = s.scalars(
            select(Collection).where(Collection.user_id == catalog.user_id)
        ).first()
    assert collection is not None
    for position in (18446744073709551615, 2**31, -1):
        cursor = forged([position, "0" * 24, "0" * 24])
        r = catalog.get(
            "/collection_items",
            catalog.user,
            collection_id=collection.id,
            user_id=catalog.user_id,
            cursor=cursor,
        )
        assert r.status_code == 400 and r.json()["detail"] == {"cursor": ["is invalid"]}, r.text


# -- auth pages: HEAD was taken for a form submission (without the CSRF check) -----------------


def test_head_on_a_page_reads_it_and_never_submits_its_form(
    auth_server: LiveServer, web: requests.Session, account: Account
) -> None:
    base = auth_server.url
    for path in ("/account/sign_in", "/account/sign_up", "/account/password/forgot"):
        head, get = web.head(base + path, timeout=30), web.get(base + path, timeout=30)
        assert head.status_code == get.status_code == 200, path
    assert sign_in(web, base, account.email).status_code == 302
    # HEAD on the sign-out page used to sign out: it is a GET without a body.
    assert (
        web.head(f"{base}/account/sign_out", allow_redirects=False, timeout=30).status_code == 200
    )
    assert web.get(f"{base}/account", allow_redirects=False, timeout=30).status_code == 200
    # HEAD on the applications page used to run the form (a 400 without one).
    before = count_apps(auth_server, web)
    assert web.head(f"{base}/account/applications", timeout=30).status_code == 200
    assert count_apps(auth_server, web) == before


def count_apps(auth_server: LiveServer, web: requests.Session) -> int:
    """Return how many applications the signed-in user's page lists."""
    page = web.get(f"{auth_server.url}/account/applications", timeout=30)
    assert page.status_code == 200
    return page.text.count("/rotate")


# -- invalid UTF-8 was decoded to U+FFFD and stored ---------------------------------------------


def test_invalid_utf8_in_a_form_or_query_is_refused_on_the_auth_server(
    auth_server: LiveServer, caller: Caller, sessions: sessionmaker[Session]
) -> None:
    apps = count(sessions, Application)
    r = requests.post(
        f"{auth_server.url}/api/applications",
        data=b"name=%FF%FEapp",
        headers={**caller.headers, "Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert r.status_code == 400, r.text
    assert r.json()["detail"] == {"body": ["is not valid UTF-8"]}
    r = requests.get(
        f"{auth_server.url}/api/applications?user_id=%C0%AF", headers=caller.headers, timeout=30
    )
    assert r.status_code == 400 and r.json()["detail"] == {"query": ["is not valid UTF-8"]}
    r = requests.get(f"{auth_server.url}/oauth2/access_token?grant_type=%FF", timeout=30)
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"
    r = requests.get(f"{auth_server.url}/account/sign_in?next=%FF", timeout=30)
    assert r.status_code == 400 and "not valid UTF-8" in r.text
    assert count(sessions, Application) == apps


def test_invalid_utf8_in_a_form_or_query_is_refused_on_the_catalog(
    resource_server: LiveServer, caller: Caller
) -> None:
    url = f"{resource_server.url}/api/collections/{caller.default_collection}"
    r = requests.put(
        url,
        data=b"name=%FF%FE",
        headers={**caller.headers, "Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert r.status_code == 400 and r.json()["detail"] == {"body": ["is not valid UTF-8"]}
    r = requests.get(f"{url}?user_id=%FF", headers=caller.headers, timeout=30)
    assert r.status_code == 400 and r.json()["detail"] == {"query": ["is not valid UTF-8"]}
    shown = requests.get(url, headers=caller.headers, timeout=30).json()
    assert "\ufffd" not in shown["name"]
    # Valid escapes still work.
    r = requests.put(url, data={"name": "Caf\u00e9 \U0001f3a8"}, headers=caller.headers, timeout=30)
    assert r.status_code == 200 and r.json()["name"] == "Caf\u00e9 \U0001f3a8"


# -- the auth API took multipart bodies (the contract: form or JSON, else 406) ------------------


def test_multipart_bodies_are_406_on_the_auth_api(auth_server: LiveServer, caller: Caller) -> None:
    r = requests.post(
        f"{auth_server.url}/api/applications",
        files={"name": (None, b"app")},
        headers=caller.headers,
        timeout=30,
    )
    assert r.status_code == 406 and set(r.json()) == {"error"}
    r = requests.post(
        f"{auth_server.url}/api/tokens/xapp_token",
        files={"client_id": (None, "x"), "client_secret": (None, "y")},
        timeout=30,
    )
    assert r.status_code == 406


# -- the body limit holds under any WSGI server, not only waitress ------------------------------


def test_bodies_over_1_mib_are_413_without_waitress(
    auth_settings: AuthSettings, resource_settings: ResourceSettings, stores: Stores
) -> None:
    big = b"a=" + b"x" * MAX_REQUEST_BODY
    catalog_app = falcon.testing.TestClient(create_resource(resource_settings, stores))
    r = catalog_app.simulate_post(
        "/api/collections",
        body=big,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        host="localhost",  # without PUBLIC_URL only a loopback Host is served
    )
    assert r.status_code == 413 and r.json["type"] == "other_error"
    auth_app = Client(create_auth(auth_settings, stores))
    answer = auth_app.post(
        "/api/tokens/xapp_token", data=big, content_type="application/x-www-form-urlencoded"
    )
    assert answer.status_code == 413 and answer.get_json()["type"] == "other_error"


# -- reflected and stored hostile text stays text ----------------------------------------------


def test_search_correction_redirect_keeps_hostile_text_encoded(catalog: Catalog) -> None:
    names = [a["name"] for a in catalog.ok("/artists", size="50")["_embedded"]["artists"]]
    words = sorted({w for n in names for w in n.split() if w.isalpha() and len(w) >= 6}, key=len)
    hostile = "\r\n<>\"'`"  # no word in it: the correction keeps it as the user typed it
    for word in reversed(words):
        misspelled = word[:3] + word[3] + word[3:]  # one letter doubled: one edit away
        r = catalog.get("/search", q=f"{misspelled}{hostile}")
        assert r.status_code in (200, 302), r.text
        if r.status_code == 302:
            location = r.headers["Location"]
            assert "\r" not in location and "\n" not in location
            assert "X-Injected" not in r.headers
            q = parse_qs(urlsplit(location).query)["q"][0]
            assert q.lower().startswith(word.lower()) and q.endswith("<>\"'`")
            return
    pytest.fail(f"no correction for any of {words}")


def test_injection_strings_are_stored_and_shown_literally(
    resource_server: LiveServer,
    auth_server: LiveServer,
    caller: Caller,
    redis_client: Redis,
    base_settings: Settings,
) -> None:
    for payload in INJECTIONS:
        # More applications than a user may create in a day: that limit is not under test here
        # (tests/functional/security/test_low_app_creation_throttle.py), so forget the count.
        forget_sign_in_throttle(redis_client, base_settings.redis_prefix)
        r = requests.post(
            f"{resource_server.url}/api/collections",
            data={"user_id": caller.id, "name": payload, "description": payload},
            headers=caller.headers,
            timeout=30,
        )
        assert r.status_code == 201, r.text
        shown = requests.get(r.json()["_links"]["self"]["href"], headers=caller.headers, timeout=30)
        assert shown.json()["name"] == shown.json()["description"] == payload
        r = requests.post(
            f"{auth_server.url}/api/applications",
            json={"name": payload},
            headers=caller.headers,
            timeout=30,
        )
        assert r.status_code == 201 and r.json()["name"] == payload, r.text
    listed = requests.get(
        f"{resource_server.url}/api/collections",
        params={"user_id": caller.id, "size": "50"},
        headers=caller.headers,
        timeout=30,
    ).json()["_embedded"]["collections"]
    assert {c["name"] for c in listed} >= set(INJECTIONS)


def test_pages_escape_stored_names(
    auth_server: LiveServer, web: requests.Session, account: Account
) -> None:
    base = auth_server.url
    assert sign_in(web, base, account.email).status_code == 302
    for payload in ("<script>alert(1)</script>", '"><svg onload=alert(1)>'):
        page = web.get(f"{base}/account/applications", timeout=30)
        (register,) = [f for f in forms(page.text) if f.action == "/account/applications"]
        r = web.post(
            f"{base}/account/applications",
            data={**register.fields, "name": payload, "redirect_uris": "https://a.example/cb"},
            allow_redirects=False,
            timeout=30,
        )
        assert r.status_code == 201, r.text[:300]
        assert not any(marker in r.text for marker in XSS_MARKERS)
    page = web.get(f"{base}/account/applications", timeout=30).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not any(marker in page for marker in XSS_MARKERS)
    # Sign-up reflects the name of a refused form; escaped too.
    with requests.Session() as other:
        signup = other.get(f"{base}/account/sign_up", timeout=30)
        fields = form(signup.text, "/account/sign_up").fields
        r = other.post(
            f"{base}/account/sign_up",
            data={**fields, "name": "<script>alert(1)</script>", "email": "x", "password": "x"},
            allow_redirects=False,
            timeout=30,
        )
        assert r.status_code == 400 and "&lt;script&gt;" in r.text
        assert not any(marker in r.text for marker in XSS_MARKERS)
