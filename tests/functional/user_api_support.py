"""Helpers of the user-scoped API tests: users with access tokens, artworks, sales, SQL counting."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import requests
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from common.ids import new_id
from common.models import Artwork, Collection, Sale
from common.settings import Settings
from common.stores import Stores
from tests import factories
from tests.functional.catalog_support import counting
from tests.functional.in_process import InProcessServer
from tests.servers import LiveServer

_seq = itertools.count(1)
TIMEOUT = 30


@dataclass(frozen=True)
class Caller:
    """A user and the clear value of one of its access tokens."""

    id: str
    token: str
    default_collection: str

    @property
    def headers(self) -> dict[str, str]:
        """Return the headers that send the token."""
        return {"X-Access-Token": self.token}


def make_caller(
    sessions: sessionmaker[Session],
    stores: Stores,
    settings: Settings,
    *,
    name: str | None = None,
    admin: bool = False,
    first_party: bool = False,
) -> Caller:
    """Add a user (with its default collection) and issue it an access token (through a
    first-party application, one that may manage applications, when ``first_party``)."""
    with sessions() as s, s.begin():
        kw: dict[str, Any] = {"name": name} if name else {}
        user = factories.user(s, settings, **kw)
        if admin:
            user.type = "Admin"
        app = factories.application(s, user).application
        app.first_party = first_party
        issued = stores.tokens.issue(
            s, kind="access", application_id=app.id, user_id=user.id, ttl=3600
        )
        default = s.scalar(select(Collection.id).where(Collection.user_id == user.id))
        assert default is not None
        caller = Caller(user.id, issued.value, default)
    stores.tokens.publish(issued.row)
    return caller


def add(base: str, who: Caller, artwork: str, collection: str | None = None) -> requests.Response:
    """POST an artwork to a collection (the caller's default one unless given)."""
    return requests.post(
        f"{base}/api/collection_items",
        params={"collection_id": collection or who.default_collection, "user_id": who.id},
        data={"artwork_id": artwork},
        headers=who.headers,
        timeout=TIMEOUT,
    )


def item_url(base: str, who: Caller, item_id: str) -> str:
    """Return an item's self href."""
    return (
        f"{base}/api/collection_items/{item_id}"
        f"?collection_id={who.default_collection}&user_id={who.id}"
    )


def xapp_headers(sessions: sessionmaker[Session], stores: Stores) -> dict[str, str]:
    """Issue an application (XAPP) token and return the headers that send it."""
    with sessions() as s, s.begin():
        app = factories.application(s).application
        issued = stores.tokens.issue(s, kind="xapp", application_id=app.id, user_id=None, ttl=3600)
    stores.tokens.publish(issued.row)
    return {"X-Xapp-Token": issued.value}


def add_artworks(sessions: sessionmaker[Session], n: int, *, published: bool = True) -> list[str]:
    """Add ``n`` artworks and return their ids."""
    ids = []
    with sessions() as s, s.begin():
        for _ in range(n):
            k = next(_seq)
            row = Artwork(id=new_id(), slug=f"work-{k}-{new_id()}", title=f"Work {k}")
            row.published = published
            s.add(row)
            ids.append(row.id)
    return ids


def add_sale(sessions: sessionmaker[Session]) -> str:
    """Add a sale and return its id."""
    with sessions() as s, s.begin():
        k = next(_seq)
        sale = Sale(id=new_id(), slug=f"sale-{k}-{new_id()}", name=f"Sale {k}")
        s.add(sale)
    return sale.id


# Every statement a request runs, on the read-write and the read-only engine alike.
count_queries = counting


def walk(url: str, headers: dict[str, str], plural: str) -> tuple[list[dict[str, Any]], int]:
    """Follow ``next`` links from ``url``; return every embedded item and the number of pages."""
    items: list[dict[str, Any]] = []
    pages = 0
    next_url: str | None = url
    while next_url:
        r = requests.get(next_url, headers=headers, timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        body = r.json()
        items += body["_embedded"][plural]
        next_url = body["_links"].get("next", {}).get("href")
        pages += 1
        assert pages < 1000
    return items, pages


def wait_until_idle(live: LiveServer | InProcessServer, deadline: float = 10.0) -> None:
    """Wait until the server has closed every client connection (at once for an app served
    in-process, which has none).

    Stopping waitress from another thread while its loop is busy with many connections can
    race (a select on a just-closed socket); tests that open many connections leave it idle.
    """
    if not isinstance(live, LiveServer):
        return
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        channels = list(live.server._map.values())
        if not any(type(ch).__name__ == "HTTPChannel" for ch in channels):
            return
        time.sleep(0.02)
