from datetime import UTC, datetime

import pytest

from common.api.errors import ParamError
from common.api.keyset import cursor_values
from common.api.paging import PageParams, decode_cursor, encode_cursor, parse_page_params
from common.models import CollectionItem, User
from resource_server.queries.positions import anchor


def test_cursor_round_trip_and_opaque() -> None:
    c = encode_cursor(["5b3f39c0aaaaaaaaaaaaaaaa"])
    assert decode_cursor(c) == ["5b3f39c0aaaaaaaaaaaaaaaa"]
    assert "5b3f" not in c


@pytest.mark.parametrize("bad", ["%%%", "e30", "W10", "bm90IGpzb24", "x" * 2000, "W1tdXQ"])
def test_bad_cursors_are_param_errors(bad: str) -> None:
    with pytest.raises(ParamError) as ex:
        decode_cursor(bad)
    assert ex.value.detail == {"cursor": ["is invalid"]}


def test_page_params() -> None:
    p = parse_page_params({"size": "7", "total_count": "1"}, default_size=5, max_size=100)
    assert p.size == 7 and p.total_count and p.echo() == {"size": 7, "total_count": 1}
    assert parse_page_params({}, default_size=5, max_size=100).size == 5
    with pytest.raises(ParamError):
        parse_page_params(
            {"cursor": encode_cursor(["a"]), "offset": "3"}, default_size=5, max_size=100
        )
    with pytest.raises(ParamError):
        parse_page_params({"size": "1000"}, default_size=5, max_size=100)


@pytest.mark.parametrize(
    "values", [[None], [1], [True], [18446744073709551615], [1.5], [["x"]], [{}], ["a", "b"]]
)
def test_forged_cursor_values_are_param_errors(values: list[object]) -> None:
    # Any JSON list decodes; a value of the wrong type used to reach SQL (a 500 on PostgreSQL,
    # an OverflowError on SQLite for integers past 64 bits).
    with pytest.raises(ParamError) as ex:
        cursor_values([User.id], values)
    assert ex.value.detail == {"cursor": ["is invalid"]}


def test_cursor_values_take_the_sort_keys_types() -> None:
    assert cursor_values([User.id], ["5b3f39c0aaaaaaaaaaaaaaaa"]) == ["5b3f39c0aaaaaaaaaaaaaaaa"]
    assert cursor_values([CollectionItem.position, CollectionItem.id], [3, "x"]) == [3, "x"]
    when = cursor_values([User.created_at], ["2024-01-02T03:04:05+00:00"])[0]
    assert when == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    with pytest.raises(ParamError):
        cursor_values([User.created_at], ["2024-13-45"])
    with pytest.raises(ParamError):
        cursor_values([CollectionItem.position], [2**63])


@pytest.mark.parametrize("position", [-1, 2**31, 18446744073709551615, True])
def test_position_cursors_out_of_range_are_param_errors(position: object) -> None:
    page = PageParams(size=5, cursor=[position, "0" * 24, "0" * 24])
    with pytest.raises(ParamError):
        anchor(page)
