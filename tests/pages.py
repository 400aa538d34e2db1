"""Helpers for tests of the auth server's HTML pages: forms parsed from real HTML, accounts."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from sqlalchemy.orm import Session, sessionmaker
from waitress.channel import HTTPChannel

from common.settings import Settings
from tests import factories
from tests.servers import LiveServer, start_server

PASSWORD = "Correct horse 42"
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


@dataclass
class Form:
    """A form found in a page: where it posts and the values it would send."""

    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: dict[str, str] = field(default_factory=dict)


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._current: Form | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._current = Form(a.get("action", ""), a.get("method", "get").lower())
            self.forms.append(self._current)
        elif self._current is not None and tag == "input" and a.get("name"):
            if a.get("type") == "submit":
                self._current.buttons[a["name"]] = a.get("value", "")
            else:
                self._current.fields[a["name"]] = a.get("value", "")
        elif self._current is not None and tag == "button" and a.get("name"):
            self._current.buttons[a["name"]] = a.get("value", "")
        elif self._current is not None and tag == "textarea" and a.get("name"):
            self._textarea = a["name"]
            self._current.fields[a["name"]] = ""

    def handle_data(self, data: str) -> None:
        if self._current is not None and self._textarea:
            self._current.fields[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._current = None
        elif tag == "textarea":
            self._textarea = None


def forms(html: str) -> list[Form]:
    """Return every form of a page."""
    parser = _FormParser()
    parser.feed(html)
    return parser.forms


def form(html: str, action_contains: str) -> Form:
    """Return the form whose action contains ``action_contains``."""
    for f in forms(html):
        if action_contains in f.action:
            return f
    raise AssertionError(f"no form posting to {action_contains!r} in the page")


def text(html: str) -> str:
    """Return the page's text with tags removed and whitespace collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def query(url: str) -> dict[str, str]:
    """Return the single-valued query parameters of a URL."""
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


# What an account's application registers unless told otherwise: the browser flow needs one.
DEFAULT_REDIRECT_URIS = ["https://c.example/cb", "http://127.0.0.1/cb"]


@dataclass(frozen=True)
class Account:
    """A user with a known password, and an application they own."""

    user_id: str
    email: str
    name: str
    password: str
    app_id: str
    client_id: str
    client_secret: str
    app_name: str


def make_account(
    sessions: sessionmaker[Session],
    settings: Settings,
    *,
    redirect_uris: list[str] | None = None,
    app_name: str = "Gallery Viewer",
    app_fields: dict[str, Any] | None = None,
    **user_fields: Any,
) -> Account:
    """Add a user (password ``PASSWORD``) and an application they own (``app_fields``: its
    further settings, such as ``refresh_tokens``)."""
    with sessions() as s, s.begin():
        user = factories.user(s, settings, password=PASSWORD, **user_fields)
        uris = DEFAULT_REDIRECT_URIS if redirect_uris is None else redirect_uris
        new = factories.application(
            s, user, name=app_name, redirect_uris=uris, **(app_fields or {})
        )
        return Account(
            user.id,
            user.email,
            user.name,
            PASSWORD,
            new.application.id,
            new.application.client_id,
            new.client_secret,
            new.application.name,
        )


def sign_in(
    http: requests.Session, base_url: str, email: str, password: str = PASSWORD, next: str = ""
) -> requests.Response:
    """Sign in through the HTML form; return the POST's response (a 302 on success)."""
    page = http.get(f"{base_url}/account/sign_in", params={"next": next} if next else None)
    assert page.status_code == 200, page.text
    f = form(page.text, "/account/sign_in")
    data = {**f.fields, "email": email, "password": password}
    return http.post(base_url + f.action, data=data, allow_redirects=False)


def post_form(
    http: requests.Session, base_url: str, page_url: str, action: str, **values: str
) -> requests.Response:
    """Load a page, fill the form posting to ``action`` and submit it (without redirects)."""
    page = http.get(page_url if page_url.startswith("http") else base_url + page_url)
    assert page.status_code == 200, page.text
    f = form(page.text, action)
    return http.post(base_url + f.action, data={**f.fields, **values}, allow_redirects=False)


@contextmanager
def serving(app: Any) -> Iterator[LiveServer]:
    """Serve ``app`` for one test; close its clients before leaving, so it stops at once."""
    live = start_server(app)
    try:
        yield live
    finally:
        # Wait (with a deadline) until every client connection is gone: closing the server under
        # a request still being serviced makes waitress fail in its worker thread.
        end = time.monotonic() + 5
        while time.monotonic() < end and any(
            isinstance(d, HTTPChannel) for d in list(live.server._map.values())
        ):
            time.sleep(0.02)
        live.stop()
