"""The catalog's images over HTTP: the demo's pictures drawn by the instance, the API's image
links to the instance's copies once mirrored, the placeholder, and the pages' fallback."""

from __future__ import annotations

import io
import re
from html import unescape

import pytest
import requests
from PIL import Image
from sqlalchemy import Engine, select, update

from artcat.image_download import FetchOptions
from artcat.image_fetch import fetch_images
from common.images.store import open_store
from common.images.versions import BOXES
from common.models import Artwork
from common.settings import Settings
from tests.functional.catalog_support import Catalog
from tests.functional.museum_support import PUBLISHED, museum

pytestmark = pytest.mark.functional

DEMO_ARTWORKS = 30


def an_artwork(catalog: Catalog) -> Artwork:
    """Return the first published artwork with an image."""
    with catalog.sessions() as s:
        row = s.scalars(
            select(Artwork)
            .where(Artwork.published.is_(True), Artwork.image_url.is_not(None))
            .order_by(Artwork.id)
            .limit(1)
        ).one()
    return row


def get(url: str, **headers: str) -> requests.Response:
    """GET a URL of the catalog (no token: images are public)."""
    return requests.get(url, headers=headers, timeout=20, allow_redirects=False)


def test_the_demo_images_are_drawn_and_served_by_the_instance(catalog: Catalog) -> None:
    work = an_artwork(catalog)
    doc = catalog.ok(f"/artworks/{work.id}")
    template = doc["_links"]["image"]["href"]
    assert re.fullmatch(
        re.escape(catalog.url) + r"/images/demo-[A-Za-z0-9_-]+/\{image_version\}\.jpg", template
    )
    assert doc["_links"]["thumbnail"]["href"] == template.replace("{image_version}", "medium")
    for version in doc["image_versions"]:
        r = get(template.replace("{image_version}", version))
        assert r.status_code == 200 and r.headers["Content-Type"] == "image/jpeg", version
        width, height = Image.open(io.BytesIO(r.content)).size
        box = BOXES[version]
        assert width <= box[0] and height <= box[1] and box in {(width, box[1]), (box[0], height)}
        assert "immutable" in r.headers["Cache-Control"]
        again = get(template.replace("{image_version}", version))
        assert again.content == r.content and again.headers["ETag"] == r.headers["ETag"]
        cached = get(
            template.replace("{image_version}", version), **{"If-None-Match": r.headers["ETag"]}
        )
        assert cached.status_code == 304 and not cached.content
    # A version the API does not list is not drawn.
    assert get(template.replace("{image_version}", "huge")).status_code == 404


def test_an_artwork_the_museum_no_longer_serves_shows_the_placeholder(catalog: Catalog) -> None:
    work = an_artwork(catalog)
    r = get(f"{catalog.url}/images/placeholder-{work.id}/large.svg")
    assert r.status_code == 200 and r.headers["Content-Type"] == "image/svg+xml"
    assert "default-src 'none'" in r.headers["Content-Security-Policy"]
    assert r.headers["ETag"] and "immutable" not in r.headers["Cache-Control"]
    assert (work.title or "Untitled").replace("&", "&amp;") in r.text
    assert get(r.url, **{"If-None-Match": r.headers["ETag"]}).status_code == 304
    # A title is text in the SVG, never markup; an unpublished artwork's title is not shown.
    with catalog.sessions() as s, s.begin():
        s.execute(
            update(Artwork).where(Artwork.id == work.id).values(title="<script>alert(1)</script>")
        )
    hostile = get(f"{catalog.url}/images/placeholder-{work.id}/medium.svg").text
    assert "<script>" not in hostile and "&lt;script&gt;" in hostile
    with catalog.sessions() as s, s.begin():
        s.execute(update(Artwork).where(Artwork.id == work.id).values(published=False))
    hidden = get(f"{catalog.url}/images/placeholder-{work.id}/medium.svg")
    assert hidden.status_code == 200 and "<svg" in hidden.text and "<text" not in hidden.text
    plain = get(f"{catalog.url}/images/placeholder/medium.svg")
    assert plain.status_code == 200 and "<text" not in plain.text
    assert get(f"{catalog.url}/images/placeholder-nothex/medium.svg").status_code == 404


def test_the_api_links_to_the_mirrored_copy(
    catalog: Catalog, engine: Engine, base_settings: Settings
) -> None:
    work = an_artwork(catalog)
    versions = ["medium", "large", "larger"]
    with catalog.sessions() as s, s.begin():
        s.execute(
            update(Artwork)
            .where(Artwork.id == work.id)
            .values(
                image_url=f"{PUBLISHED}good-jpeg/{{image_version}}.jpg", image_versions=versions
            )
        )
    catalog.bump()
    before = catalog.ok(f"/artworks/{work.id}")["_links"]["image"]["href"]
    assert before.startswith(PUBLISHED)
    with museum() as stand_in:
        options = FetchOptions(rewrites=((PUBLISHED, stand_in.url),), progress=False, timeout=2)
        report = fetch_images(engine, open_store(base_settings), options)
    assert report.mirrored == 1, report.summary()
    catalog.bump()  # as the command does
    doc = catalog.ok(f"/artworks/{work.id}")
    template = doc["_links"]["image"]["href"]
    assert re.fullmatch(
        re.escape(catalog.url) + r"/images/[0-9a-f]{32}/\{image_version\}\.jpg", template
    )
    assert doc["image_versions"] == versions
    sizes = {v: Image.open(io.BytesIO(get(template.replace("{image_version}", v)).content)).size
             for v in versions}  # fmt: skip
    assert sizes == {"medium": (260, 195), "large": (640, 480), "larger": (800, 600)}
    # The page shows the copy, with the placeholder to fall back on.
    html = unescape(requests.get(f"{catalog.url}/artwork/{work.id}", timeout=20).text)
    img = re.search(r"<figure>\s*<img [^>]+>", html)
    assert img is not None
    assert f'src="/images/{template.split("/")[-2]}/larger.jpg"' in img.group(0)
    assert f'data-fallback="/images/placeholder-{work.id}/large.svg"' in img.group(0)
    assert '<script src="/static/images.js" defer></script>' in html
    script = get(f"{catalog.url}/static/images.js")
    assert script.status_code == 200 and "data-fallback" in script.text


def test_search_results_link_to_the_instances_images(catalog: Catalog) -> None:
    work = an_artwork(catalog)
    found = catalog.ok("/search", q=work.title, type="artwork", size=10)
    thumbnails = [
        r["_links"]["thumbnail"]["href"]
        for r in found["_embedded"]["results"]
        if "thumbnail" in r["_links"]
    ]
    assert thumbnails, found
    for href in thumbnails:
        assert href.startswith(f"{catalog.url}/images/demo-"), href
        assert get(href).status_code == 200
