"""Low finding: the public search page amplified work 25-35 times, and pages had no limit.

The attack: anyone (no token needed on ``/search``) sends an unknown word of a few hundred
letters, or a query of many long unknown words. Spelling correction built every one-edit
variant of each word (some 26,000 strings for a 500-letter word) into one statement; and one
address could ask for pages as fast as the server answered them.

What holds, over real HTTP on both backends:

- such queries get an ordinary answer (on the page and on ``/api/search`` with an XAPP token)
  while the correction looks up at most ``MAX_VARIANTS_PER_QUERY`` variants, and none for a
  word longer than ``MAX_WORD_CHARS`` or a query of more than ``MAX_CORRECTED_WORDS`` unknown
  words: counted by ``artcat_search_spelling_variants_total`` on ``/metrics``, not timed; a
  real misspelling is still corrected;
- a flood of pages from one address gets a 429 page with ``Retry-After`` while another
  address (a client socket bound to 127.0.0.2) is served, a forged ``X-Forwarded-For`` from a
  peer that is not the trusted proxy changes nothing, static files, health and the API are not
  limited, and the flooding address is served again once its window has moved on; behind the
  trusted proxy the forwarded client address is what counts (an IPv6 address by its /64).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from requests.adapters import HTTPAdapter
from sqlalchemy import Engine

from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.tate import load_tate
from common.catalog_version import bump_catalog_version
from common.search import spelling
from common.search.indexer import reindex
from common.serve import proxy_options
from common.settings import ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests import factories
from tests.constants import SAMPLE_DATA
from tests.db_state import truncate_all
from tests.functional.user_api_support import xapp_headers
from tests.servers import CHECKED_PORTS, LiveServer, start_server

pytestmark = [pytest.mark.functional, pytest.mark.data]
# An artist's name of three long words (22 and 23 letters), added to the museum sample.
LONG_NAME = ("kunstgewerbeschullehrer", "landschaftsaquarellist", "selbstbildnisfotografin")


@pytest.fixture(scope="module")
def museum(engine: Engine, stores: Stores, base_settings: Settings) -> Iterator[Engine]:
    """The museum sample, its search index and vocabulary built by its loaders."""
    truncate_all(engine)
    load_tate(engine, SAMPLE_DATA / "tate", progress=False)
    load_cmoa(engine, SAMPLE_DATA / "cmoa", progress=False)
    with stores.sessions() as session, session.begin():
        factories.artist(session, name=" ".join(LONG_NAME).title(), slug="long-name")
    reindex(engine)
    bump_catalog_version(stores.redis, base_settings.redis_prefix, None)
    yield engine
    truncate_all(engine)
    bump_catalog_version(stores.redis, base_settings.redis_prefix, None)


@pytest.fixture(scope="module")
def xapp(museum: Engine, stores: Stores) -> dict[str, str]:
    """The headers of an application token."""
    return xapp_headers(stores.sessions, stores)


def gibberish(rnd: random.Random, letters: int) -> str:
    """Return a word of consonants: in no vocabulary, near no word of it."""
    return "".join(rnd.choice("bcdfghjklmnpqrstvwxz") for _ in range(letters))


def spelling_work(base: str) -> tuple[float, dict[str, float]]:
    """Return the variants looked up so far and the queries skipped by reason (/metrics)."""
    variants, skipped = 0.0, {}
    page = requests.get(f"{base}/metrics", timeout=20).text
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            if sample.name == "artcat_search_spelling_variants_total":
                variants = sample.value
            elif sample.name == "artcat_search_spelling_skipped_total":
                skipped[sample.labels["reason"]] = sample.value
    return variants, skipped


def search_both(base: str, xapp: dict[str, str], q: str) -> None:
    """Search ``q`` on the page and on the API: an ordinary answer from each."""
    page = requests.get(f"{base}/search", params={"q": q}, timeout=30)
    assert page.status_code == 200, page.text[:300]
    assert page.headers["Content-Type"].startswith("text/html")
    api = requests.get(
        f"{base}/api/search", params={"q": q}, headers=xapp, allow_redirects=False, timeout=30
    )
    assert api.status_code in (200, 302), api.text[:300]


def test_long_unknown_words_are_answered_without_a_lookup(
    resource_server: LiveServer, xapp: dict[str, str]
) -> None:
    base, rnd = resource_server.url, random.Random()
    for q in (
        gibberish(rnd, 40),
        gibberish(rnd, 200),
        f"turner {gibberish(rnd, spelling.MAX_WORD_CHARS + 1)}",
        " ".join(gibberish(rnd, 20) for _ in range(20)),  # 20 words (12 are read)
    ):
        before, skipped_before = spelling_work(base)
        search_both(base, xapp, q)
        after, skipped_after = spelling_work(base)
        assert after == before, q  # not one variant looked up
        assert sum(skipped_after.values()) == sum(skipped_before.values()) + 2, q


def test_many_long_misspelt_words_look_up_at_most_the_bound(
    resource_server: LiveServer, xapp: dict[str, str]
) -> None:
    base = resource_server.url
    misspelt = [w[:5] + w[5] + w[5:] for w in LONG_NAME]  # a letter doubled: one edit each
    assert all(len(w) <= spelling.MAX_WORD_CHARS for w in misspelt)
    unbounded = sum(len(spelling.variants(w)) for w in misspelt)
    assert unbounded > spelling.MAX_VARIANTS_PER_QUERY  # the query's budget is what binds
    for endpoint in ("/search", "/api/search"):
        before, _ = spelling_work(base)
        r = requests.get(
            f"{base}{endpoint}",
            params={"q": " ".join(misspelt)},
            headers=xapp,
            allow_redirects=False,
            timeout=30,
        )
        assert spelling_work(base)[0] - before == spelling.MAX_VARIANTS_PER_QUERY, endpoint
        if endpoint == "/search":  # the page follows the correction itself
            assert r.status_code == 200 and " ".join(LONG_NAME).title() in r.text
        else:
            assert r.status_code == 302
            assert r.headers["Location"].endswith("?q=" + "%20".join(LONG_NAME))
    # One more unknown word than are corrected: nothing is looked up.
    before, _ = spelling_work(base)
    more = [*misspelt, *(gibberish(random.Random(), 8) for _ in range(2))]
    search_both(base, xapp, " ".join(more[: spelling.MAX_CORRECTED_WORDS + 1]))
    assert spelling_work(base)[0] == before


def test_a_real_misspelling_is_still_corrected(
    resource_server: LiveServer, xapp: dict[str, str]
) -> None:
    page = requests.get(f"{resource_server.url}/search", params={"q": "Honore Daumeir"}, timeout=30)
    assert page.status_code == 200 and "Honor\u00e9 Daumier" in page.text
    api = requests.get(
        f"{resource_server.url}/api/search",
        params={"q": "Honore Daumeir", "type": "artist"},
        headers=xapp,
        allow_redirects=False,
        timeout=30,
    )
    assert api.status_code == 302 and "Daumier" in api.headers["Location"]


# -- the pages' limit per client address ---------------------------------------------------


class FromAddress(HTTPAdapter):
    """Connect from a given loopback address (loopback accepts all of 127.0.0.0/8)."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """Bind every connection's socket to the address before it connects."""
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def client(address: str) -> requests.Session:
    """A session whose requests come from ``address``."""
    session = requests.Session()
    session.mount("http://", FromAddress(address))
    return session


@pytest.fixture
def limited_settings(resource_settings: ResourceSettings) -> Iterator[ResourceSettings]:
    """Six pages per two seconds per address, counted under a Redis prefix of their own."""
    settings = replace(
        resource_settings,
        page_rate_limit="3/second",
        page_rate_limit_burst=6,
        redis_prefix=f"{resource_settings.redis_prefix}-pages-{time.monotonic_ns()}",
    )
    yield settings


def serve(settings: ResourceSettings, stores: Stores, **options: Any) -> LiveServer:
    """Start a catalog server with ``settings`` whose responses are checked like the others'."""
    live = start_server(create_resource(settings, stores), **options)
    CHECKED_PORTS.add(int(live.server.effective_port))
    return live


def flood(session: requests.Session, url: str, n: int = 30, **kw: Any) -> list[requests.Response]:
    """Ask for a page ``n`` times in a row."""
    return [session.get(url, timeout=20, **kw) for _ in range(n)]


def assert_refused(r: requests.Response) -> int:
    """Assert the 429 page; return its Retry-After."""
    assert r.status_code == 429, r.status_code
    assert r.headers["Content-Type"].startswith("text/html")
    assert "Too many requests" in r.text and "<form" in r.text  # the site's own page
    retry = int(r.headers["Retry-After"])
    assert 1 <= retry <= 2  # the window is two seconds
    return retry


def test_a_flood_from_one_address_is_refused_and_others_are_served(
    limited_settings: ResourceSettings, stores: Stores, museum: Engine, xapp: dict[str, str]
) -> None:
    live = serve(limited_settings, stores)
    try:
        flooder, other = client("127.0.0.1"), client("127.0.0.2")
        search = f"{live.url}/search?q=turner"
        answers = flood(flooder, search)
        served = [r for r in answers if r.status_code == 200]
        assert 1 <= len(served) <= 6 + 1  # the burst (and what the window let go meanwhile)
        first = next(i for i, r in enumerate(answers) if r.status_code == 429)
        assert all(r.status_code == 429 for r in answers[first:])
        retry = assert_refused(answers[-1])

        # Another address is served; a forged forwarding header from this peer changes nothing.
        assert other.get(search, timeout=20).status_code == 200
        assert other.get(f"{live.url}/artists", timeout=20).status_code == 200
        forged = flooder.get(search, headers={"X-Forwarded-For": "198.51.100.7"}, timeout=20)
        assert_refused(forged)
        for path in ("/artworks", "/", "/docs"):  # every page counts, not only search
            assert_refused(flooder.get(f"{live.url}{path}", timeout=20))
        # Neither the static files, nor health, nor the API (limited per application).
        for path in ("/static/site.css", "/docs/assets/swagger-ui.css", "/healthz", "/readyz"):
            assert flooder.get(f"{live.url}{path}", timeout=20).status_code == 200, path
        api = flooder.get(
            f"{live.url}/api/search", params={"q": "turner"}, headers=xapp, timeout=20
        )
        assert api.status_code == 200

        # Once the window has moved on, the address is served again (polled, no fixed sleep).
        deadline = time.monotonic() + retry + 10
        while (status := flooder.get(search, timeout=20).status_code) == 429:
            assert time.monotonic() < deadline, "still refused long after Retry-After"
            time.sleep(0.05)
        assert status == 200
    finally:
        live.stop()
        stores.redis.delete(*stores.redis.keys(f"{limited_settings.redis_prefix}:*") or ["-"])


def test_behind_the_trusted_proxy_the_forwarded_client_counts(
    limited_settings: ResourceSettings, stores: Stores, museum: Engine
) -> None:
    settings = replace(limited_settings, trusted_proxy="127.0.0.1")
    live = serve(settings, stores, **proxy_options(settings))
    try:
        proxy = client("127.0.0.1")
        url = f"{live.url}/artists"

        def via(address: str) -> requests.Response:
            return proxy.get(url, headers={"X-Forwarded-For": address}, timeout=20)

        for flooder, neighbour, stranger in (
            ("203.0.113.7", "203.0.113.7", "203.0.113.8"),
            ("2001:db8:0:5::1", "2001:db8:0:5::2", "2001:db8:0:6::1"),  # IPv6: per /64
        ):
            answers = [via(flooder) for _ in range(20)]
            assert answers[0].status_code == 200
            assert_refused(answers[-1])
            assert_refused(via(neighbour))
            assert via(stranger).status_code == 200, stranger
        assert via("198.51.100.1").status_code == 200  # the proxy's own budget is not spent
    finally:
        live.stop()
        stores.redis.delete(*stores.redis.keys(f"{settings.redis_prefix}:*") or ["-"])
