"""Collections over real HTTP: list, show, create and update, with their rights and validation."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Collection
from common.settings import Settings
from common.stores import Stores
from tests.functional.user_api_support import (
    TIMEOUT,
    Caller,
    add,
    add_artworks,
    count_queries,
    item_url,
    make_caller,
    walk,
    xapp_headers,
)
from tests.servers import LiveServer


@pytest.fixture
def pair(
    clean_db: Engine, sessions: sessionmaker[Session], stores: Stores, base_settings: Settings
) -> tuple[Caller, Caller]:
    """Two users with access tokens (and their default collections)."""
    return (
        make_caller(sessions, stores, base_settings),
        make_caller(sessions, stores, base_settings),
    )


def create(base: str, who: Caller, **fields: Any) -> dict[str, Any]:
    """Create a collection over HTTP (JSON body) and return its representation."""
    r = requests.post(
        f"{base}/api/collections",
        json={"user_id": who.id, **fields},
        headers=who.headers,
        timeout=TIMEOUT,
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


def stored(sessions: sessionmaker[Session], collection_id: str) -> Collection:
    """Read a collection from the database."""
    with sessions() as s:
        row = s.scalar(select(Collection).where(Collection.id == collection_id))
        assert row is not None
        return row


def test_collections_need_a_user_token(
    resource_server: LiveServer,
    pair: tuple[Caller, Caller],
    sessions: sessionmaker[Session],
    stores: Stores,
) -> None:
    me, _ = pair
    headers = xapp_headers(sessions, stores)
    base = resource_server.url
    for method, path in (
        ("GET", f"/api/collections?user_id={me.id}"),
        ("GET", f"/api/collections/{me.default_collection}"),
        ("POST", "/api/collections"),
        ("PUT", f"/api/collections/{me.default_collection}"),
    ):
        r = requests.request(method, base + path, headers=headers, data={"name": "x"}, timeout=30)
        assert r.status_code == 401 and r.json()["type"] == "auth_error"
    assert stored(sessions, me.default_collection).name == "Saved Artwork"


def test_the_default_collection_is_private_and_listed_for_its_owner_only(
    resource_server: LiveServer, pair: tuple[Caller, Caller]
) -> None:
    me, other = pair
    base = resource_server.url
    url = f"{base}/api/collections?private=true&user_id={me.id}"
    mine = requests.get(url, headers=me.headers, timeout=TIMEOUT).json()
    assert [c["id"] for c in mine["_embedded"]["collections"]] == [me.default_collection]
    default = mine["_embedded"]["collections"][0]
    assert list(default) == [
        "id", "created_at", "updated_at", "name", "description", "default", "private", "_links",
    ]  # fmt: skip
    assert (default["name"], default["default"], default["private"]) == (
        "Saved Artwork",
        True,
        True,
    )
    scope = f"collection_id={me.default_collection}&user_id={me.id}"
    assert default["_links"] == {
        "self": {"href": f"{base}/api/collections/{me.default_collection}"},
        "user": {"href": f"{base}/api/users/{me.id}"},
        "artworks": {"href": f"{base}/api/artworks?{scope}"},
        "collection_items": {"href": f"{base}/api/collection_items?{scope}"},
    }
    assert mine["_links"]["self"]["href"] == url
    # Without private=true, and for anyone else, private collections are not listed.
    for who, query in ((me, ""), (other, "&private=true"), (other, "")):
        r = requests.get(
            f"{base}/api/collections?user_id={me.id}{query}", headers=who.headers, timeout=30
        )
        assert r.status_code == 200 and r.json()["_embedded"] == {"collections": []}


def test_user_id_is_required_and_checked(
    resource_server: LiveServer, pair: tuple[Caller, Caller]
) -> None:
    me, _ = pair
    url = f"{resource_server.url}/api/collections"
    r = requests.get(url, headers=me.headers, timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.json() == {
        "type": "param_error",
        "message": "User id can't be blank.",
        "detail": {"user_id": ["can't be blank"]},
    }
    for query in ("user_id=nope", f"user_id={me.id}&private=maybe", f"user_id={me.id}&size=x"):
        r = requests.get(f"{url}?{query}", headers=me.headers, timeout=TIMEOUT)
        assert r.status_code == 400 and r.json()["type"] == "param_error", query


@pytest.mark.parametrize("how", ["query", "form", "json"])
def test_create_from_query_form_or_json(
    resource_server: LiveServer, pair: tuple[Caller, Caller], how: str
) -> None:
    me, other = pair
    base = resource_server.url
    fields = {"user_id": me.id, "name": " Blue works ", "description": "Blue", "private": "true"}
    options: dict[str, dict[str, Any]] = {
        "query": {"params": fields},
        "form": {"data": fields},
        "json": {"json": {**fields, "private": True}},
    }
    kwargs = options[how]
    r = requests.post(f"{base}/api/collections", headers=me.headers, timeout=30, **kwargs)
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["name"], body["description"], body["default"], body["private"]) == (
        "Blue works",
        "Blue",
        False,
        True,
    )
    cid = body["id"]
    assert body["_links"]["self"]["href"] == f"{base}/api/collections/{cid}"
    shown = requests.get(f"{base}/api/collections/{cid}", headers=me.headers, timeout=TIMEOUT)
    assert shown.json() == body
    hidden = requests.get(f"{base}/api/collections/{cid}", headers=other.headers, timeout=30)
    assert hidden.status_code == 404
    assert hidden.json() == {"type": "other_error", "message": "Collection Not Found"}


def test_create_validation_errors_change_nothing(
    resource_server: LiveServer, pair: tuple[Caller, Caller], sessions: sessionmaker[Session]
) -> None:
    me, other = pair
    url = f"{resource_server.url}/api/collections"

    def post(**kwargs: Any) -> requests.Response:
        kwargs["headers"] = {**me.headers, **kwargs.get("headers", {})}
        return requests.post(url, timeout=TIMEOUT, **kwargs)

    r = post(json={"user_id": me.id, "name": "   "})
    assert r.status_code == 400
    assert r.json() == {
        "type": "param_error",
        "message": "Name can't be blank.",
        "detail": {"name": ["can't be blank"]},
    }
    r = post(data={"private": "perhaps"})
    assert r.json() == {
        "type": "param_error",
        "message": "User id can't be blank, Name can't be blank, Private must be true or false.",
        "detail": {
            "user_id": ["can't be blank"],
            "name": ["can't be blank"],
            "private": ["must be true or false"],
        },
    }
    assert post(json={"user_id": me.id, "name": ["a", "b"]}).status_code == 400
    assert post(json={"user_id": me.id, "name": "x" * 201}).json()["detail"] == {
        "name": ["is too long (maximum is 200 characters)"]
    }
    assert post(json={"user_id": me.id, "name": "x", "default": True}).status_code == 400
    assert post(json={"user_id": me.id, "name": "a\x00b"}).json()["detail"] == {
        "name": ["contains a NUL byte"]
    }
    assert post(json=["not", "an", "object"]).status_code == 400
    broken = post(data="{not json", headers={"Content-Type": "application/json"})
    assert broken.status_code == 400 and broken.json()["type"] == "param_error"
    odd = post(data="name=x", headers={"Content-Type": "text/plain"})
    assert odd.status_code == 406
    assert odd.json() == {"error": "The requested content-type 'text/plain' is not supported."}
    theirs = post(json={"user_id": other.id, "name": "Not mine"})
    assert theirs.status_code == 403 and theirs.json()["type"] == "other_error"
    with sessions() as s:
        assert len(list(s.scalars(select(Collection)))) == 2  # the two default collections


def test_update_by_the_owner_only(
    resource_server: LiveServer, pair: tuple[Caller, Caller], sessions: sessionmaker[Session]
) -> None:
    me, other = pair
    base = resource_server.url
    public = create(base, me, name="Public")
    url = f"{base}/api/collections/{public['id']}"
    r = requests.put(url, data={"name": "Renamed", "private": "false"}, headers=me.headers)
    assert r.status_code == 200 and r.json()["name"] == "Renamed"
    r = requests.put(f"{url}?description=Described", headers=me.headers, timeout=TIMEOUT)
    assert r.json()["description"] == "Described" and r.json()["name"] == "Renamed"
    # Someone else's public collection is visible but not writable; a private one is not found.
    assert requests.put(url, json={"name": "Mine!"}, headers=other.headers).status_code == 403
    default_url = f"{base}/api/collections/{me.default_collection}"
    r = requests.put(default_url, json={"name": "Mine!"}, headers=other.headers, timeout=30)
    assert r.status_code == 404 and r.json()["message"] == "Collection Not Found"
    # The default collection stays the default; a failed update changes nothing.
    r = requests.put(default_url, json={"name": "Faves", "default": False}, headers=me.headers)
    assert r.status_code == 400
    assert r.json()["detail"] == {"default": ["can't be changed"]}
    assert requests.put(default_url, json={"name": ""}, headers=me.headers).status_code == 400
    assert stored(sessions, me.default_collection).name == "Saved Artwork"
    r = requests.put(default_url, json={"private": False, "default": True}, headers=me.headers)
    assert r.status_code == 200 and r.json()["private"] is False and r.json()["default"] is True
    r = requests.put(f"{default_url}?user_id={other.id}", json={"name": "x"}, headers=me.headers)
    assert r.status_code == 404
    missing = f"{base}/api/collections/0123456789abcdef01234567"
    assert requests.put(missing, json={"name": "x"}, headers=me.headers).status_code == 404
    assert requests.put(f"{base}/api/collections/x", headers=me.headers).status_code == 404


def test_show_checks_the_owner_and_privacy(
    resource_server: LiveServer, pair: tuple[Caller, Caller]
) -> None:
    me, other = pair
    base = resource_server.url
    public = create(base, me, name="Public")
    for who, query, status in (
        (other, "", 200),
        (other, f"?user_id={me.id}", 200),
        (other, f"?user_id={other.id}", 404),
        (me, "?user_id=bad", 400),
    ):
        r = requests.get(f"{base}/api/collections/{public['id']}{query}", headers=who.headers)
        assert r.status_code == status, (query, r.text)
    mine = requests.get(f"{base}/api/collections/{me.default_collection}", headers=me.headers)
    assert mine.status_code == 200
    for cid in (me.default_collection, "0123456789abcdef01234567", "saved-artwork"):
        r = requests.get(f"{base}/api/collections/{cid}", headers=other.headers, timeout=30)
        assert r.status_code == 404 and r.json()["message"] == "Collection Not Found"


def test_paging_sample_and_query_count(
    resource_server: LiveServer, pair: tuple[Caller, Caller], engine: Engine
) -> None:
    me, other = pair
    base = resource_server.url
    made = {create(base, me, name=f"C{n}")["id"] for n in range(7)}
    url = f"{base}/api/collections?size=3&total_count=1&user_id={me.id}"
    items, pages = walk(url, other.headers, "collections")
    assert pages == 3 and {c["id"] for c in items} == made and len(items) == 7
    first = requests.get(url, headers=other.headers, timeout=TIMEOUT).json()
    assert first["total_count"] == 7
    offset = requests.get(f"{url}&offset=5", headers=other.headers, timeout=TIMEOUT).json()
    assert [c["id"] for c in offset["_embedded"]["collections"]] == [i["id"] for i in items[5:]]
    r = requests.get(f"{url}&sample=1", headers=other.headers, allow_redirects=False, timeout=30)
    assert r.status_code == 302 and r.headers["Location"].rsplit("/", 1)[1] in made
    big = f"{base}/api/collections?size=100&total_count=1&private=true&user_id={me.id}"
    assert requests.get(big, headers=me.headers, timeout=TIMEOUT).status_code == 200
    with count_queries(engine) as statements:
        r = requests.get(big, headers=me.headers, timeout=TIMEOUT)
    assert len(r.json()["_embedded"]["collections"]) == 8
    assert len(statements) <= 3, statements


def test_root_links_collections(resource_server: LiveServer) -> None:
    links = requests.get(f"{resource_server.url}/api", timeout=TIMEOUT).json()["_links"]
    api = f"{resource_server.url}/api"
    assert links["collections"]["href"] == (
        f"{api}/collections{{?user_id,private,total_count,size,cursor,offset,sample}}"
    )
    assert links["collection"] == {
        "href": f"{api}/collections/{{id}}{{?user_id}}",
        "templated": True,
    }


def test_artworks_of_a_collection_in_position_order(
    resource_server: LiveServer,
    pair: tuple[Caller, Caller],
    sessions: sessionmaker[Session],
    stores: Stores,
    engine: Engine,
) -> None:
    me, other = pair
    base = resource_server.url
    works = add_artworks(sessions, 7)
    ids = {w: add(base, me, w).json()["id"] for w in works}
    r = requests.put(item_url(base, me, ids[works[6]]), json={"position": 1}, headers=me.headers)
    assert r.status_code == 200
    expected = [works[6], *works[:6]]
    scope = f"collection_id={me.default_collection}&user_id={me.id}"
    url = f"{base}/api/artworks?size=3&{scope}"
    found, pages = walk(url, me.headers, "artworks")
    assert [a["id"] for a in found] == expected and pages == 3
    # The default collection is private: hidden from others and from application tokens.
    for headers in (other.headers, xapp_headers(sessions, stores)):
        r = requests.get(url, headers=headers, timeout=TIMEOUT)
        assert r.status_code == 404 and r.json()["message"] == "Collection Not Found"
    r = requests.get(
        f"{base}/api/artworks?collection_id={me.default_collection}", headers=me.headers
    )
    assert r.status_code == 400 and r.json()["detail"] == {"user_id": ["can't be blank"]}
    r = requests.get(f"{url}&sample=1", headers=me.headers, allow_redirects=False, timeout=30)
    assert r.status_code == 302 and r.headers["Location"].rsplit("/", 1)[1] in works
    # A public collection is readable with an application token.
    public = requests.post(
        f"{base}/api/collections", json={"user_id": me.id, "name": "Open"}, headers=me.headers
    ).json()["id"]
    for w in works[:2]:
        assert add(base, me, w, collection=public).status_code == 201
    open_url = f"{base}/api/artworks?collection_id={public}&total_count=1&user_id={me.id}"
    body = requests.get(open_url, headers=xapp_headers(sessions, stores), timeout=TIMEOUT).json()
    assert [a["id"] for a in body["_embedded"]["artworks"]] == works[:2]
    assert body["total_count"] == 2 and body["_links"] == {"self": {"href": open_url}}
    big = f"{base}/api/artworks?size=100&total_count=1&{scope}"
    assert requests.get(big, headers=me.headers, timeout=TIMEOUT).status_code == 200
    with count_queries(engine) as statements:
        r = requests.get(big, headers=me.headers, timeout=TIMEOUT)
    assert len(r.json()["_embedded"]["artworks"]) == 7
    assert len(statements) <= 3, statements
