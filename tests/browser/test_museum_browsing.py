"""The catalog on real museum data in real Chromium, at a desktop's width and a phone's.

The Tate and Carnegie slices of ``tests/data`` are imported with the real loaders; each page
(the front door, the lists, a gene, an artist, an artwork, a search, sign-in, the account) is
shot at 1280 and at 390 pixels wide, and must not scroll sideways, show a broken image or
draw a Content-Security-Policy complaint.

The museums' images live on the museums' hosts, which the tests cannot reach: the browser is
answered for them with a stand-in PNG (Playwright's routing), so "no broken image" checks
that every img element the pages render is a loadable image at a working address, not that
the museum still serves it. Every other request off this server is refused, so a page that
depended on one would show it. Screenshots go to ``tmp/screenshots/museum/`` (git-ignored).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.tate import load_tate
from common.catalog_version import bump_catalog_version
from common.models import Artwork
from common.settings import Settings
from common.stores import Stores
from tests.constants import SAMPLE_DATA
from tests.db_state import truncate_all
from tests.pages import Account
from tests.servers import LiveServer

pytestmark = pytest.mark.data

SCREENSHOTS = Path(__file__).resolve().parents[2] / "tmp" / "screenshots" / "museum"
WIDTHS = {"desktop": 1280, "phone": 390}
TURNER = "joseph-mallord-william-turner"


def stand_in_png() -> bytes:
    """Return a small grey PNG: what the browser is given for a museum's image."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    width, height = 64, 48
    rows = b"".join(b"\x00" + bytes((180, 176, 170)) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def museum(
    engine: Engine, stores: Stores, base_settings: Settings, combined_server: LiveServer
) -> Iterator[str]:
    """The two museum slices, imported once for the module; the server's URL."""
    truncate_all(engine)
    load_tate(engine, SAMPLE_DATA / "tate", progress=False)
    load_cmoa(engine, SAMPLE_DATA / "cmoa", progress=False)
    bump_catalog_version(stores.redis, base_settings.redis_prefix, None)
    yield combined_server.url
    truncate_all(engine)


class Watch:
    """A page's console complaints and the requests it made off this server."""

    def __init__(self, page: Any, base: str) -> None:
        self.complaints: list[str] = []
        self.stood_in: list[str] = []
        self.refused: list[str] = []
        png = stand_in_png()

        def on_console(msg: Any) -> None:
            if "Content Security Policy" in msg.text or "Failed to load" in msg.text:
                self.complaints.append(msg.text)

        def route(r: Any) -> None:
            url = r.request.url
            if url.startswith(base):
                r.continue_()
            elif r.request.resource_type == "image":
                self.stood_in.append(url)
                r.fulfill(status=200, content_type="image/png", body=png)
            else:
                self.refused.append(url)
                r.abort()

        page.on("console", on_console)
        page.route("**/*", route)


@pytest.fixture
def sized(browser: Any) -> Iterator[Any]:
    """Open pages at a given width: ``sized(390)`` gives a page in a fresh context."""
    contexts: list[Any] = []

    def make(width: int) -> Any:
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.set_default_timeout(20_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def check(page: Any, name: str, width_name: str) -> None:
    """Assert no sideways scroll and no broken image, then shoot the whole page."""
    # Lazy images load when near the viewport: load them all now, then wait for each.
    page.evaluate(
        """() => Promise.all([...document.images].map(i => {
               i.loading = 'eager';
               return i.complete ? null : new Promise(ok => { i.onload = i.onerror = ok; });
           }))"""
    )
    sizes = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert sizes[0] <= sizes[1], (name, width_name, sizes, wide_elements(page))
    broken = page.evaluate(
        "() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
        ".map(i => i.src)"
    )
    assert not broken, (name, width_name, broken)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-{width_name}.png"), full_page=True)


def wide_elements(page: Any) -> list[str]:
    """Return the elements wider than the viewport (what to fix when a page scrolls sideways)."""
    found: list[str] = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
             .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
             .slice(0, 8)
             .map(e => e.tagName + '.' + e.className + ' ' + e.getBoundingClientRect().right)"""
    )
    return found


@pytest.mark.parametrize("width_name", list(WIDTHS))
def test_the_catalog_pages_fit_and_show_their_images(
    sized: Any, museum: str, stores: Stores, width_name: str
) -> None:
    page = sized(WIDTHS[width_name])
    watch = Watch(page, museum)
    with stores.sessions() as s:
        slug = s.scalars(
            select(Artwork.slug)
            .where(Artwork.published.is_(True), Artwork.image_url.is_not(None))
            .where(Artwork.title.like("%Bridge%"))
            .order_by(Artwork.id)
        ).first()
    assert slug is not None

    page.goto(museum + "/")
    assert page.get_by_role("heading", level=1).inner_text() == "Art catalog"
    check(page, "front-door", width_name)

    page.goto(f"{museum}/artists?size=50")
    assert page.get_by_role("heading", level=1).inner_text() == "Artists"
    assert "artists" in page.locator("p.count").inner_text()
    check(page, "artists", width_name)
    with page.expect_navigation():
        page.get_by_role("navigation", name="Sort").get_by_role("link", name="Birth year").click()
    assert "sort=date" in page.url
    with page.expect_navigation():
        page.get_by_role("navigation", name="Pages").get_by_role("link", name="Next").click()
    assert "Page 2 of" in page.get_by_role("navigation", name="Pages").inner_text()
    check(page, "artists-by-birth-year-page-2", width_name)

    page.goto(f"{museum}/artworks")
    assert page.locator("ul.grid li.card").count() == 24
    check(page, "artworks", width_name)

    for kind in ("gene", "partner", "show"):
        page.goto(f"{museum}/{kind}s")
        check(page, f"{kind}s", width_name)
    page.goto(f"{museum}/genes")
    with page.expect_navigation():
        page.locator("ul.rows a").first.click()
    assert page.locator("p.count").count() == 1
    check(page, "gene", width_name)

    page.goto(f"{museum}/artist/{TURNER}")
    assert "Turner" in page.get_by_role("heading", level=1).inner_text()
    assert "works in the catalog" in page.locator("p.works-count").inner_text()
    first_card = page.locator("ul.grid li.card").first
    assert first_card.locator("img").count() == 1  # it opens on a work with an image
    assert first_card.locator(".title").inner_text() not in ("[blank]", "Blank", "Untitled")
    check(page, "artist", width_name)

    page.goto(f"{museum}/artwork/{slug}")
    assert page.locator("figure img").count() == 1
    check(page, "artwork", width_name)

    page.goto(f"{museum}/search?q=Bridge")
    assert "result" in page.get_by_role("status").inner_text()
    assert page.locator("ol.results li.with-thumb img").count() >= 1
    check(page, "search", width_name)

    page.goto(f"{museum}/account/sign_in")
    assert page.get_by_role("heading", level=1).inner_text() == "Sign in"
    catalog_nav = page.get_by_role("navigation", name="Catalog")
    assert catalog_nav.get_by_role("link", name="Artists").get_attribute("href") == "/artists"
    check(page, "sign-in", width_name)

    assert watch.stood_in, "the pages showed no museum image"
    assert not watch.refused, watch.refused
    assert not watch.complaints, watch.complaints


def test_the_account_pages_share_the_catalog_header(
    sized: Any, museum: str, account: Account
) -> None:
    page = sized(WIDTHS["phone"])
    watch = Watch(page, museum)
    page.goto(f"{museum}/account/sign_in")
    page.get_by_label("Email").fill(account.email)
    page.get_by_label("Password").fill(account.password)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    assert page.url.startswith(f"{museum}/account")
    header = page.locator("header.site")
    assert header.get_by_role("link", name="Art catalog").get_attribute("href") == "/"
    assert header.get_by_role("button", name="Sign out").count() == 1
    check(page, "account", "phone")
    # The header's search box leads to the catalog's search page.
    header.get_by_label("Search the catalog").fill("Turner")
    with page.expect_navigation():
        header.get_by_role("button", name="Search").click()
    assert page.url.startswith(f"{museum}/search?q=Turner")
    assert page.get_by_role("heading", level=1).inner_text() == "Search"
    assert not watch.refused and not watch.complaints, (watch.refused, watch.complaints)
