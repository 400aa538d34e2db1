"""The document cache across processes: two ``artcat serve resource`` processes on one database
and one Redis. A catalog write followed by the bump of what it wrote is seen by both on their
next request, in the item and in the list pages; a write to another resource type leaves their
cached documents in place. The same for search pages, which follow the search index
(``artcat search reindex`` bumps it)."""

from __future__ import annotations

import secrets
import string
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session, sessionmaker

from artcat.loaders.demo import load_demo
from common.catalog_version import bump_catalog_version
from common.models import Artist, Artwork, Edition
from common.search.indexer import reindex
from common.settings import Settings
from tests.functional.catalog_support import demo_xapp_token
from tests.functional.cli_support import cli_env, run_cli
from tests.functional.process_support import (
    REQUEST_TIMEOUT,
    RedisServer,
    Service,
    two_resources_and_auth,
)

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module", params=["waitress", "granian"])
def cluster(
    request: pytest.FixtureRequest,
    module_db: Engine,
    redis_server: RedisServer,
    base_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[list[Service]]:
    """The demo catalog behind two resource processes and one auth process."""
    load_demo(module_db, base_settings, seed=1, artworks=60)
    instance = tmp_path_factory.mktemp("doccache")
    with two_resources_and_auth(
        base_settings, redis_server.url, instance, server=request.param
    ) as services:
        yield services


def artwork_with_editions(sessions: sessionmaker[Session]) -> str:
    """Return the id of a published artwork that has editions."""
    with sessions() as s:
        found = s.scalar(
            select(Edition.artwork_id)
            .join(Artwork, Artwork.id == Edition.artwork_id)
            .where(Artwork.published.is_(True))
            .order_by(Edition.artwork_id)
            .limit(1)
        )
    assert found is not None
    return found


def test_a_write_is_seen_by_every_process_on_its_next_request(
    cluster: list[Service],
    sessions: sessionmaker[Session],
    redis_server: RedisServer,
    base_settings: Settings,
) -> None:
    first, second, auth = cluster
    headers = {"X-Xapp-Token": demo_xapp_token(auth, base_settings)}
    artwork_id = artwork_with_editions(sessions)
    redis, prefix = redis_server.client(), base_settings.redis_prefix

    def documents() -> list[dict[str, Any]]:
        """The artwork from each process: its document, and its entry in a list page (cached
        whole, as pages are); both must agree."""
        out = []
        for svc in (first, second):
            r = requests.get(
                f"{svc.url}/api/artworks/{artwork_id}", headers=headers, timeout=REQUEST_TIMEOUT
            )
            assert r.status_code == 200, r.text
            page = requests.get(
                f"{svc.url}/api/artworks?size=100", headers=headers, timeout=REQUEST_TIMEOUT
            )
            assert page.status_code == 200, page.text
            listed = [a for a in page.json()["_embedded"]["artworks"] if a["id"] == artwork_id]
            assert listed == [r.json()]
            out.append(r.json())
        return out

    def fields(doc: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in doc.items() if not k.startswith("_")}  # links name the port

    original = fields(documents()[0])
    assert [fields(d) for d in documents()] == [original, original]  # both now hold it

    # A change without its own bump: only a bump of another type follows. The documents
    # survive that write elsewhere (this is what the cache is for) and stay as they were.
    with sessions.begin() as s:
        s.execute(update(Artwork).where(Artwork.id == artwork_id).values(title="Renamed"))
    bump_catalog_version(redis, prefix, ["artists", "sales"])
    assert [d["title"] for d in documents()] == [original["title"]] * 2

    # The bump of what was written: the very next request at each process reads it.
    bump_catalog_version(redis, prefix, ["artworks"])
    assert [d["title"] for d in documents()] == ["Renamed", "Renamed"]

    # An edition is part of the artwork document: its type's bump refreshes it too.
    with sessions.begin() as s:
        s.execute(
            update(Edition).where(Edition.artwork_id == artwork_id).values(sale_message="Sold")
        )
    bump_catalog_version(redis, prefix, ["editions"])
    for doc in documents():
        editions = doc["_embedded"]["editions"]
        assert editions and {e["sale_message"] for e in editions} == {"Sold"}

    # A loader that does not say what it wrote changes the whole catalog.
    with sessions.begin() as s:
        s.execute(update(Artwork).where(Artwork.id == artwork_id).values(title="Reloaded"))
    bump_catalog_version(redis, prefix)
    assert [d["title"] for d in documents()] == ["Reloaded", "Reloaded"]


def test_a_reindex_is_seen_by_every_process_on_its_next_search(
    cluster: list[Service],
    module_db: Engine,
    sessions: sessionmaker[Session],
    redis_server: RedisServer,
    base_settings: Settings,
) -> None:
    first, second, auth = cluster
    headers = {"X-Xapp-Token": demo_xapp_token(auth, base_settings)}
    redis, prefix = redis_server.client(), base_settings.redis_prefix
    env = cli_env(base_settings, REDIS_URL=redis_server.url)
    with sessions() as s:
        artist_id = s.scalar(select(Artist.id).order_by(Artist.id).limit(1))
    assert artist_id is not None
    # A word no artist has yet, new in each run of the module (one per server).
    word = "Marlowgrave" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(6))

    def rename(name: str) -> None:
        with sessions.begin() as s:
            s.execute(update(Artist).where(Artist.id == artist_id).values(name=name))

    def top_titles() -> list[str | None]:
        out = []
        for svc in (first, second):
            r = requests.get(
                f"{svc.url}/api/search",
                params={"q": word, "type": "artist"},
                headers=headers,
                timeout=REQUEST_TIMEOUT,
            )
            assert r.status_code == 200, r.text
            results = r.json()["_embedded"]["results"]
            out.append(results[0]["title"] if results else None)
        return out

    assert top_titles() == [None, None]  # both now hold the empty page
    rename(f"Quintessa {word}")
    run_cli(env, "search", "reindex")
    assert top_titles() == [f"Quintessa {word}"] * 2

    # The index rewritten without its bump (a writer that has not yet announced it); a bump of
    # another type follows (not artworks: the results are checked against the artworks shown).
    # The pages survive that (what the cache is for): still the old ones.
    rename(f"Quintessa {word}-Fenn")
    assert reindex(module_db).written == 1
    bump_catalog_version(redis, prefix, ["artists", "genes"])
    assert top_titles() == [f"Quintessa {word}"] * 2

    # ``artcat search reindex`` (nothing left to write) bumps the index's version: the very next
    # search at each process reads it.
    assert "0 written" in run_cli(env, "search", "reindex")
    assert top_titles() == [f"Quintessa {word}-Fenn"] * 2
