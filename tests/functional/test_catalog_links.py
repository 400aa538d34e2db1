"""No dangling links: from the root, follow every link and expanded template of the catalog."""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from sqlalchemy import func, select
from uritemplate import URITemplate

from common.models import (
    Artist,
    Artwork,
    Edition,
    Fair,
    Gene,
    Image,
    Partner,
    Profile,
    Sale,
    SaleArtwork,
    Show,
)
from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.app import create_app
from resource_server.schedule import STATUSES
from tests.functional.catalog_support import Catalog
from tests.functional.in_process import serve_in_process

pytestmark = pytest.mark.functional

# The root rels of this catalog work; rels added by other routes are walked by their own tests.
ITEM_MODELS = {
    "artist": Artist, "artwork": Artwork, "edition": Edition, "gene": Gene, "show": Show,
    "partner": Partner, "sale": Sale, "sale_artwork": SaleArtwork, "fair": Fair,
    "profile": Profile, "image": Image,
}  # fmt: skip
COLLECTIONS = {
    "artists", "artworks", "editions", "genes", "shows", "partners", "sales", "sale_artworks",
    "fairs", "profiles", "images",
}  # fmt: skip
PLAIN = {"self", "status"}


# A smaller demo catalog: the walk follows every link of every item.
DEMO_ARTWORKS = 40


def first_id(catalog: Catalog, column: Any, *where: Any) -> str:
    """Return the id with the most rows in ``column`` (ties by id)."""
    stmt = select(column).where(column.is_not(None), *where).group_by(column)
    return str(catalog.scalars(stmt.order_by(func.count().desc(), column).limit(1))[0])


def values(catalog: Catalog) -> dict[str, list[str]]:
    """Return the values to expand each template variable with, from the demo data."""
    artwork = first_id(catalog, Edition.artwork_id)
    return {
        "artist_id": [first_id(catalog, Artist.id)],
        "artwork_id": [artwork],
        "partner_id": [first_id(catalog, Artwork.partner_id)],
        "show_id": [first_id(catalog, Image.show_id)],
        "gene_id": [first_id(catalog, Gene.id)],
        "fair_id": [first_id(catalog, Show.fair_id)],
        "sale_id": [first_id(catalog, SaleArtwork.sale_id, SaleArtwork.sale_id.in_(
            select(Sale.id).where(Sale.published.is_(True))
        ))],
        "user_id": [catalog.user_id],
        "similar_to_artist_id": [first_id(catalog, Artist.id)],
        "similar_to_artwork_id": [artwork],
        "similarity_type": ["default", "contemporary"],
        "status": list(STATUSES),
        "total_count": ["1"],
        "size": ["3"],
        "offset": ["1"],
        "sample": ["1"],
    }  # fmt: skip


def expansions(catalog: Catalog, rel: str, template: str) -> Iterator[str]:
    """Yield the URLs of a root template: bare, then with each variable set in turn."""
    names = list(URITemplate(template).variable_names)
    given = values(catalog)
    if rel in ITEM_MODELS:
        model = ITEM_MODELS[rel]
        row = catalog.scalars(select(model).order_by(model.id).limit(1))[0]
        extra = {"artwork_id": row.artwork_id} if rel == "edition" else {}
        yield URITemplate(template).expand(id=row.id, **extra)
        return
    required = {"editions": "artwork_id", "images": "show_id"}.get(rel)
    base = {required: given[required][0]} if required else {}
    yield URITemplate(template).expand(**base)
    for name in names:
        for value in given.get(name, []):
            yield URITemplate(template).expand(**{**base, name: value})


def links_in(doc: Any) -> Iterator[dict[str, Any]]:
    """Yield every link object of a HAL document, embedded ones included."""
    if isinstance(doc, dict):
        for link in (doc.get("_links") or {}).values():
            yield from link if isinstance(link, list) else [link]
        for embedded in (doc.get("_embedded") or {}).values():
            for item in embedded if isinstance(embedded, list) else [embedded]:
                yield from links_in(item)


def hrefs_of(link: dict[str, Any]) -> list[str]:
    """Return the URLs a link leads to (templated links expanded with and without variables)."""
    href = str(link["href"])
    if not link.get("templated"):
        return [href]
    template = URITemplate(href)
    out = [template.expand()]
    out += [template.expand(**{name: "true"}) for name in template.variable_names]
    return out


USER_ROUTES = (
    "/api/users",
    "/api/user_details",
    "/api/bidders",
    "/api/collections",
    "/api/collection_items",
    "/api/current_user",
)


def walk(catalog: Catalog, headers: dict[str, str]) -> tuple[int, list[tuple[str, int]]]:
    """Follow every catalog link reachable from the root; return (visited, failures)."""
    api = catalog.api("")
    root = requests.get(api, timeout=10)
    assert root.status_code == 200
    queue: deque[str] = deque()
    for rel, link in root.json()["_links"].items():
        if rel in PLAIN:
            queue.append(link["href"])
        elif rel in ITEM_MODELS or rel in COLLECTIONS:
            queue.extend(expansions(catalog, rel, link["href"]))
    seen: set[str] = {api}  # the root's templates are expanded above, with real values
    failures: list[tuple[str, int]] = []
    while queue:
        url = queue.popleft()
        if url in seen or not url.startswith(api):
            continue
        seen.add(url)
        # User-token routes (the sales list, users, bidders, collections) are read by the XAPP
        # walk as the demo user: the authorized caller for them.
        path = urlsplit(url).path
        user_only = path == "/api/sales" or path.startswith(USER_ROUTES)
        h = catalog.user if user_only and headers is catalog.xapp else headers
        r = catalog.get(url, h)
        if r.status_code == 302:
            location = r.headers["Location"]
            if not location.startswith(api):
                failures.append((url, 302))
            queue.append(location)
            continue
        if r.status_code != 200:
            failures.append((url, r.status_code))
            continue
        for link in links_in(r.json()):
            queue.extend(h for h in hrefs_of(link) if h.startswith(api))
    return len(seen), failures


@pytest.mark.parametrize("who", ["xapp", "admin"])
def test_every_link_and_template_answers(catalog: Catalog, who: str) -> None:
    visited, failures = walk(catalog, getattr(catalog, who))
    assert failures == []
    assert visited > 300


def test_the_root_templates_come_from_the_routes(catalog: Catalog) -> None:
    links = requests.get(catalog.api(""), timeout=10).json()["_links"]
    api = catalog.api("")
    paging = "total_count,size,cursor,offset,sample"
    assert links["artworks"]["href"] == (
        f"{api}/artworks{{?artist_id,partner_id,show_id,gene_id,similar_to_artwork_id,"
        f"published,collection_id,user_id,{paging}}}"
    )
    assert links["artists"]["href"].startswith(
        f"{api}/artists{{?artwork_id,similar_to_artist_id,similarity_type,"
    )
    assert links["edition"]["href"] == f"{api}/editions/{{id}}{{?artwork_id}}"
    assert links["shows"]["href"] == f"{api}/shows{{?partner_id,status,fair_id,{paging}}}"
    assert links["sales"]["href"] == f"{api}/sales{{?published,live,is_auction,{paging}}}"
    assert links["images"]["href"] == f"{api}/images{{?show_id,artwork_id,{paging}}}"
    for rel in ITEM_MODELS:
        assert links[rel]["templated"] is True and "/{id}" in links[rel]["href"]
    for rel in COLLECTIONS:
        assert links[rel]["templated"] is True


def test_permalinks_follow_the_web_url_else_our_pages(
    catalog: Catalog, resource_settings: ResourceSettings, stores: Stores
) -> None:
    web = "https://www.example.org"
    live = serve_in_process(create_app(dataclasses.replace(resource_settings, web_url=web), stores))
    try:
        with_web = dataclasses.replace(catalog, url=live.url)
        handles = {
            p.owner_id: p.handle
            for p in catalog.scalars(select(Profile).where(Profile.owner_type == "partner"))
        }
        expected = {
            "/artists": lambda i: f"{web}/artist/{i['slug']}",
            "/artworks": lambda i: f"{web}/artwork/{i['slug']}",
            "/partners": lambda i: f"{web}/{handles[i['id']]}",
            "/profiles": lambda i: f"{web}/{i['handle']}",
        }
        for path, permalink in expected.items():
            for item in with_web.ok(path, size=20)["_embedded"][path.strip("/")]:
                assert item["_links"]["permalink"]["href"] == permalink(item)
        for path, prefix in (("/genes", "/gene/"), ("/shows", "/show/"), ("/fairs", "/fair/")):
            item = with_web.ok(path)["_embedded"][path.strip("/")][0]
            assert item["_links"]["permalink"]["href"].startswith(web + prefix)
        sale = with_web.ok("/sales", catalog.user)["_embedded"]["sales"][0]
        kind = "auction" if sale["is_auction"] else "sale"
        assert sale["_links"]["permalink"]["href"] == f"{web}/{kind}/{sale['slug']}"
        # Without WEB_URL: this server's own pages, which answer; kinds without one have none.
        pages = {"/artists": "artist", "/artworks": "artwork", "/partners": "partner",
                 "/genes": "gene", "/shows": "show", "/profiles": "profile"}  # fmt: skip
        for path, kind in pages.items():
            item = catalog.ok(path)["_embedded"][path.strip("/")][0]
            href = item["_links"]["permalink"]["href"]
            assert href.startswith(f"{catalog.url}/{kind}/")
            assert "slug" not in item or href.endswith(f"/{item['slug']}")
            assert "handle" not in item or href.endswith(f"/{item['handle']}")
            assert requests.get(href, timeout=20).status_code == 200
        for path in ("/fairs",):
            item = catalog.ok(path)["_embedded"][path.strip("/")][0]
            assert "permalink" not in item["_links"]
    finally:
        live.stop()
