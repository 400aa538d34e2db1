"""Malformed requests to every catalog route: 4xx with the API's envelope, never a 5xx."""

from __future__ import annotations

import pytest
import requests

from common.api.paging import encode_cursor
from tests.functional.catalog_support import Catalog

pytestmark = pytest.mark.functional

LISTS = [
    "/artists", "/artworks", "/editions", "/genes", "/shows", "/partners", "/sales",
    "/sale_artworks", "/fairs", "/profiles", "/images",
]  # fmt: skip
ODD_IDS = ["%00", "x" * 3000, "%E2%98%83", "..%2F..%2Fetc", "' OR 1=1 --", "A" * 24, "0" * 23]
ODD_QUERIES = [
    "artist_id=%00", "artwork_id=" + "f" * 25, "show_id=&show_id=zz", "status=RUNNING",
    "published=", "size=1e3", "size=99999999999999999999", "offset=1.5", "cursor=" + "A" * 5000,
    "cursor=WyJ4Il0&offset=", "sample=true&size=0", "user_id=' OR 1=1 --", "live=%FF",
    "similar_to_artist_id=" + "0" * 24 + "&similarity_type=", "is_auction=TRUE", "q=%",
    "cursor=" + encode_cursor(["\x00"]), "cursor=" + encode_cursor([1.5]),
    "cursor=" + encode_cursor(["a" * 24, "b" * 24]), "cursor=" + encode_cursor([None]),
]  # fmt: skip


def test_odd_item_ids_are_404_never_5xx(catalog: Catalog) -> None:
    for path in LISTS:
        for odd in ODD_IDS:
            r = requests.get(
                f"{catalog.api(path)}/{odd}?artwork_id={'0' * 24}",
                headers=catalog.admin,
                timeout=20,
            )
            assert r.status_code in (400, 404), (path, odd[:30], r.status_code, r.text[:200])
            assert r.json()["type"] in ("other_error", "param_error")


def test_odd_query_strings_are_4xx_or_200_never_5xx(catalog: Catalog) -> None:
    for path in LISTS:
        for query in ODD_QUERIES:
            r = requests.get(f"{catalog.api(path)}?{query}", headers=catalog.admin, timeout=20)
            assert r.status_code in (200, 302, 400, 404), (path, query[:40], r.status_code, r.text)
            if r.status_code == 400:
                body = r.json()
                assert body["type"] == "param_error" and body["detail"], (path, query[:40])


def test_head_and_options_on_every_route(catalog: Catalog) -> None:
    for path in LISTS:
        for url in (f"{catalog.api(path)}", f"{catalog.api(path)}/{'0' * 24}"):
            head = requests.head(url, headers=catalog.admin, timeout=10)
            assert head.status_code in (200, 400, 404) and head.content == b""
            options = requests.options(
                url,
                headers={
                    "Origin": "https://app.example.org",
                    "Access-Control-Request-Method": "GET",
                    "Access-Control-Request-Headers": "X-Xapp-Token",
                },
                timeout=10,
            )
            assert options.status_code == 200
            assert options.headers["Access-Control-Allow-Origin"] == "*"


def test_every_catalog_route_needs_a_token(catalog: Catalog) -> None:
    invalid = {"type": "auth_error", "message": "The access token is invalid or has expired."}
    for path in LISTS:
        for url in (catalog.api(path), f"{catalog.api(path)}/{'0' * 24}"):
            r = requests.get(url, timeout=10)
            assert r.status_code == 401 and r.json() == invalid, url


def test_a_parameter_given_twice_with_different_values_is_refused(catalog: Catalog) -> None:
    url = catalog.api("/editions")
    artwork = f"artwork_id={'0' * 24}"
    r = requests.get(f"{url}?{artwork}&size=5&size=", headers=catalog.admin, timeout=10)
    assert r.status_code == 400, r.text
    assert r.json()["detail"] == {"size": ["is given more than once"]}
    same = requests.get(f"{url}?{artwork}&size=5&size=5", headers=catalog.admin, timeout=10)
    assert same.status_code == 200, same.text
