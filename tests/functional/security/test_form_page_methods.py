"""A method a browser page does not take is answered 405 with ``Allow``, before its CSRF check.

The finding: ``PUT /account/sign_in`` (and PATCH, DELETE... on every page of the auth server)
was answered 400 "This form has expired", the CSRF check's answer, as though the page took the
method and only the form's token were wrong. A client (or a scanner) was told the wrong thing,
and the check ran for requests no page would ever serve. Now the method is checked first: every
page route, walked from the app's own URL map, answers each method it does not take with 405
and an ``Allow`` header naming exactly the methods it does, and never the CSRF page.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import requests
from werkzeug.routing import Map

from auth_server.app import create_app as create_auth
from auth_server.web import is_page_path
from common.settings import AuthSettings
from common.stores import Stores
from tests.servers import LiveServer

pytestmark = pytest.mark.functional

PROBED = ("POST", "PUT", "PATCH", "DELETE")


def concrete(rule: str, n: int) -> str:
    """Fill a rule's variables (``<id>``, ``<path:x>``) with a well-formed id of its own (a
    reset link's token is a secret to the log check: no other path may repeat it)."""
    return re.sub(r"<[^>]+>", f"{n:024x}", rule)


def page_paths(url_map: Map) -> list[str]:
    """Return a concrete path for every page route of the auth server."""
    paths = {concrete(r.rule, n) for n, r in enumerate(url_map.iter_rules(), start=1)}
    return sorted(p for p in paths if is_page_path(p))


def test_every_page_answers_a_method_it_does_not_take_with_405_and_allow(
    auth_server: LiveServer, auth_settings: AuthSettings, stores: Stores, clean_db: Any
) -> None:
    url_map = create_auth(auth_settings, stores).url_map
    adapter = url_map.bind("127.0.0.1")
    paths = page_paths(url_map)
    assert {"/account/sign_in", "/account/sign_up", "/oauth2/authorize"} <= set(paths)
    probed = 0
    with requests.Session() as browser:
        # A browser that has a session and a CSRF cookie, as a real one would.
        assert browser.get(f"{auth_server.url}/account/sign_in", timeout=10).status_code == 200
        for path in paths:
            allowed = set(adapter.allowed_methods(path))
            assert allowed, path
            for method in PROBED:
                if method in allowed:
                    continue
                r = browser.request(method, f"{auth_server.url}{path}", data={"x": "1"}, timeout=10)
                assert r.status_code == 405, (method, path, r.status_code, r.text[:200])
                said = {m.strip() for m in r.headers["Allow"].split(",")}
                assert said == allowed, (method, path, said, allowed)
                assert "expired" not in r.text, (method, path)
                probed += 1
    assert probed >= len(paths)  # every page refuses at least one of them


def test_a_method_a_page_takes_still_meets_the_csrf_check(auth_server: LiveServer) -> None:
    r = requests.post(
        f"{auth_server.url}/account/sign_in",
        data={"email": "a@example.org", "password": "x" * 12},
        timeout=10,
    )
    assert r.status_code == 400 and "expired" in r.text
