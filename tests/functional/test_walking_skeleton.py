"""The walking skeleton over real HTTP: XAPP token, root, artists list and item."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from sqlalchemy.orm import Session, sessionmaker

from tests import factories
from tests.functional.process_support import xapp_token
from tests.servers import LiveServer

INVALID = {"type": "auth_error", "message": "The access token is invalid or has expired."}


def add_artists(sessions: sessionmaker[Session], n: int) -> list[str]:
    """Add ``n`` artists and return their ids."""
    with sessions() as s, s.begin():
        return [factories.artist(s).id for _ in range(n)]


@pytest.mark.parametrize("how", ["query", "form", "json"])
def test_xapp_token_issued_from_form_or_json(
    auth_server: LiveServer, app_credentials: dict[str, str], how: str
) -> None:
    url = f"{auth_server.url}/api/tokens/xapp_token"
    kwargs: dict[str, Any] = {
        # The client id may stay in the query string; the secret may not (it would be logged).
        "query": {"params": {"client_id": app_credentials["client_id"]}, "data": app_credentials},
        "form": {"data": app_credentials},
        "json": {"json": app_credentials},
    }[how]
    r = requests.post(url, timeout=10, **kwargs)
    assert r.status_code == 201
    body = r.json()
    assert list(body) == ["type", "token", "expires_at", "_links"]
    assert body["type"] == "xapp_token" and body["_links"] == {}
    assert len(body["token"]) >= 43  # 256 bits, URL-safe base64
    expires = datetime.strptime(body["expires_at"], "%Y-%m-%dT%H:%M:%S+00:00").replace(tzinfo=UTC)
    assert abs(expires - datetime.now(UTC) - timedelta(days=7)) < timedelta(minutes=1)
    assert r.headers["Cache-Control"] == "no-store"


def test_xapp_token_errors(auth_server: LiveServer, app_credentials: dict[str, str]) -> None:
    url = f"{auth_server.url}/api/tokens/xapp_token"
    bad = requests.post(url, data={**app_credentials, "client_secret": "wrong"}, timeout=10)
    assert bad.status_code == 401 and bad.json()["type"] == "auth_error"
    unknown = requests.post(url, data={"client_id": "nope", "client_secret": "x"}, timeout=10)
    assert unknown.status_code == 401
    missing = requests.post(url, data={"client_id": app_credentials["client_id"]}, timeout=10)
    assert missing.status_code == 400
    assert missing.json() == {
        "type": "param_error",
        "message": "Client secret can't be blank.",
        "detail": {"client_secret": ["can't be blank"]},
    }
    odd = requests.post(url, data="x=y", headers={"Content-Type": "invalid/type"}, timeout=10)
    assert odd.status_code == 406
    assert odd.json() == {"error": "The requested content-type 'invalid/type' is not supported."}


def test_root_needs_no_token_and_templates_expand(resource_server: LiveServer) -> None:
    r = requests.get(f"{resource_server.url}/api", timeout=10)
    assert r.status_code == 200
    links = r.json()["_links"]
    assert links["self"]["href"] == f"{resource_server.url}/api"
    assert links["artists"]["templated"] is True
    assert links["artists"]["href"].startswith(f"{resource_server.url}/api/artists{{?")
    assert "cursor" in links["artists"]["href"] and "total_count" in links["artists"]["href"]
    assert links["artist"] == {
        "href": f"{resource_server.url}/api/artists/{{id}}",
        "templated": True,
    }


def test_artists_need_a_valid_token(resource_server: LiveServer) -> None:
    url = f"{resource_server.url}/api/artists"
    assert requests.get(url, timeout=10).json() == INVALID
    r = requests.get(url, headers={"X-Xapp-Token": "garbage"}, timeout=10)
    assert r.status_code == 401 and r.json() == INVALID


def test_every_artist_reachable_by_next_links(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_credentials: dict[str, str],
    sessions: Any,
) -> None:
    ids = add_artists(sessions, 13)
    token = xapp_token(auth_server, app_credentials)
    seen: list[str] = []
    url: str | None = f"{resource_server.url}/api/artists?size=4&total_count=1"
    pages = 0
    while url:
        r = requests.get(url, headers={"X-XAPP-TOKEN": token}, timeout=10)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["total_count"] == 13
        seen += [a["id"] for a in body["_embedded"]["artists"]]
        url = body["_links"].get("next", {}).get("href")
        pages += 1
    assert pages == 4
    assert sorted(seen) == sorted(ids) and len(seen) == len(set(seen))


def test_artist_item_fields_links_and_slug(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_credentials: dict[str, str],
    sessions: Any,
) -> None:
    with sessions() as s, s.begin():
        a = factories.artist(s, slug="claude-monet", name="Claude Monet", location=None)
        artist_id = a.id
    h = {"Authorization": f"Bearer {xapp_token(auth_server, app_credentials)}"}
    base = resource_server.url
    r = requests.get(f"{base}/api/artists/{artist_id}", headers=h, timeout=10)
    body = r.json()
    assert list(body)[:4] == ["id", "slug", "created_at", "updated_at"]
    for field in (
        "name",
        "sortable_name",
        "gender",
        "biography",
        "birthday",
        "deathday",
        "hometown",
        "location",
        "nationality",
        "image_versions",
        "_links",
    ):
        assert field in body
    assert body["location"] is None
    links = body["_links"]
    assert links["self"]["href"] == f"{base}/api/artists/{artist_id}"
    assert links["image"]["templated"] is True and "{image_version}" in links["image"]["href"]
    assert links["thumbnail"]["href"].endswith("/four_thirds.jpg")
    assert links["artworks"]["href"] == f"{base}/api/artworks?artist_id={artist_id}"
    assert links["published_artworks"]["href"] == (
        f"{base}/api/artworks?artist_id={artist_id}&published=true"
    )
    assert links["similar_contemporary_artists"]["href"] == (
        f"{base}/api/artists?similar_to_artist_id={artist_id}&similarity_type=contemporary"
    )
    slug = requests.get(
        f"{base}/api/artists/claude-monet", headers=h, allow_redirects=False, timeout=10
    )
    assert slug.status_code == 302 and slug.headers["Location"] == f"{base}/api/artists/{artist_id}"
    missing = requests.get(f"{base}/api/artists/{'0' * 24}", headers=h, timeout=10)
    assert missing.status_code == 404
    assert missing.json() == {"type": "other_error", "message": "Artist Not Found"}


def test_paging_parameters(
    auth_server: LiveServer,
    resource_server: LiveServer,
    app_credentials: dict[str, str],
    sessions: Any,
) -> None:
    ids = add_artists(sessions, 3)
    h = {"X-Xapp-Token": xapp_token(auth_server, app_credentials)}
    url = f"{resource_server.url}/api/artists"

    def get(query: str) -> requests.Response:
        return requests.get(f"{url}?{query}", headers=h, allow_redirects=False, timeout=10)

    first = get("size=1").json()
    assert first["total_count"] is None and "next" in first["_links"]
    assert first["_links"]["self"]["href"] == f"{url}?size=1"
    cursor = first["_links"]["next"]["href"].split("cursor=")[1].split("&")[0]
    both = get(f"cursor={cursor}&offset=1")
    assert both.status_code == 400 and both.json()["type"] == "param_error"
    for bad in ("size=0", "size=101", "size=abc", "offset=-1", "cursor=%%%", "total_count=maybe"):
        r = get(bad)
        assert r.status_code == 400, bad
        assert r.json()["type"] == "param_error"
        assert set(r.json()["detail"]) <= {"size", "offset", "cursor", "total_count"}
    offset = get("offset=2&size=5").json()
    assert len(offset["_embedded"]["artists"]) == 1 and "next" not in offset["_links"]
    empty = get(f"artwork_id={'a' * 24}").json()
    assert empty == {
        "total_count": None,
        "_links": {"self": {"href": f"{url}?artwork_id={'a' * 24}"}},
        "_embedded": {"artists": []},
    }
    sample = get("sample=1")
    assert sample.status_code == 302
    assert sample.headers["Location"].rsplit("/", 1)[1] in ids
    assert get("unknown_param=1").status_code == 200


def test_combined_server_routes_both_services(
    combined_server: LiveServer, app_credentials: dict[str, str]
) -> None:
    token = xapp_token(combined_server, app_credentials)
    r = requests.get(
        f"{combined_server.url}/api/artists", headers={"X-Access-Token": token}, timeout=10
    )
    assert r.status_code == 200 and r.json()["_embedded"] == {"artists": []}


def test_health_and_readiness_on_both_services(
    auth_server: LiveServer, resource_server: LiveServer
) -> None:
    for live in (auth_server, resource_server):
        assert requests.get(f"{live.url}/healthz", timeout=10).json() == {"status": "ok"}
        ready = requests.get(f"{live.url}/readyz", timeout=10)
        assert ready.status_code == 200
        assert ready.json()["checks"] == {"database": "ok", "redis": "ok"}
