"""``GET /api/search`` over the museum sample: relevance, kind filters, paging, spelling, errors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from click.testing import CliRunner
from sqlalchemy import Engine, delete, event, select

from artcat.cli.main import main
from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.tate import load_tate
from common.catalog_version import bump_catalog_version
from common.models import Artist
from common.search import spelling
from common.search.indexer import reindex
from common.search.models import SearchDocument, SearchWord
from common.search.plan import ANY, count_whole_first
from common.search.registry import engine_for
from common.search.text import fold, parse_query
from common.settings import ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app
from resource_server.search import service
from tests import factories
from tests.constants import SAMPLE_DATA
from tests.db_state import truncate_all
from tests.functional.catalog_support import counting
from tests.functional.cli_support import cli_env, run_cli
from tests.functional.in_process import serve_in_process
from tests.functional.user_api_support import make_caller, xapp_headers
from tests.servers import LiveServer

pytestmark = [pytest.mark.functional, pytest.mark.data]
RESULT_KEYS = ["type", "title", "description", "og_type", "_links"]


@dataclass
class Museum:
    """The Tate and CMoA samples, indexed, behind a live resource server."""

    url: str
    engine: Engine
    stores: Stores
    xapp: dict[str, str]
    user: dict[str, str]
    prefix: str  # the servers' Redis prefix, under which the catalog versions are

    def announce(self, kinds: tuple[str, ...] | None = ("search",)) -> None:
        """Bump the versions of what was written (the search index unless told), as every
        writer does after its commit: the servers' cached search pages are read afresh."""
        bump_catalog_version(self.stores.redis, self.prefix, kinds)

    def get(self, headers: dict[str, str] | None = None, **params: Any) -> requests.Response:
        """GET /api/search without following redirects."""
        return requests.get(
            f"{self.url}/api/search",
            params=params,
            headers=self.xapp if headers is None else headers,
            allow_redirects=False,
            timeout=20,
        )

    def ok(self, **params: Any) -> dict[str, Any]:
        """Search, assert 200 and return the body."""
        r = self.get(**params)
        assert r.status_code == 200, (params, r.status_code, r.text)
        body: dict[str, Any] = r.json()
        return body

    def walk(self, **params: Any) -> list[dict[str, Any]]:
        """Follow ``next`` from the first page to the last; return every result."""
        body = self.ok(**params)
        results = list(body["_embedded"]["results"])
        while "next" in body["_links"]:
            r = requests.get(body["_links"]["next"]["href"], headers=self.xapp, timeout=20)
            assert r.status_code == 200, r.text
            body = r.json()
            results += body["_embedded"]["results"]
        return results


@pytest.fixture(scope="module")
def museum(
    engine: Engine, stores: Stores, base_settings: Settings, resource_server: LiveServer
) -> Iterator[Museum]:
    """Load the museum sample once for the module (its loaders build the index)."""
    truncate_all(engine)
    load_tate(engine, SAMPLE_DATA / "tate", progress=False)
    load_cmoa(engine, SAMPLE_DATA / "cmoa", progress=False)
    user = make_caller(stores.sessions, stores, base_settings).headers
    xapp = xapp_headers(stores.sessions, stores)
    museum = Museum(resource_server.url, engine, stores, xapp, user, base_settings.redis_prefix)
    museum.announce(None)  # as ``artcat load`` does: the whole catalog changed
    yield museum
    truncate_all(engine)


def titles(body: dict[str, Any]) -> list[str]:
    """Return the titles of a page's results."""
    return [r["title"] for r in body["_embedded"]["results"]]


@pytest.mark.parametrize(
    ("q", "kind", "title"),
    [
        ("Turner", "artist", "Joseph Mallord William Turner"),
        ("joseph beuys", "artist", "Joseph Beuys"),
        ("Teenie Harris", "artist", 'Charles "Teenie" Harris'),
        ("The Golden Rope", "artwork", "The Golden Rope"),
        ("Fisherman's Story", "artwork", "A Fisherman\u2019s Story"),
        ("Dague", "artwork", "Daguerre\u2019s Soup"),
        ("Hasui Kegon falls", "artwork", "Kegon Falls, Nikk\u00f4 (Nikk\u00f4 Kegon no taki)"),
        ("Gustave Dore", "artist", "Gustave Dor\u00e9"),
        ("Tate", "profile", "Tate"),
    ],
)
def test_named_queries_rank_the_expected_hit_first(
    museum: Museum, q: str, kind: str, title: str
) -> None:
    top = museum.ok(q=q)["_embedded"]["results"][0]
    assert (top["type"], top["title"]) == (kind, title), q


def test_exact_then_title_phrase_then_elsewhere_with_popularity_inside(museum: Museum) -> None:
    results = museum.walk(q="Turner", size=50)
    assert results[0]["title"] == "Joseph Mallord William Turner"
    # The artists named, then J.M.W. Turner's own works, then the other matches: those with
    # the word in the title before those with it elsewhere only.
    own = [(r["description"] or "").startswith("Joseph Mallord William Turner") for r in results]
    assert own.index(True) > 0 and own == [False] * own.index(True) + sorted(
        own[own.index(True) :], reverse=True
    )
    rest = [r for r, mine in zip(results, own, strict=True) if not mine][own.index(True) :]
    in_title = ["turner" in fold(r["title"]).split() for r in rest]
    assert in_title == sorted(in_title, reverse=True)  # title matches before body-only matches
    untitled = museum.walk(q="untitled", size=50)
    exact = [fold(r["title"]) == "untitled" for r in untitled]
    assert exact == sorted(exact, reverse=True) and exact[0] and not exact[-1]
    with museum.stores.sessions() as s:
        stmt = select(SearchDocument.resource_id, SearchDocument.popularity)
        popularity = dict(s.execute(stmt).all())
    block = [r for r, e in zip(untitled, exact, strict=True) if e]
    pops = [popularity[r["_links"]["self"]["href"].rsplit("/", 1)[1]] for r in block]
    assert pops == sorted(pops, reverse=True)


def test_envelope_and_result_shape(museum: Museum) -> None:
    body = museum.ok(q="Daguerre Soup")
    assert list(body) == ["total_count", "offset", "q", "_links", "_embedded"]
    assert (body["total_count"], body["offset"], body["q"]) == (1, 0, "Daguerre Soup")
    assert body["_links"] == {"self": {"href": f"{museum.url}/api/search?q=Daguerre%20Soup"}}
    (hit,) = body["_embedded"]["results"]
    assert list(hit) == RESULT_KEYS
    assert (hit["type"], hit["og_type"]) == ("artwork", "artwork")
    assert hit["description"].startswith("Marcel Broodthaers, 1975.")
    # No WEB_URL: the permalink is this server's own artwork page.
    assert set(hit["_links"]) == {"self", "thumbnail", "permalink"}
    artwork_id = hit["_links"]["self"]["href"].rsplit("/", 1)[1]
    assert hit["_links"]["permalink"]["href"] == f"{museum.url}/artwork/{artwork_id}"
    assert hit["_links"]["thumbnail"]["href"].startswith("http://www.tate.org.uk/")
    artwork = requests.get(hit["_links"]["self"]["href"], headers=museum.user, timeout=20)
    assert artwork.status_code == 200 and artwork.json()["title"] == "Daguerre\u2019s Soup"
    artist = museum.ok(q="Joseph Beuys", type="artist")["_embedded"]["results"][0]
    assert "thumbnail" not in artist["_links"]  # museum artists have no image
    assert requests.head(f"{museum.url}/api/search?q=Beuys", headers=museum.xapp).content == b""
    root = requests.get(f"{museum.url}/api", headers=museum.xapp, timeout=20).json()
    assert root["_links"]["search"] == {
        "href": f"{museum.url}/api/search{{?q,size,offset,type}}",
        "templated": True,
    }


def test_permalinks_when_the_website_is_configured(museum: Museum, stores: Stores) -> None:
    settings = ResourceSettings(
        secret_key="x", web_url="https://art.example.org", rate_limit="10000/second"
    )
    live = serve_in_process(create_app(settings, stores))
    try:
        r = requests.get(f"{live.url}/api/search?q=Beuys", headers=museum.xapp, timeout=20)
    finally:
        live.stop()
    links = [h["_links"] for h in r.json()["_embedded"]["results"]]
    assert links[0]["permalink"] == {"href": "https://art.example.org/artist/joseph-beuys"}
    assert all(link["permalink"]["href"].startswith("https://art.example.org/") for link in links)


def test_kind_filters_in_the_query_and_as_a_parameter(museum: Museum) -> None:
    everything = museum.ok(q="Turner", size=50)
    in_q = museum.ok(q="Turner more:pagemap:metatags-og_type:artwork", size=50)
    param = museum.ok(q="Turner", type="artwork", size=50)
    assert in_q["_embedded"] == param["_embedded"]
    assert 0 < in_q["total_count"] == param["total_count"] < everything["total_count"]
    assert {r["og_type"] for r in in_q["_embedded"]["results"]} == {"artwork"}
    artists = museum.ok(q="Turner", type="artist,gene")["_embedded"]["results"]
    assert artists and {r["type"] for r in artists} <= {"artist", "gene"}
    neither = museum.ok(q="Turner more:pagemap:metatags-og_type:artist", type="artwork")
    assert neither["total_count"] == 0 and neither["_embedded"] == {"results": []}
    partner = museum.ok(q="Tate", type="partner")["_embedded"]["results"]
    assert [(r["type"], r["og_type"], r["title"]) for r in partner] == [(None, "partner", "Tate")]
    assert partner[0]["_links"]["self"]["href"].startswith(f"{museum.url}/api/partners/")


def test_paging_to_the_end_without_repeats(museum: Museum) -> None:
    total = museum.ok(q="Turner")["total_count"]
    assert total > 20
    seen: list[str] = []
    body = museum.ok(q="Turner", size=7)
    pages = 1
    while True:
        seen += [r["_links"]["self"]["href"] for r in body["_embedded"]["results"]]
        if "next" not in body["_links"]:
            break
        query = parse_qs(urlsplit(body["_links"]["next"]["href"]).query)
        assert query == {"q": ["Turner"], "size": ["7"], "offset": [str(7 * pages)]}
        body = requests.get(body["_links"]["next"]["href"], headers=museum.xapp, timeout=20).json()
        assert body["offset"] == 7 * pages
        pages += 1
    assert len(seen) == len(set(seen)) == total
    assert pages == -(-total // 7)
    for size in (3, 50):  # any page size walks the same ranking
        hrefs = [r["_links"]["self"]["href"] for r in museum.walk(q="Turner", size=size)]
        assert hrefs == seen
    window = museum.ok(q="Turner", offset=5, size=9)["_embedded"]["results"]
    assert [r["_links"]["self"]["href"] for r in window] == seen[5:14]
    beyond = museum.ok(q="Turner", offset=total + 5)
    assert beyond["_embedded"]["results"] == [] and "next" not in beyond["_links"]
    assert beyond["total_count"] == total


def test_misspelling_redirects_to_the_corrected_search(museum: Museum) -> None:
    r = museum.get(q="Honore Daumeir", size=5, type="artist")
    assert r.status_code == 302, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    location = r.headers["Location"]
    assert r.json() == {"_links": {"location": {"href": location}}}
    assert location == f"{museum.url}/api/search?q=Honore%20Daumier&size=5&type=artist"
    follow = requests.get(location, headers=museum.xapp, timeout=20).json()
    assert titles(follow) == ["Honor\u00e9 Daumier"]
    kept = museum.get(q="daumeir more:pagemap:metatags-og_type:artwork")
    assert kept.status_code == 302
    assert parse_qs(urlsplit(kept.headers["Location"]).query)["q"] == [
        "daumier more:pagemap:metatags-og_type:artwork"
    ]


def test_no_redirect_to_an_empty_or_the_same_search(museum: Museum) -> None:
    for q in ("Turner Daumier", "xqzvwkjj", "Daumeir more:pagemap:metatags-og_type:gene"):
        body = museum.ok(q=q)
        assert body["total_count"] == 0 and body["_embedded"]["results"] == [], q
        assert "next" not in body["_links"]


def test_accents_and_case_are_folded(museum: Museum) -> None:
    variants = [
        "Honor\u00e9 Daumier",
        "honore daumier",
        "HONOR\u00c9 DAUMIER",
        "Honore\u0301 Daumier",
    ]
    bodies = [museum.ok(q=q) for q in variants]
    assert all(b["_embedded"] == bodies[0]["_embedded"] for b in bodies)
    assert titles(bodies[0])[0] == "Honor\u00e9 Daumier"
    for q in ("gotz", "G\u00d6TZ", "Karl Otto Gotz"):
        assert titles(museum.ok(q=q))[0] == "Karl-Otto G\u00f6tz", q


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "more:pagemap:metatags-og_type:artist"}, "q"),
        ({"q": "Turner more:pagemap:metatags-og_type:painting"}, "q"),
        ({"q": "x" * 501}, "q"),
        ({"q": "Turner", "size": "0"}, "size"),
        ({"q": "Turner", "size": "51"}, "size"),
        ({"q": "Turner", "size": "ten"}, "size"),
        ({"q": "Turner", "offset": "-1"}, "offset"),
        ({"q": "Turner", "offset": "1.5"}, "offset"),
        ({"q": "Turner", "offset": "9" * 20}, "offset"),
        ({"q": "Turner", "type": "painting"}, "type"),
        ({"q": "Turner", "type": "artist,"}, None),
    ],
)
def test_malformed_parameters_are_400(
    museum: Museum, params: dict[str, str], name: str | None
) -> None:
    r = museum.get(None, **params)
    if name is None:  # tolerated: an empty item in a list
        assert r.status_code == 200, r.text
        return
    assert r.status_code == 400, (params, r.status_code, r.text)
    body = r.json()
    assert body["type"] == "param_error" and list(body["detail"]) == [name], body


ODD_QUERIES = [
    '"', "*", "-", "^", "(", ")", ":", "NEAR(a b)", "a:b", "title_terms:turner", "'", "%",
    "\x00", "\u0301", "\U0001f600", "\u01c3", "AND", "OR NOT", "{kind}: artist", "x" * 500,
    " ".join(["turner"] * 40), "a*", "\\", "\u6771\u4eac", "\ufffd", "a" * 60,
]  # fmt: skip


def test_odd_queries_never_fail(museum: Museum) -> None:
    for q in ODD_QUERIES:
        r = museum.get(q=q)
        assert r.status_code in (200, 302, 400), (q[:20], r.status_code, r.text[:200])
    raw = requests.get(f"{museum.url}/api/search?q=%FF%FE", headers=museum.xapp, timeout=20)
    assert raw.status_code in (200, 302, 400)


def test_tokens_are_required(museum: Museum) -> None:
    assert museum.get(headers={}, q="Turner").status_code == 401
    assert museum.get(headers=museum.user, q="Turner").status_code == 200


def test_the_index_lags_the_catalog_until_reindexed(museum: Museum) -> None:
    with museum.stores.sessions() as s, s.begin():
        artist_id = factories.artist(s, name="Zygmunt Quellenberg", slug="zygmunt-q").id
    assert museum.ok(q="Quellenberg")["total_count"] == 0  # not indexed yet
    assert reindex(museum.engine).written == 1
    museum.announce()
    (hit,) = museum.ok(q="Quellenberg")["_embedded"]["results"]
    assert hit["_links"]["self"]["href"] == f"{museum.url}/api/artists/{artist_id}"
    with museum.stores.sessions() as s, s.begin():
        s.execute(delete(Artist).where(Artist.id == artist_id))
    (stale,) = museum.ok(q="Quellenberg")["_embedded"]["results"]  # still in the index
    assert stale == hit
    gone = requests.get(stale["_links"]["self"]["href"], headers=museum.xapp, timeout=20)
    assert gone.status_code == 404
    assert reindex(museum.engine).removed == 1
    museum.announce()
    assert museum.ok(q="Quellenberg")["total_count"] == 0
    assert reindex(museum.engine).written == 0  # nothing else changed


def test_reindex_command(museum: Museum, base_settings: Settings) -> None:
    env = {
        "INSTANCE_DIR": str(base_settings.instance_dir),
        "DATABASE_URL": base_settings.database_url,
    }
    result = CliRunner().invoke(main, ["search", "reindex"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "0 written, 0 removed" in result.output  # the loaders left the index up to date
    # No artist for "unknown American", "British School" and the like (rule 6 of artists.py).
    assert "392 artist, 505 artwork" in result.output


@pytest.mark.parametrize("q", ["Turner", "untitled", "portrait", "Teenie Harris", "landscape"])
def test_a_page_costs_at_most_one_query_per_tier_whatever_its_size(museum: Museum, q: str) -> None:
    """Hits come with their fields from each tier's read: no query per hit, nor for the page."""
    # The token's first request also reads its application's limit: not counted.
    total = int(museum.ok(q=q, size=1)["total_count"])
    for size, offset in ((1, 0), (10, 0), (50, 0), (5, min(20, total - 1))):
        museum.announce()  # not from memory: read
        with counting(museum.engine) as statements:
            body = museum.ok(q=q, size=size, offset=offset)
        assert len(body["_embedded"]["results"]) <= size
        # Nothing else on the path, but the check that the artworks found are still shown
        # (the index may lag the catalog): one read of their ids.
        others = [s for s in statements if "search_" not in s]
        assert len(others) <= 1 and all("FROM artworks" in s for s in others), statements
        # The total (its whole last word first, then the prefix when the word alone does not
        # fill the window), the artists the query names (their hits, fields and all), then
        # one read per tier at most (hits and their fields together: the named artists'
        # works, exact, title start, phrase, prefix, title, anywhere); a deep page also
        # counts the tiers it starts past.
        reads = [s for s in statements if "permalink" in s]
        assert 1 <= len(reads) <= 8 and len(statements) <= 3 + 8 + 1 + (6 if offset else 0)


def test_a_query_serves_its_window_and_counts_no_further(
    museum: Museum, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting stops at the window: ``total_count`` says the window, its pages are the best
    matches in the same order, and past it nothing (a deep page does not count on)."""
    ranked = [r["_links"]["self"]["href"] for r in museum.walk(q="Turner", size=7)]
    assert len(ranked) > 12
    monkeypatch.setattr(service, "WINDOW", 12)
    museum.announce()  # the pages kept in memory were read with the other window
    assert museum.ok(q="Turner")["total_count"] == 12
    assert [r["_links"]["self"]["href"] for r in museum.walk(q="Turner", size=5)] == ranked[:12]
    last = museum.ok(q="Turner", offset=10, size=5)
    assert len(last["_embedded"]["results"]) == 2 and "next" not in last["_links"]
    beyond = museum.ok(q="Turner", offset=12)
    assert beyond["_embedded"]["results"] == [] and beyond["total_count"] == 12
    museum.announce()
    with counting(museum.engine) as statements:
        museum.ok(q="Turner", offset=11, size=1)
    counts = [s for s in statements if "count(" in s.lower()]
    assert counts and all("limit" in s.lower() for s in counts), counts
    # The vocabulary knows "turner" is in more documents than the window: nothing is counted.
    museum.announce()
    with counting(museum.engine) as statements:
        assert museum.ok(q="Turner")["total_count"] == 12
    assert [s for s in statements if "count(" in s.lower()] == []
    # Two words: "joseph" and "mallord" as whole words fill the window, so the prefix
    # "mallord*" is not counted at all, and the total is the same.
    museum.announce()
    with counting(museum.engine) as statements:
        assert museum.ok(q="Joseph Mallord")["total_count"] == 12
    assert len([s for s in statements if "count(" in s.lower()]) == 1


def test_a_repeated_search_is_answered_from_memory(museum: Museum) -> None:
    """The same page again reads nothing, and is the same answer byte for byte; another page of
    the same query (size, offset, type) or another query is read."""
    museum.announce()
    first = museum.get(q="Beuys", size=3)
    with counting(museum.engine) as statements:
        again = museum.get(q="Beuys", size=3)
    assert statements == []
    assert (again.status_code, again.content) == (200, first.content)
    assert again.headers["Content-Type"] == first.headers["Content-Type"]
    assert again.headers["Content-Length"] == first.headers["Content-Length"]
    hal = {**museum.xapp, "Accept": "application/hal+json"}
    assert museum.get(hal, q="Beuys", size=3).headers["Content-Type"] == "application/hal+json"
    for params in (
        {"q": "Beuys", "size": 4},
        {"q": "Beuys", "size": 3, "offset": 1},
        {"q": "Beuys", "size": 3, "type": "artist"},
        {"q": "beuys", "size": 3},
    ):
        with counting(museum.engine) as statements:
            assert museum.ok(**params)["q"] == params["q"]
        assert statements, params
    # A write to other types leaves the pages in memory (not to artworks: a page of results
    # is checked against the artworks shown, see the next test).
    museum.announce(("artists", "genes"))
    with counting(museum.engine) as statements:
        assert museum.get(q="Beuys", size=3).content == first.content
    assert statements == []


def test_a_write_to_artworks_reads_the_page_again(museum: Museum) -> None:
    """Results are checked against the artworks shown, so a write to artworks (one hidden,
    say) is seen by the next search, the index not rebuilt."""
    museum.announce()
    museum.get(q="Beuys", size=3)
    museum.announce(("artworks",))
    with counting(museum.engine) as statements:
        museum.ok(q="Beuys", size=3)
    assert statements


def test_no_stale_page_after_the_reindex_command(museum: Museum, base_settings: Settings) -> None:
    """``artcat search reindex`` bumps the index's version: the next search shows the change."""
    env = cli_env(base_settings)
    museum.announce()
    assert museum.ok(q="Oxterbrook")["total_count"] == 0
    with museum.stores.sessions() as s, s.begin():
        artist_id = factories.artist(s, name="Wilhelmina Oxterbrook", slug="w-oxterbrook").id
    assert museum.ok(q="Oxterbrook")["total_count"] == 0  # not indexed: the page is kept
    assert "1 written" in run_cli(env, "search", "reindex")
    (hit,) = museum.ok(q="Oxterbrook")["_embedded"]["results"]
    assert hit["_links"]["self"]["href"] == f"{museum.url}/api/artists/{artist_id}"
    with museum.stores.sessions() as s, s.begin():
        s.execute(delete(Artist).where(Artist.id == artist_id))
    assert "1 removed" in run_cli(env, "search", "reindex")
    assert museum.ok(q="Oxterbrook")["total_count"] == 0


def test_the_vocabulary_never_counts_more_documents_than_a_word_matches(museum: Museum) -> None:
    """``documents_using`` is a lower bound of a one-word query's matches on either engine:
    the property that lets it settle a full window without counting."""
    with museum.engine.connect() as conn:
        words = conn.execute(select(SearchWord.word).order_by(SearchWord.word)).scalars().all()
        engine = engine_for(conn)
        checked = 0
        for word in words[:: max(1, len(words) // 300)]:
            used = spelling.documents_using(conn, word)
            if not used:
                continue
            whole = replace(parse_query(word), prefix=False)
            assert used <= engine.count(conn, whole, ANY, 10**6), word
            checked += 1
    assert checked > 100


def test_a_common_word_fills_the_window_without_counting(
    museum: Museum, monkeypatch: pytest.MonkeyPatch
) -> None:
    with museum.engine.connect() as conn:
        used = spelling.documents_using(conn, "turner")
        exact = engine_for(conn).count(conn, parse_query("turner"), ANY, 10**6)
    assert 2 < used <= exact
    monkeypatch.setattr(service, "WINDOW", used)
    museum.announce()
    with counting(museum.engine) as statements:
        assert museum.ok(q="Turner")["total_count"] == used
    assert not [s for s in statements if "count(" in s.lower()], statements
    assert any("search_words" in s for s in statements)
    # Past what the vocabulary knows, the matches are counted, to the exact number.
    monkeypatch.setattr(service, "WINDOW", exact + 1)
    museum.announce()
    with counting(museum.engine) as statements:
        assert museum.ok(q="Turner")["total_count"] == exact
    assert [s for s in statements if "count(" in s.lower()]
    # A kind filter or a second word: counted, whatever the vocabulary says.
    monkeypatch.setattr(service, "WINDOW", 1)
    for params in ({"q": "Turner", "type": "artwork"}, {"q": "Turner landscape"}):
        museum.announce()
        with counting(museum.engine) as statements:
            museum.ok(**params)
        assert [s for s in statements if "count(" in s.lower()], params


def _captured(engine: Engine, run: Any, *args: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """Return what ``run(*args)`` returns and the statements (with their driver values) it
    ran."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        seen.append((statement, params))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        return run(*args), seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


@pytest.mark.parametrize("q", ["portrait", "turn", "the thames", "wil tur", "ophelia"])
def test_a_prefix_query_is_counted_in_one_statement_as_its_two_counts(
    museum: Museum, q: str
) -> None:
    """The whole last word's count, then the prefix's when the word falls short: one
    statement, the same number as the two counts one after the other, for every cap."""
    query = parse_query(q)
    assert query.prefix
    with museum.engine.connect() as conn:
        engine = engine_for(conn)
        for cap in (1, 2, 5, 40, 1_000):
            for asked in (query, replace(query, kinds=("artwork",))):
                if engine.count(conn, replace(asked, prefix=False), ANY, cap) >= cap:
                    expected = cap
                else:
                    expected = engine.count(conn, asked, ANY, cap)
                got, seen = _captured(museum.engine, count_whole_first, engine, conn, asked, cap)
                assert (got, len(seen)) == (expected, 1), (asked, cap)


def test_the_prefix_is_not_counted_when_the_whole_word_fills_the_cap(museum: Museum) -> None:
    """The prefix's subquery runs only when the whole word falls short of the cap. On
    PostgreSQL its plan says so ("never executed"); on SQLite, proof by a broken prefix: the
    statement, its prefix's search expression replaced by one that FTS5 refuses, still
    answers when the word fills the cap, and fails when it does not (then it runs)."""
    with museum.engine.connect() as conn:
        engine = engine_for(conn)
        dbapi = conn.connection.dbapi_connection
        postgres = conn.dialect.name == "postgresql"
        for q, cap, runs in (("portrait", 2, False), ("zzqxjv", 2, True)):
            query = parse_query(q)
            whole_values = engine.count_sql(replace(query, prefix=False), ANY)[1]
            prefixed = {
                v for k, v in engine.count_sql(query, ANY)[1].items() if whole_values[k] != v
            }
            got, seen = _captured(museum.engine, count_whole_first, engine, conn, query, cap)
            assert (got == cap) is not runs
            ((sql, params),) = seen
            cursor = dbapi.cursor()
            try:
                if postgres:
                    cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql, params)
                    plan = "\n".join(row[0] for row in cursor.fetchall())
                    assert ("never executed" in plan) is not runs, plan
                    continue
                broken = tuple(")(" if v in prefixed else v for v in params)
                assert broken != params
                if runs:
                    with pytest.raises(Exception, match="syntax error"):
                        cursor.execute(sql, broken)
                else:
                    cursor.execute(sql, broken)
                    assert cursor.fetchall()[0][0] == cap
            finally:
                cursor.close()
