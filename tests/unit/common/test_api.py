"""Unit tests of the shared API kit: errors, parameter parsing, paging and keyset pages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import falcon
import falcon.testing
import pytest
from flask import Flask
from sqlalchemy import String, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from auth_server import errors as auth_errors
from common.api.constants import INVALID_TOKEN
from common.api.errors import (
    APIError,
    AuthError,
    Forbidden,
    NotFound,
    ParamError,
    TooManyRequests,
)
from common.api.keyset import paginate
from common.api.paging import (
    PageParams,
    decode_cursor,
    encode_cursor,
    id_cursor,
    parse_page_params,
)
from common.api.params import optional_bool, parse_bool, parse_int, single
from resource_server import errors as resource_errors

PAGING: dict[str, Any] = {"default_size": 5, "max_size": 100}


def test_errors_carry_an_int_status_and_one_body() -> None:
    assert [APIError.status, AuthError.status, Forbidden.status, NotFound.status] == [
        400,
        401,
        403,
        404,
    ]
    assert AuthError().body() == {"type": "auth_error", "message": INVALID_TOKEN}
    assert NotFound("Artist").body() == {"type": "other_error", "message": "Artist Not Found"}
    assert ParamError.invalid("user_id").body() == {
        "type": "param_error",
        "message": "User id is invalid.",
        "detail": {"user_id": ["is invalid"]},
    }
    missing = ParamError.missing("email", "password")
    assert missing.message == "Email can't be blank, Password can't be blank."
    assert missing.detail == {"email": ["can't be blank"], "password": ["can't be blank"]}
    slow = TooManyRequests("Slow down.", retry_after=7)
    assert (slow.status, slow.type, slow.retry_after) == (429, "rate_limit_error", 7)


@pytest.mark.parametrize(
    ("raw", "value"), [("true", True), ("TRUE", True), ("1", True), ("yes", True), ("no", False)]
)
def test_parse_bool_words(raw: str, value: bool) -> None:
    assert parse_bool("sample", raw) is value


@pytest.mark.parametrize("raw", ["maybe", " true", "on", "true\x00", ""])
def test_parse_bool_refuses_anything_else(raw: str) -> None:
    with pytest.raises(ParamError) as ex:
        parse_bool("total_count", raw)
    assert ex.value.message == "Total count must be true or false."
    assert ex.value.detail == {"total_count": ["must be true or false"]}


def test_parse_int_bounds_and_messages() -> None:
    assert parse_int("size", "7", minimum=1, maximum=10) == 7
    cases = {
        "x": "must be an integer",
        "1" * 13: "must be an integer",
        "0": "must be between 1 and 10",
    }
    for raw, reason in cases.items():
        with pytest.raises(ParamError) as ex:
            parse_int("size", raw, minimum=1, maximum=10)
        assert ex.value.detail == {"size": [reason]}
    with pytest.raises(ParamError) as ex:
        parse_int("offset", "-1")
    assert ex.value.detail == {"offset": ["must be >= 0"]}


def test_single_refuses_two_different_values() -> None:
    assert single({"a": ["1", "1"]}, "a") == "1"
    assert single({"a": 3}, "a") == "3"
    assert single({}, "a") is None and single({"a": []}, "a") is None
    with pytest.raises(ParamError) as ex:
        single({"size": ["5", ""]}, "size")
    assert ex.value.detail == {"size": ["is given more than once"]}
    assert optional_bool({"f": ""}, "f") is False and optional_bool({"f": "1"}, "f") is True


def test_cursor_is_base64url_of_a_json_list() -> None:
    cursor = encode_cursor([3, "0123456789abcdef01234567"])
    assert "=" not in cursor and decode_cursor(cursor) == [3, "0123456789abcdef01234567"]
    for bad in ("%%%", "", "AAAA", "x" * 50, "W10", "e30", encode_cursor(["a\x00"]), "A" * 1001):
        with pytest.raises(ParamError) as ex:
            decode_cursor(bad)
        assert ex.value.detail == {"cursor": ["is invalid"]}


def test_page_params_with_and_without_extras() -> None:
    raw = {"size": "2", "offset": "3", "sample": "1", "total_count": "yes"}
    full = parse_page_params(raw, **PAGING)
    assert (full.size, full.offset, full.sample, full.total_count) == (2, 3, True, True)
    plain = parse_page_params(raw, **PAGING, extras=False)
    assert (plain.size, plain.offset, plain.sample, plain.total_count) == (2, 0, False, True)
    assert plain.echo() == {"size": 2, "total_count": 1}
    assert parse_page_params({"size": ""}, **PAGING).echo() == {}
    with pytest.raises(ParamError):
        parse_page_params({"cursor": encode_cursor(["a"]), "offset": "1"}, **PAGING)
    parse_page_params({"cursor": encode_cursor(["a"]), "offset": "x"}, **PAGING, extras=False)


def test_id_cursor_takes_one_id_only() -> None:
    ok = PageParams(size=5, cursor=["0123456789abcdef01234567"])
    assert id_cursor(ok) is ok and id_cursor(PageParams(size=5)).cursor is None
    for values in (["x"], [1], ["0123456789abcdef01234567", "0123456789abcdef01234567"]):
        with pytest.raises(ParamError):
            id_cursor(PageParams(size=5, cursor=values))


class Base(DeclarativeBase):
    """A scratch schema for paging tests."""


class Thing(Base):
    """A row with a sortable id."""

    __tablename__ = "things"
    id: Mapped[str] = mapped_column(String(24), primary_key=True)


@pytest.fixture
def session() -> Iterator[Session]:
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        s.add_all(Thing(id=f"{n:024x}") for n in range(5))
        s.commit()
        yield s
    engine.dispose()


def test_keyset_pages_follow_their_cursors(session: Session) -> None:
    seen: list[str] = []
    raw = {"size": "2", "total_count": "1"}
    params = parse_page_params(raw, **PAGING)
    while True:
        page = paginate(session, select(Thing), [Thing.id], params)
        assert page.total_count == 5
        seen += [t.id for t in page.rows]
        if page.next_cursor is None:
            break
        params = parse_page_params({**raw, "cursor": page.next_cursor}, **PAGING)
    assert seen == [f"{n:024x}" for n in range(5)]
    back = paginate(session, select(Thing), [Thing.id], PageParams(size=2), descending=True)
    assert [t.id for t in back.rows] == [f"{n:024x}" for n in (4, 3)]


def test_falcon_mapping_turns_the_int_status_into_falcons() -> None:
    app = falcon.App()
    resource_errors.register(app)

    class Limited:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            raise TooManyRequests("Slow down.", retry_after=3)

    app.add_route("/x", Limited())
    r = falcon.testing.TestClient(app).simulate_get("/x")
    assert r.status == falcon.HTTP_429 and r.headers["Retry-After"] == "3"
    assert r.json == {"type": "rate_limit_error", "message": "Slow down."}


def test_flask_mapping_answers_the_same_error() -> None:
    app = Flask(__name__)
    auth_errors.register(app)

    @app.route("/x")
    def _x() -> str:
        raise NotFound("Application")

    r = app.test_client().get("/x")
    assert r.status_code == 404
    assert r.json == {"type": "other_error", "message": "Application Not Found"}
