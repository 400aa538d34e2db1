"""Users, the current user and user details over real HTTP (user access tokens)."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from sqlalchemy import Engine, insert, select
from sqlalchemy.orm import Session, sessionmaker

from common.ids import new_id
from common.models import Collection, CollectionItem, Profile, UserDetail
from common.settings import Settings
from common.stores import Stores
from tests.functional.user_api_support import (
    TIMEOUT,
    Caller,
    add_artworks,
    count_queries,
    make_caller,
    walk,
    xapp_headers,
)
from tests.servers import LiveServer


def get(url: str, **kw: Any) -> requests.Response:
    """GET without following redirects."""
    return requests.get(url, allow_redirects=False, timeout=TIMEOUT, **kw)


INVALID = {"type": "auth_error", "message": "The access token is invalid or has expired."}


@pytest.fixture
def two_users(
    clean_db: Engine, sessions: sessionmaker[Session], stores: Stores, base_settings: Settings
) -> dict[str, Any]:
    """Two users with tokens (each with the profile every user has); the first has details."""
    me = make_caller(sessions, stores, base_settings, name="Ada Lovelace")
    other = make_caller(sessions, stores, base_settings, name="Grace Hopper")
    with sessions() as s, s.begin():
        found = s.execute(
            select(Profile.owner_id, Profile.id).where(
                Profile.owner_type == "user", Profile.owner_id.in_([me.id, other.id])
            )
        )
        profiles = {owner: profile for owner, profile in found}
        detail = s.get(UserDetail, me.id)
        assert detail is not None
        detail.birthday, detail.phone, detail.gender = "1815-12-10", "+44 20 0000", "female"
    return {"me": me, "other": other, "profile": profiles[me.id], "others": profiles[other.id]}


def collect(sessions: sessionmaker[Session], user: Caller, artwork: str, *, private: bool) -> None:
    """Put an artwork in a new collection of a user."""
    with sessions() as s, s.begin():
        cid = new_id()
        s.add(Collection(id=cid, user_id=user.id, name="Mine", private=private))
        s.flush()
        s.execute(
            insert(CollectionItem),
            [{"collection_id": cid, "artwork_id": artwork, "position": 1, "id": new_id()}],
        )


@pytest.mark.parametrize(
    "path", ["/api/users", "/api/users/{id}", "/api/current_user", "/api/user_details/{id}"]
)
def test_user_routes_need_a_user_token(
    resource_server: LiveServer,
    two_users: dict[str, Any],
    sessions: sessionmaker[Session],
    stores: Stores,
    path: str,
) -> None:
    url = resource_server.url + path.format(id=two_users["me"].id)
    r = requests.get(url, headers=xapp_headers(sessions, stores), timeout=TIMEOUT)
    assert r.status_code == 401 and r.json() == INVALID
    assert requests.get(url, timeout=TIMEOUT).json() == INVALID
    bad = requests.get(url, headers={"X-Access-Token": "nope"}, timeout=TIMEOUT)
    assert bad.status_code == 401


def test_another_user_shows_only_id_name_and_public_links(
    resource_server: LiveServer, two_users: dict[str, Any]
) -> None:
    me, other, base = two_users["me"], two_users["other"], resource_server.url
    r = requests.get(f"{base}/api/users/{me.id}", headers=other.headers, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {
        "id": me.id,
        "name": "Ada Lovelace",
        "_links": {
            "self": {"href": f"{base}/api/users/{me.id}"},
            "profile": {"href": f"{base}/api/profiles/{two_users['profile']}"},
            "collections": {"href": f"{base}/api/collections?user_id={me.id}"},
        },
    }
    # Every user has a profile from the start, and a readable one.
    r = requests.get(f"{base}/api/users/{other.id}", headers=me.headers, timeout=TIMEOUT)
    profile = r.json()["_links"]["profile"]["href"]
    assert profile == f"{base}/api/profiles/{two_users['others']}"
    shown = requests.get(profile, headers=me.headers, timeout=TIMEOUT).json()
    assert shown["handle"] == f"user-{other.id}"
    assert shown["_links"]["owner"]["href"] == f"{base}/api/users/{other.id}"


def test_a_user_reading_itself_sees_email_timestamps_and_details_link(
    resource_server: LiveServer, two_users: dict[str, Any]
) -> None:
    me, base = two_users["me"], resource_server.url
    body = requests.get(f"{base}/api/users/{me.id}", headers=me.headers, timeout=TIMEOUT).json()
    assert list(body) == [
        "id", "name", "email", "email_verified", "created_at", "updated_at", "_links",
    ]  # fmt: skip
    assert body["email"].endswith("@example.org")
    assert body["email_verified"] is False  # nobody proved the address
    assert body["created_at"].endswith("+00:00")
    assert body["_links"]["user_details"] == {"href": f"{base}/api/user_details/{me.id}"}


@pytest.mark.parametrize("user_id", ["0123456789abcdef01234567", "ada-lovelace", "x" * 300])
def test_unknown_user_is_404(
    resource_server: LiveServer, two_users: dict[str, Any], user_id: str
) -> None:
    r = requests.get(
        f"{resource_server.url}/api/users/{user_id}",
        headers=two_users["me"].headers,
        timeout=TIMEOUT,
    )
    assert r.status_code == 404
    assert r.json() == {"type": "other_error", "message": "User Not Found"}


def test_current_user_redirects_to_the_caller(
    resource_server: LiveServer, two_users: dict[str, Any]
) -> None:
    me, base = two_users["me"], resource_server.url
    r = get(f"{base}/api/current_user", headers=me.headers)
    assert r.status_code == 302
    assert r.headers["Location"] == f"{base}/api/users/{me.id}"
    assert r.json() == {"_links": {"location": {"href": f"{base}/api/users/{me.id}"}}}
    followed = requests.get(f"{base}/api/current_user", headers=me.headers, timeout=TIMEOUT)
    assert followed.status_code == 200 and followed.json()["email"]


def test_user_details_for_the_owner_only(
    resource_server: LiveServer, two_users: dict[str, Any]
) -> None:
    me, other, base = two_users["me"], two_users["other"], resource_server.url
    r = requests.get(f"{base}/api/user_details/{me.id}", headers=me.headers, timeout=TIMEOUT)
    assert r.status_code == 200
    body = r.json()
    assert list(body) == [
        "id", "created_at", "updated_at", "type", "email", "email_verified", "birthday", "phone",
        "gender", "_links",
    ]  # fmt: skip
    assert body["email_verified"] is False
    assert (body["id"], body["type"], body["birthday"], body["gender"]) == (
        me.id,
        "User",
        "1815-12-10",
        "female",
    )
    assert body["_links"] == {
        "self": {"href": f"{base}/api/user_details/{me.id}"},
        "user": {"href": f"{base}/api/users/{me.id}"},
        "partners": {"href": f"{base}/api/partners?user_id={me.id}"},
        "collections": {"href": f"{base}/api/collections?user_id={me.id}"},
    }
    for user_id in (me.id, "0123456789abcdef01234567", "garbage"):
        r = requests.get(
            f"{base}/api/user_details/{user_id}", headers=other.headers, timeout=TIMEOUT
        )
        assert r.status_code == 404
        assert r.json() == {"type": "other_error", "message": "User Detail Not Found"}


def test_collectors_of_an_artwork_are_those_with_it_in_a_public_collection(
    resource_server: LiveServer,
    two_users: dict[str, Any],
    sessions: sessionmaker[Session],
    stores: Stores,
    base_settings: Settings,
) -> None:
    me, other, base = two_users["me"], two_users["other"], resource_server.url
    artwork, lonely = add_artworks(sessions, 2)
    collectors = [make_caller(sessions, stores, base_settings) for _ in range(6)]
    for c in [*collectors, me]:
        collect(sessions, c, artwork, private=False)
    collect(sessions, other, artwork, private=True)  # private: not listed
    url = f"{base}/api/users?collected_artwork_id={artwork}&size=3&total_count=1"
    users, pages = walk(url, other.headers, "users")
    assert pages == 3
    assert sorted(u["id"] for u in users) == sorted([c.id for c in collectors] + [me.id])
    mine = next(u for u in users if u["id"] == me.id)
    assert mine["_links"]["profile"]["href"].endswith(two_users["profile"])
    assert "email" not in mine
    first = requests.get(url, headers=other.headers, timeout=TIMEOUT).json()
    assert first["total_count"] == 7
    assert first["_links"]["self"]["href"] == (
        f"{base}/api/users?collected_artwork_id={artwork}&size=3&total_count=1"
    )
    assert "cursor=" in first["_links"]["next"]["href"]
    empty = requests.get(
        f"{base}/api/users?collected_artwork_id={lonely}", headers=me.headers, timeout=TIMEOUT
    ).json()
    assert empty == {
        "total_count": None,
        "_links": {"self": {"href": f"{base}/api/users?collected_artwork_id={lonely}"}},
        "_embedded": {"users": []},
    }


def test_term_matches_a_name_prefix_case_insensitively(
    resource_server: LiveServer,
    two_users: dict[str, Any],
    sessions: sessionmaker[Session],
    stores: Stores,
    base_settings: Settings,
) -> None:
    me = two_users["me"]
    for name in ("Adam Smith", "100% Artist", "Ad_x"):
        make_caller(sessions, stores, base_settings, name=name)
    url = f"{resource_server.url}/api/users"

    def names(term: str) -> list[str]:
        r = requests.get(url, params={"term": term, "size": "100"}, headers=me.headers, timeout=30)
        assert r.status_code == 200, r.text
        return sorted(u["name"] for u in r.json()["_embedded"]["users"])

    assert names("ADA") == ["Ada Lovelace", "Adam Smith"]
    assert names("ad") == ["Ad_x", "Ada Lovelace", "Adam Smith"]
    assert names("100%") == ["100% Artist"]
    assert names("%") == []  # wildcards are matched literally
    assert names("ad_") == ["Ad_x"]
    assert names("zzz") == []


def test_sample_and_paging_errors(resource_server: LiveServer, two_users: dict[str, Any]) -> None:
    me, base = two_users["me"], resource_server.url
    r = get(f"{base}/api/users?sample=1", headers=me.headers)
    assert r.status_code == 302
    assert r.headers["Location"] in {f"{base}/api/users/{two_users[k].id}" for k in ("me", "other")}
    nobody = get(f"{base}/api/users?sample=1&term=zzz", headers=me.headers)
    assert nobody.status_code == 404
    for query, name in (
        ("collected_artwork_id=nope", "collected_artwork_id"),
        ("size=0", "size"),
        ("size=101", "size"),
        ("cursor=%%%", "cursor"),
        ("cursor=abc&offset=1", "cursor"),
        ("term=" + "x" * 501, "term"),
    ):
        r = get(f"{base}/api/users?{query}", headers=me.headers)
        assert r.status_code == 400, query
        assert r.json()["type"] == "param_error" and name in r.json()["detail"]


def test_a_users_page_costs_at_most_three_queries(
    resource_server: LiveServer,
    two_users: dict[str, Any],
    sessions: sessionmaker[Session],
    stores: Stores,
    base_settings: Settings,
    engine: Engine,
) -> None:
    for _ in range(30):
        make_caller(sessions, stores, base_settings)
    me = two_users["me"]
    url = f"{resource_server.url}/api/users?size=100&total_count=1"
    assert requests.get(url, headers=me.headers, timeout=TIMEOUT).status_code == 200  # warm-up
    with count_queries(engine) as statements:
        r = requests.get(url, headers=me.headers, timeout=TIMEOUT)
    assert r.status_code == 200 and len(r.json()["_embedded"]["users"]) == 32
    assert len(statements) <= 3, statements


def test_root_links_the_user_routes(resource_server: LiveServer) -> None:
    links = requests.get(f"{resource_server.url}/api", timeout=TIMEOUT).json()["_links"]
    base = f"{resource_server.url}/api"
    assert links["users"] == {
        "href": f"{base}/users{{?collected_artwork_id,term,total_count,size,cursor,offset,sample}}",
        "templated": True,
    }
    assert links["user"] == {"href": f"{base}/users/{{id}}", "templated": True}
    assert links["user_detail"] == {"href": f"{base}/user_details/{{id}}", "templated": True}
    assert links["current_user"] == {"href": f"{base}/current_user"}
