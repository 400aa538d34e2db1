from uritemplate import URITemplate

from common.hal import Page, Urls, encode_query, image_links, query_template, templated


def test_query_in_alphabetical_order_without_nones() -> None:
    assert (
        encode_query({"user_id": "u", "cursor": "c", "x": None, "b": True})
        == "?b=true&cursor=c&user_id=u"
    )
    assert Urls("http://h").api("/artists", {}) == "http://h/api/artists"


def test_templates_expand_per_rfc6570() -> None:
    href = query_template("http://h/api/artists", ["artwork_id", "size"])
    assert href == "http://h/api/artists{?artwork_id,size}"
    assert URITemplate(href).expand(size=5) == "http://h/api/artists?size=5"
    assert templated(href)["templated"] is True


def test_image_links_prefer_the_asked_version() -> None:
    links = image_links(
        "https://i/x/{image_version}.jpg", ["large", "square"], ("four_thirds", "square")
    )
    assert links["thumbnail"] == {"href": "https://i/x/square.jpg"}
    assert links["image"]["templated"] is True
    assert image_links(None, []) == {}
    assert image_links("https://i/x.jpg", []) == {
        "thumbnail": {"href": "https://i/x.jpg"},
        "image": {"href": "https://i/x.jpg"},
    }


def test_empty_page_is_well_formed() -> None:
    assert Page("artists", [], "http://h/api/artists").render() == {
        "total_count": None,
        "_links": {"self": {"href": "http://h/api/artists"}},
        "_embedded": {"artists": []},
    }
