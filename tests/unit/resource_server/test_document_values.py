"""Document values: a timestamp left to orjson is written as ``ts`` writes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest

from resource_server.representations.values import document_bytes, stamp, ts

STAMPS = [
    datetime(2026, 11, 25, 19, 11, 21, tzinfo=UTC),
    datetime(2026, 11, 25, 19, 11, 21, 999_999, tzinfo=UTC),  # microseconds dropped, not rounded
    datetime(2024, 2, 29, 0, 0, 0, 1, tzinfo=UTC),
    datetime(2026, 11, 25, 19, 11, 21, 5),  # naive: taken as UTC
    datetime(2026, 11, 25, 21, 11, 21, tzinfo=timezone(timedelta(hours=2))),  # another offset
    datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC),  # before year 1000: ts's own path
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    None,
]


@pytest.mark.parametrize("value", STAMPS, ids=str)
def test_a_stamped_timestamp_is_written_as_ts_writes_it(value: datetime | None) -> None:
    assert document_bytes({"at": stamp(value)}) == orjson.dumps({"at": ts(value)})


def test_only_aware_utc_timestamps_are_left_to_orjson() -> None:
    aware = datetime(2026, 1, 1, tzinfo=UTC)
    assert stamp(aware) is aware
    assert isinstance(stamp(datetime(2026, 1, 1)), str)
    assert isinstance(stamp(datetime(999, 1, 1, tzinfo=UTC)), str)
