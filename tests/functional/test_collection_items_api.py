"""Collection items over real HTTP: add, list, show, move, remove; positions under concurrency."""

from __future__ import annotations

import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import CollectionItem
from common.settings import ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests.functional.catalog_support import race
from tests.functional.user_api_support import (
    TIMEOUT,
    Caller,
    add,
    add_artworks,
    count_queries,
    item_url,
    make_caller,
    wait_until_idle,
    walk,
    xapp_headers,
)
from tests.servers import LiveServer, start_server


@pytest.fixture
def pair(
    clean_db: Engine, sessions: sessionmaker[Session], stores: Stores, base_settings: Settings
) -> tuple[Caller, Caller]:
    """Two users with access tokens (and their default collections)."""
    return (
        make_caller(sessions, stores, base_settings),
        make_caller(sessions, stores, base_settings),
    )


def positions(sessions: sessionmaker[Session], collection: str) -> dict[str, int]:
    """Return artwork id -> position of a collection's items, from the database."""
    with sessions() as s:
        rows = s.execute(
            select(CollectionItem.artwork_id, CollectionItem.position).where(
                CollectionItem.collection_id == collection
            )
        )
        return {artwork: position for artwork, position in rows}


def ordered(sessions: sessionmaker[Session], collection: str) -> list[str]:
    """Return a collection's artwork ids in position order, checking positions are 1..n."""
    found = positions(sessions, collection)
    assert sorted(found.values()) == list(range(1, len(found) + 1)), sorted(found.values())
    return sorted(found, key=found.__getitem__)


def test_add_from_query_form_and_json_appends(
    resource_server: LiveServer, pair: tuple[Caller, Caller], sessions: sessionmaker[Session]
) -> None:
    me, _ = pair
    base = resource_server.url
    a, b, c = add_artworks(sessions, 3)
    url = f"{base}/api/collection_items"
    scope = {"collection_id": me.default_collection, "user_id": me.id}
    responses = [
        requests.post(url, params={**scope, "artwork_id": a}, headers=me.headers, timeout=30),
        requests.post(url, data={**scope, "artwork_id": b}, headers=me.headers, timeout=30),
        requests.post(url, json={**scope, "artwork_id": c}, headers=me.headers, timeout=30),
    ]
    assert [r.status_code for r in responses] == [201, 201, 201]
    assert [r.json()["position"] for r in responses] == [1, 2, 3]
    body = responses[0].json()
    assert list(body) == ["id", "created_at", "updated_at", "position", "_links"]
    assert body["_links"] == {
        "self": {"href": item_url(base, me, body["id"])},
        "user": {"href": f"{base}/api/users/{me.id}"},
        "collection": {"href": f"{base}/api/collections/{me.default_collection}"},
        "artwork": {"href": f"{base}/api/artworks/{a}"},
    }
    shown = requests.get(item_url(base, me, body["id"]), headers=me.headers, timeout=TIMEOUT)
    assert shown.status_code == 200 and shown.json() == body
    assert ordered(sessions, me.default_collection) == [a, b, c]


def test_add_errors_are_clear_and_change_nothing(
    resource_server: LiveServer,
    pair: tuple[Caller, Caller],
    sessions: sessionmaker[Session],
    stores: Stores,
) -> None:
    me, other = pair
    base = resource_server.url
    (work,) = add_artworks(sessions, 1)
    (hidden,) = add_artworks(sessions, 1, published=False)
    assert add(base, me, work).status_code == 201
    twice = add(base, me, work)
    assert twice.status_code == 400
    assert twice.json() == {
        "type": "param_error",
        "message": "Artwork is already in this collection.",
        "detail": {"artwork_id": ["is already in this collection"]},
    }
    for artwork in ("0123456789abcdef01234567", hidden):
        r = add(base, me, artwork)
        assert r.status_code == 404 and r.json()["message"] == "Artwork Not Found"
    r = requests.post(f"{base}/api/collection_items", json={}, headers=me.headers, timeout=30)
    assert r.status_code == 400
    assert r.json()["detail"] == {
        "collection_id": ["can't be blank"],
        "user_id": ["can't be blank"],
        "artwork_id": ["can't be blank"],
    }
    assert add(base, me, "nope").json()["detail"] == {"artwork_id": ["is invalid"]}
    # Another user's private collection is not found; a public one is forbidden.
    r = add(base, other, work, collection=me.default_collection)
    assert r.status_code == 404 and r.json()["message"] == "Collection Not Found"
    public = requests.post(
        f"{base}/api/collections", json={"user_id": me.id, "name": "Open"}, headers=me.headers
    ).json()["id"]
    intruder = requests.post(
        f"{base}/api/collection_items",
        json={"collection_id": public, "user_id": me.id, "artwork_id": work},
        headers=other.headers,
        timeout=TIMEOUT,
    )
    assert intruder.status_code == 403
    xapp = requests.post(
        f"{base}/api/collection_items",
        json={"collection_id": public, "user_id": me.id, "artwork_id": work},
        headers=xapp_headers(sessions, stores),
        timeout=TIMEOUT,
    )
    assert xapp.status_code == 401
    assert positions(sessions, me.default_collection) == {work: 1}
    assert positions(sessions, public) == {}


def test_list_and_show_need_both_ids_and_hide_private_collections(
    resource_server: LiveServer, pair: tuple[Caller, Caller], sessions: sessionmaker[Session]
) -> None:
    me, other = pair
    base = resource_server.url
    works = add_artworks(sessions, 3)
    ids = [add(base, me, w).json()["id"] for w in works]
    url = f"{base}/api/collection_items"
    scope = f"collection_id={me.default_collection}&user_id={me.id}"
    page = requests.get(f"{url}?{scope}", headers=me.headers, timeout=TIMEOUT).json()
    assert [i["id"] for i in page["_embedded"]["collection_items"]] == ids
    assert [i["position"] for i in page["_embedded"]["collection_items"]] == [1, 2, 3]
    only = requests.get(f"{url}?{scope}&artwork_id={works[1]}", headers=me.headers).json()
    assert [i["id"] for i in only["_embedded"]["collection_items"]] == [ids[1]]
    for query in ("", f"user_id={me.id}", f"collection_id={me.default_collection}"):
        r = requests.get(f"{url}?{query}", headers=me.headers, timeout=TIMEOUT)
        assert r.status_code == 400 and r.json()["type"] == "param_error"
    for who, query in (
        (other, scope),
        (me, f"collection_id={me.default_collection}&user_id={other.id}"),
    ):
        r = requests.get(f"{url}?{query}", headers=who.headers, timeout=TIMEOUT)
        assert r.status_code == 404 and r.json()["message"] == "Collection Not Found"
        r = requests.get(f"{url}/{ids[0]}?{query}", headers=who.headers, timeout=TIMEOUT)
        assert r.status_code == 404 and r.json()["message"] == "Collection Item Not Found"
    r = requests.get(f"{url}/{ids[0]}?user_id={me.id}", headers=me.headers, timeout=TIMEOUT)
    assert r.status_code == 400
    empty = f"{url}?collection_id={other.default_collection}&user_id={other.id}"
    assert requests.get(empty, headers=other.headers).json() == {
        "total_count": None,
        "_links": {"self": {"href": empty}},
        "_embedded": {"collection_items": []},
    }
    r = requests.get(f"{url}?{scope}&sample=1", headers=me.headers, allow_redirects=False)
    assert r.status_code == 302 and r.headers["Location"].split("?")[0].rsplit("/", 1)[1] in ids
    assert r.headers["Location"].endswith(f"?{scope}")


def test_move_and_remove_keep_positions_contiguous(
    resource_server: LiveServer, pair: tuple[Caller, Caller], sessions: sessionmaker[Session]
) -> None:
    me, other = pair
    base = resource_server.url
    works = add_artworks(sessions, 5)
    ids = {w: add(base, me, w).json()["id"] for w in works}
    a, b, c, d, e = works
    r = requests.put(item_url(base, me, ids[e]), json={"position": 2}, headers=me.headers)
    assert r.status_code == 200 and r.json()["position"] == 2
    assert ordered(sessions, me.default_collection) == [a, e, b, c, d]
    r = requests.put(item_url(base, me, ids[a]), data={"position": "4"}, headers=me.headers)
    assert r.json()["position"] == 4
    assert ordered(sessions, me.default_collection) == [e, b, c, a, d]
    for bad, reason in (
        (0, "must be between 1 and 5"),
        (6, "must be between 1 and 5"),
        ("x", "must be an integer"),
    ):
        r = requests.put(item_url(base, me, ids[a]), json={"position": bad}, headers=me.headers)
        assert r.status_code == 400 and r.json()["detail"] == {"position": [reason]}
    r = requests.put(item_url(base, me, ids[a]), json={"position": 1}, headers=other.headers)
    assert r.status_code == 404
    assert ordered(sessions, me.default_collection) == [e, b, c, a, d]
    r = requests.delete(item_url(base, me, ids[b]), headers=me.headers, timeout=TIMEOUT)
    assert r.status_code == 204
    assert ordered(sessions, me.default_collection) == [e, c, a, d]
    assert requests.delete(item_url(base, me, ids[b]), headers=me.headers).status_code == 404
    assert requests.delete(item_url(base, me, ids[c]), headers=other.headers).status_code == 404
    wrong = f"{base}/api/collection_items/{ids[c]}?collection_id={other.default_collection}"
    assert requests.delete(wrong, headers=me.headers, timeout=TIMEOUT).status_code == 404
    assert ordered(sessions, me.default_collection) == [e, c, a, d]


def test_paging_walks_every_item_once_even_when_items_are_removed(
    resource_server: LiveServer, pair: tuple[Caller, Caller], sessions: sessionmaker[Session]
) -> None:
    me, _ = pair
    base = resource_server.url
    works = add_artworks(sessions, 16)
    ids = [add(base, me, w).json()["id"] for w in works]
    scope = f"collection_id={me.default_collection}&user_id={me.id}"
    url = f"{base}/api/collection_items?size=5&total_count=1&{scope}"
    first = requests.get(url, headers=me.headers, timeout=TIMEOUT).json()
    assert first["total_count"] == 16
    assert [i["id"] for i in first["_embedded"]["collection_items"]] == ids[:5]
    # Remove an item already seen and the page's last item (the cursor's anchor).
    for gone in (ids[1], ids[4]):
        assert requests.delete(item_url(base, me, gone), headers=me.headers).status_code == 204
    second = requests.get(first["_links"]["next"]["href"], headers=me.headers).json()
    assert [i["id"] for i in second["_embedded"]["collection_items"]] == ids[5:10]
    assert [i["position"] for i in second["_embedded"]["collection_items"]] == [4, 5, 6, 7, 8]
    # Remove the new anchor and the next page's first item: the walk still misses nothing.
    for gone in (ids[9], ids[10]):
        assert requests.delete(item_url(base, me, gone), headers=me.headers).status_code == 204
    rest, pages = walk(second["_links"]["next"]["href"], me.headers, "collection_items")
    assert [i["id"] for i in rest] == ids[11:] and pages == 1
    everything, pages = walk(
        f"{base}/api/collection_items?size=3&{scope}", me.headers, "collection_items"
    )
    assert pages == 4 and [i["id"] for i in everything] == [
        i for i in ids if i not in {ids[1], ids[4], ids[9], ids[10]}
    ]
    for cursor in ("WzEsMl0", "WzEsIjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2NyJd", "not-a-cursor"):
        r = requests.get(f"{url}&cursor={cursor}", headers=me.headers, timeout=TIMEOUT)
        assert r.status_code == 400 and "cursor" in r.json()["detail"]


def test_a_page_of_items_costs_at_most_three_queries(
    resource_server: LiveServer,
    pair: tuple[Caller, Caller],
    sessions: sessionmaker[Session],
    engine: Engine,
) -> None:
    me, other = pair
    base = resource_server.url
    for w in add_artworks(sessions, 30):
        assert add(base, me, w).status_code == 201
    scope = f"collection_id={me.default_collection}&user_id={me.id}"
    for query, headers, expected in (
        (f"size=100&total_count=1&{scope}", me.headers, 30),
        (
            f"size=100&total_count=1&collection_id={other.default_collection}&user_id={other.id}",
            other.headers,
            0,
        ),
    ):
        url = f"{base}/api/collection_items?{query}"
        assert requests.get(url, headers=headers, timeout=TIMEOUT).status_code == 200
        with count_queries(engine) as statements:
            r = requests.get(url, headers=headers, timeout=TIMEOUT)
        assert len(r.json()["_embedded"]["collection_items"]) == expected
        assert len(statements) <= 3, statements


ADDERS = 100


@pytest.fixture
def racing_server(resource_settings: ResourceSettings, stores: Stores) -> Iterator[LiveServer]:
    """A resource server over real HTTP with a thread per request of the race, so that every
    add runs at once (the shared test server has 4 threads: it would queue most of them)."""
    live = start_server(
        create_resource(resource_settings, stores),
        threads=ADDERS,
        connection_limit=2 * ADDERS,  # waitress's default, 100, counts its own too
    )
    try:
        yield live
    finally:
        live.stop()


def test_concurrent_adds_get_positions_one_to_n(
    racing_server: LiveServer, pair: tuple[Caller, Caller], sessions: sessionmaker[Session]
) -> None:
    me, _ = pair
    base = racing_server.url
    works = add_artworks(sessions, ADDERS)
    url = f"{base}/api/collection_items"
    scope = {"collection_id": me.default_collection, "user_id": me.id}

    def add_one(http: requests.Session, n: int) -> int:
        r = http.post(
            url, params=scope, data={"artwork_id": works[n]}, headers=me.headers, timeout=TIMEOUT
        )
        return r.status_code

    assert race(base, ADDERS, add_one, timeout=TIMEOUT) == [201] * ADDERS
    # Positions are exactly 1..100 (``ordered`` checks it): none lost, none doubled.
    assert sorted(ordered(sessions, me.default_collection)) == sorted(works)
    # The same artwork added concurrently: exactly one succeeds, the rest are clear 400s.
    (same,) = add_artworks(sessions, 1)

    def add_same(http: requests.Session, _n: int) -> int:
        r = http.post(
            url, params=scope, data={"artwork_id": same}, headers=me.headers, timeout=TIMEOUT
        )
        return r.status_code

    assert sorted(race(base, 10, add_same, timeout=TIMEOUT)) == [201] + [400] * 9
    assert positions(sessions, me.default_collection)[same] == ADDERS + 1


def test_concurrent_moves_adds_and_removes_keep_positions_contiguous(
    resource_server: LiveServer, pair: tuple[Caller, Caller], sessions: sessionmaker[Session]
) -> None:
    me, _ = pair
    base = resource_server.url
    works = add_artworks(sessions, 40)
    ids = {w: add(base, me, w).json()["id"] for w in works[:20]}
    rng = random.Random(7)
    removed = set(rng.sample(sorted(ids), 5))

    def job(n: int) -> int:
        if n < 20:
            return add(base, me, works[20 + n]).status_code
        if n < 25:
            gone = sorted(removed)[n - 20]
            return requests.delete(item_url(base, me, ids[gone]), headers=me.headers).status_code
        keep = sorted(set(ids) - removed)
        target = ids[rng.choice(keep)]
        body: dict[str, Any] = {"position": rng.randint(1, 15)}
        return requests.put(item_url(base, me, target), json=body, headers=me.headers).status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(job, range(85)))
    assert statuses[:25] == [201] * 20 + [204] * 5
    assert set(statuses[25:]) == {200}
    final = ordered(sessions, me.default_collection)
    assert sorted(final) == sorted(set(works) - removed)
    wait_until_idle(resource_server)


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_items_need_a_user_token(
    resource_server: LiveServer,
    pair: tuple[Caller, Caller],
    sessions: sessionmaker[Session],
    stores: Stores,
    method: str,
) -> None:
    me, _ = pair
    base = resource_server.url
    (work,) = add_artworks(sessions, 1)
    item = add(base, me, work).json()["id"]
    headers = xapp_headers(sessions, stores)
    scope = f"collection_id={me.default_collection}&user_id={me.id}"
    urls = [item_url(base, me, item)]
    if method == "GET":
        urls.append(f"{base}/api/collection_items?{scope}")
    for url in urls:
        r = requests.request(method, url, json={"position": 1}, headers=headers, timeout=30)
        assert r.status_code == 401 and r.json()["type"] == "auth_error"
    head = requests.head(f"{base}/api/collection_items?{scope}", headers=me.headers, timeout=30)
    assert head.status_code == 200 and head.content == b""
    assert positions(sessions, me.default_collection) == {work: 1}
