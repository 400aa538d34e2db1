"""The pages' text helpers: the little Markdown of catalog texts, and which URLs may be links."""

from __future__ import annotations

import pytest

from resource_server.web.render import ENV, http_url, page_url, prose


def test_prose_keeps_bold_and_catalog_links_and_escapes_the_rest() -> None:
    text = "**Ada** <i>paints</i> [fields](/gene/colour-field) & [x](javascript:alert(1))"
    assert str(prose(text)) == (
        '<strong>Ada</strong> &lt;i&gt;paints&lt;/i&gt; <a href="/gene/colour-field">fields</a>'
        " &amp; [x](javascript:alert(1))"
    )


@pytest.mark.parametrize(
    "text",
    [
        '[a](/gene/x" onmouseover="alert(1))',
        "[a](//evil.example/x)",
        "[a](/gene/x?y=<script>)",
        "**<script>alert(1)</script>**",
    ],
)
def test_prose_never_lets_markup_through(text: str) -> None:
    html = str(prose(text))
    assert "<script" not in html and 'href="//' not in html and '" onmouseover' not in html


def test_only_web_urls_are_links() -> None:
    assert http_url(" https://museum.example/a ") == "https://museum.example/a"
    assert http_url("http://museum.example/a") == "http://museum.example/a"
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.example", "", None):
        assert http_url(bad) is None


def test_templates_autoescape_and_page_urls_encode_their_query() -> None:
    assert ENV.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    assert page_url("/search", {"q": "a&b c", "offset": None}) == "/search?q=a%26b%20c"


def _search_page(**context: object) -> str:
    values: dict[str, object] = {"q": "turner", "hits": [], "offset": 0, "size": 10}
    return ENV.get_template("search.html").render(**{**values, **context})


def test_the_search_page_says_a_count_stopped_at_the_window_is_a_floor() -> None:
    assert "1,000+ results for “turner”" in _search_page(total=1000, capped=True)
    assert "1000 results" not in _search_page(total=1000, capped=True)
    assert "1,000 results for" in _search_page(total=1000, capped=False)
    assert "1 result for" in _search_page(total=1, capped=False)


def test_the_search_page_shows_a_correction_and_the_words_as_typed() -> None:
    html = _search_page(q="warhol", original="warhal <b>", total=5, capped=False)
    assert 'Showing results for <a href="/search?q=warhol">warhol</a>.' in html
    assert "Search instead for" in html and "spelling=off" in html
    assert "<b>" not in html and "warhal &lt;b&gt;" in html  # escaped
    assert "Showing results for" not in _search_page(total=5, capped=False)
