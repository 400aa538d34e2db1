"""Parsing the search parameters and rendering a result."""

from __future__ import annotations

import pytest

from common.api.errors import ParamError
from common.hal import Urls
from resource_server.search.resource import parse_request, result
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
