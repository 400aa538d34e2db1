"""The pages' orders and keyset positions: what a request may ask for, and blank titles."""

from __future__ import annotations

import pytest

from common.api.errors import ParamError
from common.api.paging import encode_cursor
from resource_server.web import browse


@pytest.mark.parametrize(
    ("title", "blank"),
    [("[blank]", True), ("Blank", True), (" untitled ", True), ("", True), (None, True),
     ("[Title not known]", True), ("Untitled (Red)", False), ("Blanket", False),
     ("The Blank Canvas", False)],
)  # fmt: skip
def test_blank_titles(title: str | None, blank: bool) -> None:
    assert browse.is_blank_title(title) is blank


def test_an_order_is_picked_by_name_and_an_unknown_one_refused() -> None:
    sorting = browse.ARTIST_SORTING
    assert sorting.pick({}) is sorting.default
    assert sorting.pick({"sort": "recent"}).name == "recent"
    with pytest.raises(ParamError):
        sorting.pick({"sort": "price"})


def test_a_position_takes_cursors_of_its_order_only() -> None:
    by_name = browse.ARTIST_SORTING.pick({})
    by_year = browse.ARTIST_SORTING.pick({"sort": "date"})
    recent = browse.ARTIST_SORTING.pick({"sort": "recent"})
    good = encode_cursor(["turner, joseph", "5e35a7c37d0e6ea1d94ccd1b"])
    assert browse.read_position({"after": good}, by_name).after == [
        "turner, joseph",
        "5e35a7c37d0e6ea1d94ccd1b",
    ]
    when = encode_cursor(["2026-11-26T17:00:00", "5e35a7c37d0e6ea1d94ccd1b"])
    assert browse.read_position({"before": when}, recent).before is not None
    for params, order in (
        ({"after": good}, by_year),  # a name where a year goes
        ({"after": encode_cursor([1800])}, by_year),  # too short
        ({"after": encode_cursor([True, "x"])}, by_year),  # a boolean is no year
        ({"after": encode_cursor(["not a time", "x"])}, recent),
        ({"after": "%%%"}, by_name),
        ({"after": good, "before": good}, by_name),
        ({"page": "0"}, by_name),
    ):
        with pytest.raises(ParamError):
            browse.read_position(params, order)
    assert browse.read_position({"last": "1", "page": "7"}, by_name).last


def test_the_artist_works_order_puts_titled_works_with_images_of_major_media_first() -> None:
    best = browse.WORKS_SORTING.default
    assert best.name == "best" and [k.kind for k in best.keys] == [int, int, int, int, str]
    assert browse.MEDIA_RANK["Painting"] < browse.MEDIA_RANK["Print"] < browse.OTHER_MEDIA
