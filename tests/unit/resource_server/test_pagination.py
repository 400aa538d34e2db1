import pytest

from resource_server.errors import ParamError
from resource_server.pagination import decode_cursor, encode_cursor, parse_page_params


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
