"""The front door, the docs and the catalog pages in real Chromium, with a screenshot of each.

Screenshots go to ``artifacts/screenshots/`` (git-ignored; CI keeps the folder). The artworks'
images are served by a small local image server standing in for a museum's (the demo draws its own).
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, update

from artcat.loaders.demo import load_demo
from common.models import Artist, Artwork, ArtworkArtist
from common.settings import Settings
from common.stores import Stores
from tests.servers import LiveServer

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def png(width: int, height: int, seed: int) -> bytes:
    """Return a PNG: a two-colour gradient chosen by ``seed`` (a stand-in for a museum image)."""
    top = (seed * 67 % 200 + 30, seed * 131 % 200 + 30, seed * 29 % 200 + 30)
    rows = []
    for y in range(height):
        f = y / max(height - 1, 1)
        pixel = bytes(int(c * (1 - f) + 240 * f) for c in top)
        rows.append(b"\x00" + pixel * width)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def images() -> Iterator[str]:
    """A local image host: ``/<n>/<version>.png`` answers a PNG coloured by ``n``."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seed = sum(self.path.encode())
            data = png(320, 240, seed)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def demo(clean_db: Engine, base_settings: Settings, stores: Stores, images: str) -> None:
    """The demo catalog, its artworks' images on the local image host."""
    load_demo(clean_db, base_settings, seed=1, artworks=60)
    with stores.sessions() as s, s.begin():
        for artwork_id in list(s.scalars(select(Artwork.id))):
            s.execute(
                update(Artwork)
                .where(Artwork.id == artwork_id)
                .values(image_url=f"{images}/{artwork_id}/{{image_version}}.png")
            )


def shoot(page: Any, name: str, *, full_page: bool = True) -> None:
    """Save a screenshot of the page under ``artifacts/screenshots/``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def watch_csp(page: Any) -> list[str]:
    """Collect the console's Content-Security-Policy complaints (a page must cause none)."""
    complaints: list[str] = []
    page.on(
        "console",
        lambda msg: complaints.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    return complaints


def an_artist_with_works(stores: Stores) -> tuple[str, str]:
    """Return the name and slug of an artist with a published artwork."""
    with stores.sessions() as s:
        row = s.execute(
            select(Artist.name, Artist.slug)
            .join(ArtworkArtist, ArtworkArtist.artist_id == Artist.id)
            .join(Artwork, Artwork.id == ArtworkArtist.artwork_id)
            .where(Artwork.published.is_(True))
            .order_by(Artist.id)
            .limit(1)
        ).one()
    return row[0], row[1]


def test_the_front_door_leads_to_the_docs(
    page: Any, combined_server: LiveServer, demo: None
) -> None:
    complaints = watch_csp(page)
    page.goto(combined_server.url + "/")
    assert page.get_by_role("heading", level=1).inner_text() == "Art catalog"
    for name in ("The API root", "Register an application", "Sign in", "Artists"):
        assert page.get_by_role("link", name=name, exact=True).count() >= 1, name
    shoot(page, "front-door")
    with page.expect_navigation():
        page.get_by_role("link", name="The API docs").click()
    assert page.url == combined_server.url + "/docs"
    # Swagger UI ran (from this server's files) and rendered the served document.
    page.wait_for_selector(
        ".swagger-ui .info .title", timeout=90_000
    )  # a busy machine draws slowly
    assert (
        "artcat" in page.inner_text(".swagger-ui .info .title").lower()
        or page.locator(".opblock").count() > 10
    )
    page.wait_for_selector(".opblock", timeout=90_000)
    shoot(page, "docs", full_page=False)  # the whole document is some 13,000 pixels tall
    assert not complaints, complaints


def test_browse_from_the_front_door_to_an_artist_and_an_artwork(
    page: Any, combined_server: LiveServer, demo: None, stores: Stores
) -> None:
    complaints = watch_csp(page)
    name, slug = an_artist_with_works(stores)
    page.goto(combined_server.url + "/")
    with page.expect_navigation():
        page.get_by_role("navigation", name="Catalog").get_by_role("link", name="Artists").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Artists"
    shoot(page, "artists")
    page.goto(f"{combined_server.url}/artist/{slug}")
    assert page.get_by_role("heading", level=1).inner_text() == name
    card = page.locator("ul.grid li.card a").first
    card.locator("img").scroll_into_view_if_needed()
    page.wait_for_function("() => [...document.images].some(i => i.complete && i.naturalWidth)")
    shoot(page, "artist")
    title = card.locator(".title").inner_text()
    with page.expect_navigation():
        card.click()
    assert page.get_by_role("heading", level=1).inner_text() == title
    image = page.locator("figure img")
    assert image.get_attribute("loading") == "lazy" and title in (image.get_attribute("alt") or "")
    page.wait_for_function("() => document.querySelector('figure img').naturalWidth > 0")
    assert page.get_by_role("link", name=name).count() >= 1  # back to the artist
    shoot(page, "artwork")
    page.goto(combined_server.url + "/artworks")
    page.wait_for_function("() => [...document.images].some(i => i.complete && i.naturalWidth)")
    shoot(page, "artworks")
    assert not complaints, complaints


def test_search_from_the_header_without_javascript(
    browser: Any, combined_server: LiveServer, demo: None, stores: Stores
) -> None:
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    try:
        page = context.new_page()
        name, _ = an_artist_with_works(stores)
        page.goto(combined_server.url + "/")
        page.get_by_label("Search the catalog").fill(name)
        with page.expect_navigation():
            page.get_by_role("button", name="Search").first.click()
        assert page.get_by_role("heading", level=1).inner_text() == "Search"
        assert "result" in page.get_by_role("status").inner_text()
        shoot(page, "search")
        with page.expect_navigation():
            page.get_by_role("main").get_by_role("link", name=name).first.click()
        assert page.get_by_role("heading", level=1).inner_text() == name
    finally:
        context.close()


def test_keyboard_users_can_skip_to_the_content(
    page: Any, combined_server: LiveServer, demo: None
) -> None:
    page.goto(combined_server.url + "/genes")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    assert skip.evaluate("el => el === document.activeElement")
    shoot(page, "genes-skip-link")
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "main"
