"""Search relevance for people: the artist's own works after the artist, initials and the
museums' spellings of names, an artist with a subject, a known work before later works whose
titles mention it, a spelling correction shown as one, and a count past the window shown as
such. On a slice of the museums' rows that reproduces each case (``tests/data/relevance``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from sqlalchemy import Engine, select

from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.tate import load_tate
from common.search.models import SearchDocument
from common.settings import Settings
from common.stores import Stores
from resource_server.search import service
from tests.constants import SAMPLE_DATA
from tests.db_state import truncate_all
from tests.functional.test_search import Museum
from tests.functional.user_api_support import make_caller, xapp_headers
from tests.servers import LiveServer

pytestmark = [pytest.mark.functional, pytest.mark.data]

SLICE = SAMPLE_DATA / "relevance"
POSTERS = ("Beuys by Warhol. Paintings + Prints", "Joseph Beuys by Andy Warhol")
WARHOL_OWN = ("Marilyn Diptych", "Marilyn Monroe", "Self-Portrait", "Andy Warhol / Joseph Beuys")


@pytest.fixture(scope="module")
def museum(
    engine: Engine, stores: Stores, base_settings: Settings, resource_server: LiveServer
) -> Iterator[Museum]:
    """Load the slice behind a live server."""
    truncate_all(engine)
    assert load_tate(engine, SLICE / "tate", progress=False).ok
    assert load_cmoa(engine, SLICE / "cmoa", progress=False).ok
    user = make_caller(stores.sessions, stores, base_settings).headers
    xapp = xapp_headers(stores.sessions, stores)
    museum = Museum(resource_server.url, engine, stores, xapp, user, base_settings.redis_prefix)
    museum.announce(None)
    yield museum
    truncate_all(engine)


def top(museum: Museum, q: str, size: int = 20) -> list[tuple[str, str]]:
    """Return (type, title) of the first page's results."""
    body = museum.ok(q=q, size=size)
    return [(r["type"], r["title"]) for r in body["_embedded"]["results"]]


def popularity(museum: Museum, title: str) -> float:
    """Return the highest popularity of the documents so titled."""
    stmt = select(SearchDocument.popularity).where(SearchDocument.title == title)
    with museum.stores.sessions() as session:
        return max(session.scalars(stmt))


def test_the_slice_reproduces_the_cases(museum: Museum) -> None:
    # The posters hold the name in their titles, his own works (but one) do not: by the title
    # tiers alone, the posters came first. The later work is the more popular one.
    assert all("warhol" in title.lower() for title in POSTERS)
    assert not any("warhol" in title.lower() for title in WARHOL_OWN[:3])
    tears = "Tears Wept in Front of Monet's Water Lilies"
    assert popularity(museum, tears) > popularity(museum, "Water Lilies (Nymphéas)")


@pytest.mark.parametrize("q", ["warhol", "Andy Warhol", "Warhol, Andy"])
def test_the_artists_own_works_follow_the_artist(museum: Museum, q: str) -> None:
    results = top(museum, q)
    assert results[0] == ("artist", "Andy Warhol")
    own = [i for i, (_, title) in enumerate(results) if title.startswith(WARHOL_OWN)]
    mentions = [
        i
        for i, (kind, title) in enumerate(results)
        if kind == "artwork" and title in (*POSTERS, "Andy Warhol")
    ]
    assert len(own) == 6 and mentions, results
    assert max(own) < min(mentions), results  # the posters and portraits after his works


@pytest.mark.parametrize(
    "q",
    [
        "J.M.W. Turner",
        "J. M. W. Turner",
        "JMW Turner",
        "Turner, J.M.W.",
        "Turner, Joseph Mallord William",
        "joseph mallord william turner",
    ],
)
def test_initials_and_the_museums_spellings_name_the_artist(museum: Museum, q: str) -> None:
    results = top(museum, q)
    assert results[0] == ("artist", "Joseph Mallord William Turner"), results
    own = [i for i, (kind, t) in enumerate(results) if kind == "artwork" and "Portrait" not in t]
    portraits = [i for i, (_, title) in enumerate(results) if title.startswith("Portrait of J.M.W")]
    assert len(own) == 6 and max(own) < min(portraits, default=99), results


@pytest.mark.parametrize("q", ["D.G. Rossetti", "DG Rossetti", "Rossetti, Dante Gabriel"])
def test_initials_are_not_corrected_into_other_words(museum: Museum, q: str) -> None:
    r = museum.get(q=q)
    assert r.status_code == 200, r.headers.get("Location")  # no 302 to "DE Rossetti"
    assert [t for _, t in top(museum, q)[:3]] == [
        "Dante Gabriel Rossetti",
        "Beata Beatrix",
        "Proserpine",
    ]


def test_an_artist_with_a_subject_gives_the_artists_works_on_it(museum: Museum) -> None:
    results = [t for _, t in top(museum, "turner venice")]
    # His three sketchbook pages naming Venice; the views of Venice by others do not name him.
    mine = ("Ponte di Rialto", "Copies of Paintings in Venice", "Two Landscape Sketches")
    assert len(results) == 3 and all(t.startswith(mine) for t in results), results
    # The words in another order, or the museum's form of his name: the same works first.
    for q in ("venice turner", "venice J.M.W. Turner"):
        assert [t for _, t in top(museum, q)][:3] == results, q


def test_a_known_work_comes_before_a_later_work_naming_it(museum: Museum) -> None:
    results = [t for _, t in top(museum, "water lilies")]
    assert results[:2] == [
        "Water Lilies (Nymphéas)",
        "Tears Wept in Front of Monet's Water Lilies",
    ]


def page(museum: Museum, **params: Any) -> str:
    """Return the text of the search page."""
    r = requests.get(f"{museum.url}/search", params=params, timeout=20)
    assert r.status_code == 200, r.text
    return r.text


def test_a_correction_is_shown_with_a_way_back(museum: Museum) -> None:
    # The API answers as the reference did: 302 to the corrected query.
    r = museum.get(q="warhal")
    assert r.status_code == 302 and "q=warhol" in r.headers["Location"]
    html = page(museum, q="warhal")
    assert "Showing results for" in html and "Search instead for" in html
    assert "Andy Warhol" in html
    back = re.search(r'Search instead for <a href="([^"]+)">warhal</a>', html)
    assert back and "spelling=off" in back.group(1), html
    # The words as typed, uncorrected: nothing, and no correction offered.
    plain = requests.get(f"{museum.url}{back.group(1).replace('&amp;', '&')}", timeout=20).text
    assert "0 results for “warhal”" in plain and "Showing results for" not in plain
    # A query with results of its own is never corrected.
    assert "Showing results for" not in page(museum, q="DG Rossetti")


def test_a_count_stopped_at_the_window_says_so(
    museum: Museum, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "6 results for “Marilyn”" not in page(museum, q="warhol")
    monkeypatch.setattr(service, "WINDOW", 3)
    museum.announce()
    html = page(museum, q="warhol")
    assert "3+ results for “warhol”" in html, html
    body = museum.ok(q="warhol")
    assert body["total_count"] == 3  # the API's count as documented: the window
    monkeypatch.setattr(service, "WINDOW", 1000)
    museum.announce()
    assert "1 result for “Proserpine”" in page(museum, q="Proserpine")


@pytest.mark.parametrize("q", ["warhol", "Andy Warhol", "J.M.W. Turner", "turner venice"])
def test_pages_hold_every_match_once_in_order(museum: Museum, q: str) -> None:
    """The tiers no longer nest: a deep page counts each tier's own matches to skip it, and
    small pages walked one after the other give the first page's order, each match once."""
    whole = museum.ok(q=q, size=50)
    first = [r["_links"]["self"]["href"] for r in whole["_embedded"]["results"]]
    for size in (1, 3, 7):
        museum.announce()
        walked = [r["_links"]["self"]["href"] for r in museum.walk(q=q, size=size)]
        assert walked == first, (q, size)
    assert whole["total_count"] == len(first) == len(set(first))


def test_a_kind_filter_keeps_the_artists_works_first(museum: Museum) -> None:
    works = [t for _, t in top(museum, "warhol", size=20)[1:7]]
    assert museum.ok(q="warhol", type="artwork")["total_count"] == len(
        museum.walk(q="warhol", type="artwork")
    )
    assert [t for _, t in top_of(museum, "warhol", "artwork")[:6]] == works
    assert top_of(museum, "warhol", "artist") == [("artist", "Andy Warhol")]


def top_of(museum: Museum, q: str, kind: str) -> list[tuple[str, str]]:
    """Return (type, title) of the first page's results of one kind."""
    body = museum.ok(q=q, size=20, type=kind)
    return [(r["type"], r["title"]) for r in body["_embedded"]["results"]]
