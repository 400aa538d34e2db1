"""Bidders over real HTTP: a user sees its own registrations, an Admin sees all of them."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from common.ids import new_id
from common.models import Bidder
from common.settings import Settings
from common.stores import Stores
from tests.functional.user_api_support import (
    TIMEOUT,
    add_sale,
    count_queries,
    make_caller,
    walk,
    xapp_headers,
)
from tests.servers import LiveServer


@pytest.fixture
def sales_and_bidders(
    clean_db: Engine, sessions: sessionmaker[Session], stores: Stores, base_settings: Settings
) -> dict[str, Any]:
    """Three sales; a bidder registered in all three, another in one; an Admin."""
    me = make_caller(sessions, stores, base_settings)
    other = make_caller(sessions, stores, base_settings)
    admin = make_caller(sessions, stores, base_settings, admin=True)
    sales = [add_sale(sessions) for _ in range(3)]
    mine, theirs = [], []
    with sessions() as s, s.begin():
        for n, sale in enumerate(sales):
            row = Bidder(id=new_id(), sale_id=sale, user_id=me.id, pin="1234")
            row.qualified_for_bidding = n != 1
            s.add(row)
            mine.append(row.id)
        row = Bidder(id=new_id(), sale_id=sales[0], user_id=other.id, pin="9999")
        s.add(row)
        theirs.append(row.id)
    return {
        "me": me,
        "other": other,
        "admin": admin,
        "sales": sales,
        "mine": mine,
        "theirs": theirs,
    }


def ids(body: dict[str, Any]) -> list[str]:
    """Return the ids of the bidders of a page."""
    return [b["id"] for b in body["_embedded"]["bidders"]]


def test_bidders_need_a_user_token(
    resource_server: LiveServer,
    sales_and_bidders: dict[str, Any],
    sessions: sessionmaker[Session],
    stores: Stores,
) -> None:
    headers = xapp_headers(sessions, stores)
    for path in ("/api/bidders", f"/api/bidders/{sales_and_bidders['mine'][0]}"):
        r = requests.get(resource_server.url + path, headers=headers, timeout=TIMEOUT)
        assert r.status_code == 401 and r.json()["type"] == "auth_error"


def test_a_user_lists_its_own_registrations(
    resource_server: LiveServer, sales_and_bidders: dict[str, Any]
) -> None:
    me, base = sales_and_bidders["me"], resource_server.url
    body = requests.get(f"{base}/api/bidders", headers=me.headers, timeout=TIMEOUT).json()
    assert sorted(ids(body)) == sorted(sales_and_bidders["mine"])
    one = next(b for b in body["_embedded"]["bidders"] if b["id"] == sales_and_bidders["mine"][1])
    sale = sales_and_bidders["sales"][1]
    assert one == {
        "id": sales_and_bidders["mine"][1],
        "created_at": one["created_at"],
        "updated_at": one["updated_at"],
        "qualified_for_bidding": False,
        "_links": {
            "self": {"href": f"{base}/api/bidders/{sales_and_bidders['mine'][1]}"},
            "sale": {"href": f"{base}/api/sales/{sale}"},
            "user": {"href": f"{base}/api/users/{me.id}"},
            "user_detail": {"href": f"{base}/api/user_details/{me.id}"},
        },
    }
    by_sale = f"{base}/api/bidders?sale_id={sale}"
    body = requests.get(by_sale, headers=me.headers, timeout=TIMEOUT).json()
    assert ids(body) == [sales_and_bidders["mine"][1]]
    assert body["_links"] == {"self": {"href": by_sale}}
    theirs = requests.get(
        f"{base}/api/bidders?sale_id={sales_and_bidders['sales'][2]}",
        headers=sales_and_bidders["other"].headers,
    ).json()
    assert theirs["_embedded"] == {"bidders": []} and theirs["total_count"] is None


def test_an_admin_sees_every_registration(
    resource_server: LiveServer, sales_and_bidders: dict[str, Any]
) -> None:
    admin, base = sales_and_bidders["admin"], resource_server.url
    url = f"{base}/api/bidders?size=2&total_count=1"
    items, pages = walk(url, admin.headers, "bidders")
    assert pages == 2
    assert sorted(b["id"] for b in items) == sorted(
        sales_and_bidders["mine"] + sales_and_bidders["theirs"]
    )
    assert all("user_detail" not in b["_links"] for b in items)
    first = requests.get(url, headers=admin.headers, timeout=TIMEOUT).json()
    assert first["total_count"] == 4
    assert first["_links"]["next"]["href"].startswith(f"{base}/api/bidders?cursor=")
    other = sales_and_bidders["other"].id
    filtered = requests.get(f"{base}/api/bidders?user_id={other}", headers=admin.headers).json()
    assert ids(filtered) == sales_and_bidders["theirs"]
    r = requests.get(f"{base}/api/bidders/{sales_and_bidders['theirs'][0]}", headers=admin.headers)
    assert r.status_code == 200 and "user_detail" not in r.json()["_links"]


def test_bidder_item_for_its_owner_or_an_admin(
    resource_server: LiveServer, sales_and_bidders: dict[str, Any]
) -> None:
    base, bidder = resource_server.url, sales_and_bidders["mine"][0]
    r = requests.get(
        f"{base}/api/bidders/{bidder}", headers=sales_and_bidders["me"].headers, timeout=30
    )
    assert r.status_code == 200
    assert list(r.json()) == ["id", "created_at", "updated_at", "qualified_for_bidding", "_links"]
    assert "pin" not in r.text
    for path in (bidder, "0123456789abcdef01234567", "not-an-id"):
        r = requests.get(f"{base}/api/bidders/{path}", headers=sales_and_bidders["other"].headers)
        assert r.status_code == 404
        assert r.json() == {"type": "other_error", "message": "Bidder Not Found"}


def test_sample_errors_and_query_count(
    resource_server: LiveServer, sales_and_bidders: dict[str, Any], engine: Engine
) -> None:
    me, base = sales_and_bidders["me"], resource_server.url
    r = requests.get(
        f"{base}/api/bidders?sample=1", headers=me.headers, allow_redirects=False, timeout=30
    )
    assert (
        r.status_code == 302
        and r.headers["Location"].rsplit("/", 1)[1] in sales_and_bidders["mine"]
    )
    for query in ("sale_id=x", "size=abc", "offset=-1", "total_count=maybe"):
        r = requests.get(f"{base}/api/bidders?{query}", headers=me.headers, timeout=TIMEOUT)
        assert r.status_code == 400 and r.json()["type"] == "param_error", query
    url = f"{base}/api/bidders?size=100&total_count=1"
    assert requests.get(url, headers=sales_and_bidders["admin"].headers).status_code == 200
    with count_queries(engine) as statements:
        r = requests.get(url, headers=sales_and_bidders["admin"].headers, timeout=TIMEOUT)
    assert len(r.json()["_embedded"]["bidders"]) == 4
    assert len(statements) <= 3, statements


def test_root_links_bidders(resource_server: LiveServer) -> None:
    links = requests.get(f"{resource_server.url}/api", timeout=TIMEOUT).json()["_links"]
    api = f"{resource_server.url}/api"
    assert links["bidders"]["href"] == (
        f"{api}/bidders{{?sale_id,user_id,total_count,size,cursor,offset,sample}}"
    )
    assert links["bidder"] == {"href": f"{api}/bidders/{{id}}", "templated": True}
