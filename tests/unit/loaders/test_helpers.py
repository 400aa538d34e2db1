"""Small pure helpers of the museum loaders: years, nationalities, image URLs, slugs, reports."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Connection, MetaData, String, Table, create_engine, insert

from artcat.loaders.catalog import iconicity, parse_year, year_text
from artcat.loaders.cmoa import _image
from artcat.loaders.countries import nationality_from_place
from artcat.loaders.slugs import SlugRegistry
from artcat.loaders.tate import _sized_image
from common.load_report import LoadReport


@pytest.mark.parametrize(
    ("value", "year"),
    [
        ("1812-01-01", 1812),
        ("-0349-01-01", -349),
        (1829, 1829),
        ("", None),
        (None, None),
        ("no date", None),
        (True, None),
    ],
)
def test_parse_year(value: object, year: int | None) -> None:
    assert parse_year(value) == year


def test_year_text() -> None:
    assert (year_text(1812), year_text(-349), year_text(None)) == ("1812", "349 BCE", "")


@pytest.mark.parametrize(
    ("place", "nationality"),
    [
        ("Wigan, United Kingdom", "British"),
        ("Torino, Italia", "Italian"),
        ("München, Deutschland", "German"),
        ("Dublin, Éire", "Irish"),
        ("Polska", "Polish"),
        ("Bristol", None),
        ("Somewhere, Atlantis", None),
        (None, None),
    ],
)
def test_nationality_from_place(place: str | None, nationality: str | None) -> None:
    assert nationality_from_place(place) == nationality


def test_cmoa_image_size_becomes_the_version() -> None:
    url = "http://collection.cmoa.org/CollectionImage.aspx?irn=120397&size=Medium"
    assert _image(url) == (
        "http://collection.cmoa.org/CollectionImage.aspx?irn=120397&size={image_version}",
        ["Medium"],
    )
    assert _image("http://example.org/a.jpg") == ("http://example.org/a.jpg", [])


def test_tate_image_size_number_becomes_the_version() -> None:
    files = [f"http://t/A/A00/A00044_127051_{n}.jpg" for n in (7, 8, 9, 10)]
    assert _sized_image(files) == (
        "http://t/A/A00/A00044_127051_{image_version}.jpg",
        ["7", "8", "9", "10"],
    )
    assert _sized_image(["http://t/a_8.jpg", "http://t/b_9.jpg"]) is None
    assert _sized_image(["http://t/a.png"]) is None


def test_iconicity_is_deterministic_and_favours_paintings_with_images() -> None:
    assert iconicity(65, "Painting", True) == iconicity(65, "Painting", True)
    assert iconicity(65, "Painting", True) > iconicity(65, "Print", True)
    assert iconicity(65, "Painting", True) > iconicity(65, "Painting", False)
    assert iconicity(0, None, False) == 0.0


@pytest.fixture
def conn() -> Iterator[Connection]:
    engine = create_engine("sqlite://")
    table = Table("things", MetaData(), Column("id", String(24)), Column("slug", String(20)))
    table.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(insert(table), [{"id": "a" * 24, "slug": "henry-moore"}])
        yield connection


def test_slug_registry_keeps_existing_slugs_and_suffixes_collisions(conn: Connection) -> None:
    table = Table("things", MetaData(), autoload_with=conn)
    slugs = SlugRegistry(conn, table)
    assert slugs.slug_for("a" * 24, "something-else") == "henry-moore"  # existing row keeps it
    assert slugs.slug_for("b" * 24, "henry-moore") == "henry-moore-bbbbbb"
    assert slugs.slug_for("b" * 24, "henry-moore") == "henry-moore-bbbbbb"  # stable
    assert slugs.slug_for("c" * 24, "a-very-long-name-that-is-cut") == "a-very-long-name-tha"
    suffixed = slugs.slug_for("d" * 24, "a-very-long-name-that-is-cut")
    assert suffixed == "a-very-long-n-dddddd"
    assert len(suffixed) <= 20


def test_report_summary_lists_counts_and_issues() -> None:
    report = LoadReport(source="tate x")
    report.add("artworks", 3, changed=1)
    report.error("artworks.jsonl", 2, "invalid JSON")
    report.warn("artworks.jsonl", 3, "contributor missing")
    text = report.summary()
    assert "artworks 3 (1 changed)" in text
    assert "artworks.jsonl:2: invalid JSON" in text
    assert "artworks.jsonl:3: contributor missing" in text
    assert not report.ok
