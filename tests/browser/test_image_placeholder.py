"""In Chromium: an artwork whose image cannot be loaded shows its placeholder, and no page
shows a broken image (every <img> decoded, naturalWidth > 0), under the pages' CSP."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from sqlalchemy import Engine, select, update

from artcat.loaders.demo import load_demo
from common.models import Artwork
from common.settings import Settings
from common.stores import Stores
from tests.servers import LiveServer

EVERY_IMAGE_DECODED = (
    "() => [...document.images].length > 0 && "
    "[...document.images].every(i => i.complete && i.naturalWidth > 0)"
)


def closed_port() -> int:
    """Return a loopback port nothing listens on (a museum host that no longer answers)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def unreachable(clean_db: Engine, base_settings: Settings, stores: Stores) -> tuple[str, str]:
    """The demo catalog (its pictures served by the instance) with one artwork's image on a
    host that refuses connections; return that artwork's slug and title."""
    load_demo(clean_db, base_settings, seed=1, artworks=24)
    with stores.sessions() as s, s.begin():
        work = s.scalars(
            select(Artwork)
            .where(Artwork.published.is_(True), Artwork.image_url.is_not(None))
            .order_by(Artwork.id)
            .limit(1)
        ).one()
        s.execute(
            update(Artwork)
            .where(Artwork.id == work.id)
            .values(image_url=f"http://127.0.0.1:{closed_port()}/gone/{{image_version}}.jpg")
        )
        return work.slug, work.title


def watch_csp(page: Any) -> list[str]:
    """Collect the console's Content-Security-Policy complaints (a page must cause none)."""
    complaints: list[str] = []
    page.on(
        "console",
        lambda msg: complaints.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    return complaints


def test_an_unreachable_image_gives_way_to_the_placeholder(
    page: Any, combined_server: LiveServer, unreachable: tuple[str, str]
) -> None:
    slug, title = unreachable
    complaints = watch_csp(page)
    page.goto(f"{combined_server.url}/artwork/{slug}")
    page.wait_for_function(EVERY_IMAGE_DECODED)
    src = page.locator("figure img").get_attribute("src")
    assert src is not None and src.startswith("/images/placeholder-") and src.endswith(".svg")
    assert title in (page.locator("figure img").get_attribute("alt") or "")
    assert not complaints, complaints


def test_no_list_page_shows_a_broken_image(
    page: Any, combined_server: LiveServer, unreachable: tuple[str, str]
) -> None:
    complaints = watch_csp(page)
    page.goto(f"{combined_server.url}/artworks?size=30")
    # Lazy images load as they come into view: bring each in, then check them all.
    for img in page.locator("img").all():
        img.scroll_into_view_if_needed()
    page.wait_for_function(EVERY_IMAGE_DECODED)
    sources = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.getAttribute('src'))")
    assert any(s.startswith("/images/demo-") for s in sources)  # the instance's own pictures
    assert any(s.startswith("/images/placeholder-") for s in sources)  # the unreachable one
    assert not complaints, complaints
