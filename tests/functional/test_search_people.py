"""Search that knows who people are: a query naming an artist puts that artist first.

The slices plus a few works by J. M. W. Turner, who has 41,861 works at Tate and so the most
popular works of the catalog, titled with other people's names: "partly after Gainsborough",
"Portrait of Thomas Gainsborough", a work titled exactly "Thomas Gainsborough", one titled with
Teenie Harris's nickname. Popularity alone puts them above the artists they name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, select

from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.tate import load_tate
from common.search.models import SearchDocument
from common.settings import Settings
from common.stores import Stores
from tests.constants import SAMPLE_DATA
from tests.db_state import truncate_all
from tests.functional.test_search import Museum
from tests.functional.user_api_support import make_caller, xapp_headers
from tests.servers import LiveServer

pytestmark = [pytest.mark.functional, pytest.mark.data]

TURNER = SAMPLE_DATA / "tate" / "artists" / "t" / "turner-joseph-mallord-william-558.json"
TITLES = (
    "Landscape, partly after Gainsborough",
    "Portrait of Thomas Gainsborough",
    "Thomas Gainsborough",
    'Sketch of a Photographer Called "Teenie"',
)


def turner_work(number: int, title: str) -> dict[str, Any]:
    """Return a Tate artwork record by Turner: a painting with an image."""
    return {
        "id": 990000 + number,
        "acno": f"X9900{number}",
        "title": title,
        "classification": "painting",
        "thumbnailUrl": f"http://www.tate.org.uk/art/images/work/X/X99/X9900{number}_8.jpg",
        "contributors": [
            {
                "id": 558,
                "fc": "Joseph Mallord William Turner",
                "mda": "Turner, Joseph Mallord William",
                "birthYear": 1775,
                "role": "artist",
                "displayOrder": 1,
            }
        ],
    }


@pytest.fixture(scope="module")
def museum(
    engine: Engine,
    stores: Stores,
    base_settings: Settings,
    resource_server: LiveServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Museum]:
    """Load the slices and Turner's works titled with others' names, behind a live server."""
    truncate_all(engine)
    assert load_tate(engine, SAMPLE_DATA / "tate", progress=False).ok
    assert load_cmoa(engine, SAMPLE_DATA / "cmoa", progress=False).ok
    extra = tmp_path_factory.mktemp("turner")
    (extra / "artists.jsonl").write_text(json.dumps(json.loads(TURNER.read_text())) + "\n")
    lines = [json.dumps(turner_work(i, t)) for i, t in enumerate(TITLES, start=1)]
    (extra / "artworks.jsonl").write_text("\n".join(lines) + "\n")
    assert load_tate(engine, extra, progress=False).ok
    user = make_caller(stores.sessions, stores, base_settings).headers
    xapp = xapp_headers(stores.sessions, stores)
    museum = Museum(resource_server.url, engine, stores, xapp, user, base_settings.redis_prefix)
    museum.announce(None)  # as ``artcat load`` does: the whole catalog changed
    yield museum
    truncate_all(engine)


def top(museum: Museum, q: str, **params: Any) -> list[tuple[str, str]]:
    """Return (type, title) of the first page's results."""
    body = museum.ok(q=q, size=10, **params)
    return [(r["type"], r["title"]) for r in body["_embedded"]["results"]]


def test_the_works_outrank_the_artists_by_popularity(museum: Museum) -> None:
    # Without the rule these works would come first: they are more popular than the artists.
    docs = select(SearchDocument.kind, SearchDocument.title, SearchDocument.popularity)
    with museum.stores.sessions() as session:
        popularity = {(kind, title): pop for kind, title, pop in session.execute(docs)}
    for title in TITLES:
        work = popularity["artwork", title]
        assert work > popularity["artist", "Thomas Gainsborough"]
        assert work > popularity["artist", 'Charles "Teenie" Harris']


@pytest.mark.parametrize(
    ("q", "artist"),
    [
        ("Gainsborough", "Thomas Gainsborough"),  # the surname
        ("gainsborough thomas", "Thomas Gainsborough"),  # any order
        ("Thomas Gainsborough", "Thomas Gainsborough"),  # before a work titled exactly so
        ("GAINSBOROUGH, Thomas", "Thomas Gainsborough"),  # case and punctuation
        ("Teenie", 'Charles "Teenie" Harris'),  # a known-as name in quotes
        ('"Teenie" Harris', 'Charles "Teenie" Harris'),
        ("william turner", "Joseph Mallord William Turner"),  # some of the forenames
        ("Millais", "Sir John Everett Millais, Bt"),  # title and honours around the name
        ("blake", "William Blake"),
    ],
)
def test_a_query_naming_an_artist_puts_the_artist_first(
    museum: Museum, q: str, artist: str
) -> None:
    assert top(museum, q)[0] == ("artist", artist), q


def test_works_mentioning_the_name_follow_the_artist_and_his_own_works(museum: Museum) -> None:
    results = top(museum, "Gainsborough")
    assert results[0] == ("artist", "Thomas Gainsborough")
    assert ("artwork", "Landscape, partly after Gainsborough") in results[1:]
    assert ("artwork", "Portrait of Thomas Gainsborough") in results[1:]
    exact = top(museum, "Thomas Gainsborough")
    assert exact[0] == ("artist", "Thomas Gainsborough")
    # His own works, then the work by Turner titled exactly with his name.
    own = exact.index(("artwork", "Boy Driving Cows near a Pool"))
    assert own < exact.index(("artwork", "Thomas Gainsborough"))


def test_a_query_with_other_words_names_nobody(museum: Museum) -> None:
    # The title itself: the work, as before.
    assert top(museum, "Portrait of Thomas Gainsborough")[0] == (
        "artwork",
        "Portrait of Thomas Gainsborough",
    )
    # A forename alone is nobody in particular: popularity decides.
    assert top(museum, "Thomas")[0] != ("artist", "Thomas Gainsborough")
    assert top(museum, "gainsborough portrait")[0][0] == "artwork"


def test_every_artist_named_comes_before_the_works(museum: Museum) -> None:
    results = museum.walk(q="Turner", size=50)
    kinds = [r["type"] for r in results]
    named = kinds.index("artwork")
    assert results[0]["title"] == "Joseph Mallord William Turner"
    assert all("turner" in r["title"].lower() for r in results[:named])
    crypt = next(i for i, r in enumerate(results) if r["title"].startswith("Crypt of Kirkstall"))
    assert crypt > named  # "(after J.M.W. Turner)": a work that mentions him, after him


@pytest.mark.parametrize("q", ["Gainsborough", "Teenie", "Turner", "thomas gainsborough"])
def test_pages_stay_consistent(museum: Museum, q: str) -> None:
    whole = museum.walk(q=q, size=50)
    body = museum.ok(q=q, size=50)
    assert body["total_count"] == len(whole)
    ids = [r["_links"]["self"]["href"] for r in whole]
    assert len(ids) == len(set(ids))
    one_by_one = museum.walk(q=q, size=1)
    assert [r["_links"]["self"]["href"] for r in one_by_one] == ids
    for offset in (1, 2, len(ids) - 1):
        page = museum.ok(q=q, size=1, offset=offset)["_embedded"]["results"]
        assert [r["_links"]["self"]["href"] for r in page] == ids[offset : offset + 1]


def test_kind_filters_still_apply(museum: Museum) -> None:
    assert all(kind == "artwork" for kind, _ in top(museum, "Gainsborough", type="artwork"))
    assert top(museum, "Gainsborough", type="artist") == [("artist", "Thomas Gainsborough")]
    filtered = top(museum, "Teenie more:pagemap:metatags-og_type:artist")
    assert filtered[0] == ("artist", 'Charles "Teenie" Harris')
