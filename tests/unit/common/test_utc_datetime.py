"""Timestamps read back as aware UTC datetimes, equal to what the slower forms gave."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy.dialects import postgresql, sqlite

from common.ids import as_utc, utcnow
from common.models.base import UTCDateTime

NAIVE = [
    datetime(2024, 1, 31, 12, 0, 1, 5),
    datetime(2026, 11, 25, 23, 59, 59, 999_999),
    datetime(1, 1, 1),
    datetime(9999, 12, 31, 23, 59, 59, 999_999),
]


@pytest.mark.parametrize("value", NAIVE, ids=str)
def test_a_naive_value_is_taken_as_utc(value: datetime) -> None:
    aware = as_utc(value)
    assert aware == value.replace(tzinfo=UTC) and aware.tzinfo is UTC


def test_an_aware_value_is_converted_to_utc() -> None:
    plus_two = datetime(2026, 11, 25, 21, 11, 21, 7, tzinfo=timezone(timedelta(hours=2)))
    assert as_utc(plus_two) == plus_two and as_utc(plus_two).tzinfo is UTC
    assert as_utc(plus_two).hour == 19


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-31 12:00:01.000005",  # as SQLAlchemy writes it
        "2024-01-31 12:00:01",
        "2024-01-31T12:00:01",
        "2024-01-31 14:00:01.000005+02:00",  # written by hand with an offset: converted
        "2024-01-31 12:00:01Z",
    ],
)
def test_sqlites_text_is_read_as_aware_utc(text: str) -> None:
    dialect = sqlite.dialect()
    process = UTCDateTime().result_processor(dialect, None)
    expected = as_utc(datetime.fromisoformat(text))
    got = process(text)
    assert got == expected and got.tzinfo is UTC
    assert process(None) is None


def test_postgresqls_naive_values_are_read_as_aware_utc() -> None:
    dialect = postgresql.dialect()
    value = datetime(2024, 1, 31, 12, 0, 1, 5)
    got = UTCDateTime().process_result_value(value, dialect)
    assert got == value.replace(tzinfo=UTC) and got is not None and got.tzinfo is UTC


def test_utcnow_is_now_to_the_second() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    now = utcnow()
    after = datetime.now(UTC)
    assert before <= now <= after and now.microsecond == 0 and now.tzinfo is UTC
