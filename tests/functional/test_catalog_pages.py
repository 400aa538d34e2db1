"""The catalog's pages over real HTTP: content, links, paging, the public rule, escaping, cost."""

from __future__ import annotations

import re
from html import unescape

import pytest
import requests
from sqlalchemy import Engine, delete, func, select, update

from common.models import Artist, Artwork, ArtworkArtist, Gene, Partner, Profile, Show
from tests.functional.catalog_support import ZERO_ID, Catalog, counting

pytestmark = pytest.mark.functional

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
BIOGRAPHY = "**Ada** paints [landscapes](/gene/landscapes) [evil](javascript:alert(1))"
# Statements a page may run, whatever its size: the list, its cards' artists and partners,
# an item and its side lists.
MAX_LIST_QUERIES = 3
MAX_ITEM_QUERIES = 6


def page(catalog: Catalog, path: str, **params: str) -> requests.Response:
    """GET a page as a browser would (no token), without following redirects."""
    return requests.get(
        catalog.url + path, params=params or None, headers={"Accept": "text/html"},
        allow_redirects=False, timeout=20,
    )  # fmt: skip


def ok(catalog: Catalog, path: str, **params: str) -> str:
    """GET a page, assert a 200 HTML answer and return its text."""
    r = page(catalog, path, **params)
    assert r.status_code == 200, (path, r.status_code, r.text[:300])
    assert r.headers["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["Content-Security-Policy"]
    return r.text


def hrefs(html: str) -> list[str]:
    """Return the link targets of a page, unescaped."""
    return [unescape(h) for h in re.findall(r'href="([^"]+)"', html)]


def first(catalog: Catalog, stmt: object) -> object:
    """Return the first scalar of a select on the test database."""
    return catalog.scalars(stmt)[0]


def published_artwork_with_artist(catalog: Catalog) -> tuple[Artwork, Artist]:
    """Return a published artwork that has an artist, and that artist."""
    with catalog.sessions() as s:
        row = s.execute(
            select(Artwork, Artist)
            .join(ArtworkArtist, ArtworkArtist.artwork_id == Artwork.id)
            .join(Artist, Artist.id == ArtworkArtist.artist_id)
            .where(Artwork.published.is_(True))
            .order_by(Artwork.id)
            .limit(1)
        ).one()
        s.expunge_all()
        return row[0], row[1]


@pytest.mark.parametrize(
    "path", ["/artists", "/artworks", "/genes", "/partners", "/profiles", "/shows"]
)
def test_every_list_page_lists_its_kind_and_pages_with_the_api_cursors(
    catalog: Catalog, path: str
) -> None:
    html = ok(catalog, path, size="5")
    assert html.count("<h1>") == 1 and 'class="skip" href="#main"' in html
    item_links = [h for h in hrefs(html) if h.startswith(path[:-1] + "/")]
    assert len(item_links) == 5
    # The sorted lists page by their own keyset (``after``), the others by the API's cursors.
    (next_href,) = [unescape(h) for h in re.findall(r'rel="next" href="([^"]+)"', html)]
    assert next_href.startswith((path + "?after=", path + "?cursor=")) and "size=5" in next_href
    second = requests.get(catalog.url + next_href, timeout=20).text
    second_links = [h for h in hrefs(second) if h.startswith(path[:-1] + "/")]
    assert second_links and not set(second_links) & set(item_links)
    for link in item_links[:2]:
        ok(catalog, link)


def test_an_artist_page_shows_the_works_and_they_lead_back(catalog: Catalog) -> None:
    work, artist = published_artwork_with_artist(catalog)
    html = ok(catalog, f"/artist/{artist.slug}")
    assert f"<h1>{artist.name}</h1>" in unescape(html)
    assert f"/artwork/{work.slug}" in hrefs(html) or 'rel="next"' in html
    assert ok(catalog, f"/artist/{artist.id}") == html  # by id or by slug
    artwork_html = ok(catalog, f"/artwork/{work.slug}")
    assert f"/artist/{artist.slug}" in hrefs(artwork_html)
    # The API answers only with a token: its address is shown, and the link explains tokens.
    assert f"<code>/api/artworks/{work.id}</code>" in artwork_html
    assert f"/api/artworks/{work.id}" not in hrefs(artwork_html)
    assert "/docs#tokens" in hrefs(artwork_html)


def test_an_artwork_page_shows_its_image_date_medium_dimensions_and_credit(
    catalog: Catalog,
) -> None:
    work, _ = published_artwork_with_artist(catalog)
    dims = {"in": {"text": "10 x 20 in"}, "cm": {"text": "25.4 x 50.8 cm"}}
    with catalog.sessions() as s, s.begin():
        s.execute(
            update(Artwork).where(Artwork.id == work.id).values(
                image_url="https://images.example.org/w/{image_version}.jpg",
                image_versions=["small", "large"], date="c. 1890", medium="Oil on canvas",
                dimensions=dims, credit_line="Presented by the artist 1901",
                provenance="Mrs Smith, London; sold 1899",
            )
        )  # fmt: skip
    html = unescape(ok(catalog, f"/artwork/{work.id}"))
    img = re.search(r"<img [^>]+>", html)
    assert img is not None
    assert 'src="https://images.example.org/w/large.jpg"' in img.group(0)
    assert 'loading="lazy"' in img.group(0) and f'alt="{work.title}' in img.group(0)
    for text in ("c. 1890", "Oil on canvas", "25.4 x 50.8 cm", "10 x 20 in"):
        assert text in html
    # Each text under the name that says what it is.
    assert "<dt>Credit line</dt><dd>Presented by the artist 1901</dd>" in html
    assert '<dt>Provenance</dt><dd class="pre">Mrs Smith, London; sold 1899</dd>' in html


def test_the_docs_explain_how_to_get_a_token(catalog: Catalog) -> None:
    """The pages' API links lead to /docs#tokens: that section exists and says what to do."""
    html = ok(catalog, "/docs")
    assert 'id="tokens"' in html
    assert "/api/tokens/xapp_token" in html and "X-Xapp-Token" in html
    assert "/account/applications" in hrefs(html)


def test_gene_partner_and_show_pages_list_their_artworks(catalog: Catalog) -> None:
    gene = first(catalog, select(Gene.slug).order_by(Gene.id))
    partner = first(catalog, select(Partner.slug).order_by(Partner.id))
    show = first(catalog, select(Show.slug).order_by(Show.id))
    for path in (f"/gene/{gene}", f"/partner/{partner}", f"/show/{show}"):
        html = ok(catalog, path)
        assert '<h2 id="works-h">Artworks</h2>' in html


def test_a_profile_page_is_its_permalink_and_leads_to_its_owner(catalog: Catalog) -> None:
    """A profile's ``permalink`` (no WEB_URL) is its page here, found by handle or id."""
    with catalog.sessions() as s:
        profile, partner = s.execute(
            select(Profile, Partner)
            .join(Partner, Partner.id == Profile.owner_id)
            .where(Profile.owner_type == "partner")
            .order_by(Profile.id)
            .limit(1)
        ).one()
        s.expunge_all()
    body = catalog.ok(f"/profiles/{profile.id}")
    href = body["_links"]["permalink"]["href"]
    assert href == f"{catalog.url}/profile/{profile.handle}"
    for url in (href, f"{catalog.url}/profile/{profile.id}"):
        html = requests.get(url, timeout=20).text
        assert f"<h1>{partner.name}</h1>" in unescape(html)
        assert f"/partner/{partner.slug}" in hrefs(html)
        assert f"<code>/api/profiles/{profile.id}</code>" in html
        assert "/docs#tokens" in hrefs(html)
    with catalog.sessions() as s, s.begin():
        s.execute(
            update(Profile)
            .where(Profile.id == profile.id)
            .values(description=HOSTILE, website="javascript:alert(1)")
        )
    html = ok(catalog, f"/profile/{profile.handle}")
    assert "<script>" not in html and "javascript:" not in html
    assert page(catalog, "/profile/no-such-handle").status_code == 404


def test_unpublished_artworks_appear_on_no_page(catalog: Catalog) -> None:
    work, artist = published_artwork_with_artist(catalog)
    title = "Hidden Study Nobody May See"
    with catalog.sessions() as s, s.begin():
        s.execute(update(Artwork).where(Artwork.id == work.id).values(published=False, title=title))
    assert page(catalog, f"/artwork/{work.id}").status_code == 404
    assert page(catalog, f"/artwork/{work.slug}").status_code == 404
    pages = [f"/artist/{artist.slug}", "/artworks?size=100"]
    for path in pages:
        html = ok(catalog, path)
        while True:
            assert title not in html and f"/artwork/{work.slug}" not in hrefs(html), path
            nexts = [unescape(h) for h in re.findall(r'rel="next" href="([^"]+)"', html)]
            if not nexts:
                break
            html = ok(catalog, nexts[0])


def test_hostile_catalog_data_is_escaped(catalog: Catalog) -> None:
    work, artist = published_artwork_with_artist(catalog)
    with catalog.sessions() as s, s.begin():
        s.execute(
            update(Artist)
            .where(Artist.id == artist.id)
            .values(name=HOSTILE, biography=f"{BIOGRAPHY} {HOSTILE} **[x](/a/b)<b>**")
        )
        s.execute(
            update(Artwork).where(Artwork.id == work.id).values(
                title=HOSTILE, medium=HOSTILE, website="javascript:alert(1)",
                image_url='javascript:alert(1)//"onerror="x', image_versions=[],
            )
        )  # fmt: skip
    for path in (f"/artist/{artist.id}", f"/artwork/{work.id}", "/artists?size=100"):
        html = ok(catalog, path)
        assert "<script>" not in html and "<img src=x" not in html, path
        assert not re.search(r'(?:href|src)="\s*javascript', html, re.I), path
    assert "&lt;script&gt;" in ok(catalog, f"/artwork/{work.id}")
    # The little Markdown of the texts: bold and catalog links only, never a script URL.
    html = ok(catalog, f"/artist/{artist.id}")
    assert '<strong>Ada</strong> paints <a href="/gene/landscapes">landscapes</a>' in html
    assert "[evil](javascript:alert(1))" in html and "&lt;b&gt;" in html  # left as text


def test_unknown_items_and_bad_cursors_get_html_errors(catalog: Catalog) -> None:
    for path in (f"/artist/{ZERO_ID}", "/gene/no-such-gene", f"/show/{ZERO_ID}",
                 "/partner/x", f"/artwork/{ZERO_ID}"):  # fmt: skip
        r = page(catalog, path)
        assert r.status_code == 404 and r.headers["Content-Type"].startswith("text/html"), path
    r = page(catalog, "/artists", cursor="<script>")
    assert r.status_code == 400 and r.headers["Content-Type"].startswith("text/html")
    assert "<script>" not in r.text
    assert page(catalog, "/artworks", size="1000").status_code == 400


def test_pages_take_a_bounded_number_of_queries_whatever_their_size(
    catalog: Catalog, engine: Engine
) -> None:
    work, artist = published_artwork_with_artist(catalog)
    gene = first(catalog, select(Gene.slug).order_by(Gene.id))
    partner = first(catalog, select(Partner.slug).order_by(Partner.id))
    show = first(catalog, select(Show.slug).order_by(Show.id))
    lists = ["/artists", "/artworks", "/genes", "/partners", "/shows"]
    items = [f"/artist/{artist.slug}", f"/artwork/{work.slug}", f"/gene/{gene}",
             f"/partner/{partner}", f"/show/{show}"]  # fmt: skip
    for paths, limit in ((lists, MAX_LIST_QUERIES), (items, MAX_ITEM_QUERIES)):
        for path in paths:
            counts = []
            for size in ("2", "100"):
                ok(catalog, path, size=size)
                with counting(engine) as statements:
                    ok(catalog, path, size=size)
                counts.append(len(statements))
            assert counts[0] == counts[1] <= limit, (path, counts)


def test_the_search_page_finds_artists_and_hides_unpublished_works(catalog: Catalog) -> None:
    assert "<h1>Search</h1>" in ok(catalog, "/search")
    work, artist = published_artwork_with_artist(catalog)
    html = ok(catalog, "/search", q=artist.name)
    assert f"/artist/{artist.id}" in hrefs(html)
    with catalog.sessions() as s, s.begin():
        s.execute(update(Artwork).where(Artwork.id == work.id).values(published=False))
    html = ok(catalog, "/search", q=work.title)
    assert f"/artwork/{work.id}" not in hrefs(html)
    hostile = ok(catalog, "/search", q=HOSTILE)
    assert "<script>" not in hostile and "&lt;script&gt;" in hostile


@pytest.mark.parametrize(
    ("path", "model", "label"),
    [("/genes", Gene, "genes"), ("/partners", Partner, "partners"), ("/shows", Show, "shows")],
)
def test_the_other_lists_are_counted_and_sorted_by_name_or_recency(
    catalog: Catalog, path: str, model: type, label: str
) -> None:
    kind = path[1:-1]
    names = catalog.scalars(select(model.slug).order_by(func.lower(model.name), model.id))
    recent = catalog.scalars(select(model.slug).order_by(model.created_at.desc(), model.id.desc()))
    for sort, expected in (("", names), ("recent", recent)):
        html = ok(catalog, path, size="7", **({"sort": sort} if sort else {}))
        assert f"<strong>{len(expected):,}</strong> {label}" in html
        seen: list[str] = []
        while True:
            main = html.split('id="main"', 1)[1]
            seen += re.findall(rf'href="/{kind}/([^"?]+)"', main)
            nexts = [unescape(h) for h in re.findall(r'rel="next" href="([^"]+)"', html)]
            if not nexts:
                break
            assert (f"sort={sort}" in nexts[0]) == bool(sort)
            html = ok(catalog, nexts[0])
        assert seen == expected, (path, sort)


def test_an_artwork_by_no_one_named_shows_its_attribution(catalog: Catalog) -> None:
    """A work whose credits name no person ("British School 18th century") says so."""
    work, _ = published_artwork_with_artist(catalog)
    with catalog.sessions() as s, s.begin():
        s.execute(delete(ArtworkArtist).where(ArtworkArtist.artwork_id == work.id))
        s.execute(
            update(Artwork)
            .where(Artwork.id == work.id)
            .values(cultural_maker="British School 18th century")
        )
    html = unescape(ok(catalog, f"/artwork/{work.id}"))
    assert '<p class="by">British School 18th century</p>' in html


def test_no_link_of_a_page_is_a_dead_end(catalog: Catalog) -> None:
    """Every link the pages show a reader (those this server answers) opens something a
    browser without a token can read: no 401 from the API, no 404."""
    from common.serve import is_auth_path

    work, artist = published_artwork_with_artist(catalog)
    seen: set[str] = set()
    for path in ("/", "/docs", "/artworks", "/artists", "/search?q=the",
                 f"/artwork/{work.slug}", f"/artist/{artist.slug}"):  # fmt: skip
        for href in hrefs(ok(catalog, path)):
            target = href.split("#", 1)[0]
            if not target.startswith("/") or is_auth_path(target) or target in seen:
                continue
            seen.add(target)
            answer = page(catalog, target)
            assert answer.status_code in (200, 302), (path, href, answer.status_code)
    assert any(t.startswith("/artwork/") for t in seen) and "/docs" in seen
