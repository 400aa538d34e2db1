"""Parsing the search parameters and rendering a result."""

from __future__ import annotations

import pytest

from common.api.errors import ParamError
from common.catalog_version import CATALOG_TYPES
from common.hal import Urls
from resource_server.doccache import DocumentCache
from resource_server.search.resource import page_key, parse_request, result
from resource_server.search.service import Hit, parse_request_kinds

URLS = Urls("https://api.example.org")


def test_defaults_and_echo() -> None:
    request, echo = parse_request({"q": "Turner"})
    assert (request.q, request.size, request.offset, request.types) == ("Turner", 10, 0, ())
    assert echo == {"q": "Turner"}
    request, echo = parse_request(
        {"q": "Turner", "size": "5", "offset": "10", "type": ["artist", "gene,artist"]}
    )
    assert (request.size, request.offset, request.types) == (5, 10, ("artist", "gene"))
    assert echo == {"q": "Turner", "size": 5, "type": "artist,gene,artist"}


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({}, "q"),
        ({"q": " "}, "q"),
        ({"q": "a" * 501}, "q"),
        ({"q": "a", "size": "0"}, "size"),
        ({"q": "a", "size": "51"}, "size"),
        ({"q": "a", "offset": "-3"}, "offset"),
        ({"q": "a", "type": "painting"}, "type"),
    ],
)
def test_bad_parameters_name_themselves(params: dict[str, str], name: str) -> None:
    with pytest.raises(ParamError) as raised:
        parse_request(params)
    assert list(raised.value.detail or {}) == [name]


def test_filters_in_q_and_the_type_parameter_combine() -> None:
    assert parse_request_kinds("Turner", ()) == ("Turner", None)
    text, kinds = parse_request_kinds("Turner more:pagemap:metatags-og_type:artist", ())
    assert (text.strip(), kinds) == ("Turner", ("artist",))
    assert parse_request_kinds("x more:pagemap:metatags-og_type:artist", ("gene",))[1] == ()
    with pytest.raises(ParamError):
        parse_request_kinds("x more:pagemap:metatags-og_type:painting", ())
    with pytest.raises(ParamError):
        parse_request_kinds("more:pagemap:metatags-og_type:artist", ())


def test_result_links() -> None:
    hit = Hit("fair", "f" * 24, "Art Basel", None, "https://img/x.jpg", "/fair/art-basel")
    assert result(hit, URLS) == {
        "type": None,
        "title": "Art Basel",
        "description": None,
        "og_type": "fair",
        "_links": {
            "self": {"href": f"https://api.example.org/api/fairs/{'f' * 24}"},
            "thumbnail": {"href": "https://img/x.jpg"},
        },
    }
    artist = Hit("artist", "a" * 24, "Turner", "British", None, "/artist/turner")
    rendered = result(artist, URLS, "https://www.example.org")
    assert rendered["type"] == "artist"
    assert rendered["_links"]["permalink"] == {"href": "https://www.example.org/artist/turner"}
    # Without WEB_URL: this server's own artist page, by id.
    own = result(artist, URLS)["_links"]["permalink"]
    assert own == {"href": f"https://api.example.org/artist/{'a' * 24}"}


def key(params: dict[str, object], base: str = URLS.base) -> object:
    """Return the cache key of the page a request asks for."""
    return page_key(base, *parse_request(params))


def test_every_parameter_of_a_page_is_in_its_cache_key() -> None:
    """Pages that differ in anything the answer shows are filed apart; the same request twice
    (the parameters in another order) is the same page."""
    base = {"q": "Turner", "size": "5", "offset": "10", "type": "artist"}
    variants = [
        base,
        {**base, "q": "turner"},
        {**base, "q": "Turner "},
        {**base, "size": "6"},
        {**base, "offset": "0"},
        {k: v for k, v in base.items() if k != "offset"},  # offset=0, not echoed
        {**base, "type": "gene"},
        {**base, "type": "artist,artist"},  # the same kinds, echoed as given
        {k: v for k, v in base.items() if k != "type"},
        {**base, "size": "10"},
        {k: v for k, v in base.items() if k != "size"},  # the default size, not echoed
    ]
    keys = [key(v) for v in variants]
    assert len(set(keys)) == len(keys) - 1  # offset=0 and no offset render alike
    assert keys[4] == keys[5]
    assert key(dict(reversed(base.items()))) == keys[0]
    assert key(base, "https://other.example.org") != keys[0]
    cache = DocumentCache(kinds=("search",))
    types = (b"1",) * len(CATALOG_TYPES)
    for i, filed in enumerate(keys):
        cache.put(b"7", filed, f"page {i}".encode(), types)
    assert len(cache) == len(keys) - 1
    assert cache.get(b"7", keys[3], types) == b"page 3"
