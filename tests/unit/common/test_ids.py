from datetime import UTC, datetime, timedelta, timezone

from common.ids import format_ts, format_ts_ms, is_id, new_id, slugify, stable_id


def test_new_ids_are_24_hex_unique_and_time_ordered() -> None:
    ids = [new_id() for _ in range(1000)]
    assert all(is_id(i) for i in ids)
    assert len(set(ids)) == 1000


def test_stable_id_is_deterministic() -> None:
    assert stable_id("tate", "artwork", 1) == stable_id("tate", "artwork", 1)
    assert stable_id("tate", "artwork", 1) != stable_id("tate", "artwork", 2)
    assert is_id(stable_id("x"))


def test_slugify_folds_accents_and_punctuation() -> None:
    assert slugify("Paul Cézanne") == "paul-cezanne"
    assert slugify("  Sir John Everett Millais, Bt ") == "sir-john-everett-millais-bt"
    assert slugify("???") == "untitled"


def test_timestamp_formats() -> None:
    t = datetime(2010, 8, 23, 14, 15, 30, 123000, tzinfo=UTC)
    assert format_ts(t) == "2010-08-23T14:15:30+00:00"
    assert format_ts_ms(t) == "2010-08-23T14:15:30.123Z"
    other = t.astimezone(timezone(timedelta(hours=2)))
    assert format_ts(other) == "2010-08-23T14:15:30+00:00"
    assert format_ts(None) is None
