"""Importing the Tate and CMoA slices (tests/data) into a real database (SQLite or PostgreSQL)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session, sessionmaker

from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.formats import json_files
from artcat.loaders.source import LoadError
from artcat.loaders.tate import load_tate
from common.ids import stable_id
from common.load_report import LoadReport
from common.models import (
    Artist,
    ArtistGene,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Gene,
    Image,
    Partner,
    Profile,
)

pytestmark = [pytest.mark.functional, pytest.mark.data]

X = "\u00d7"
TABLES = (
    "partners",
    "profiles",
    "artists",
    "artworks",
    "genes",
    "artwork_artists",
    "artwork_genes",
    "artist_genes",
    "images",
)
# Ophelia is not in the sample: its record (subject tree trimmed) from tate/artworks.jsonl.gz.
OPHELIA: dict[str, Any] = {
    "acno": "N01506",
    "acquisitionYear": 1894,
    "all_artists": "Sir John Everett Millais, Bt",
    "catalogueGroup": {},
    "classification": "painting",
    "contributorCount": 1,
    "contributors": [
        {
            "birthYear": 1829,
            "date": "1829\u20131896",
            "displayOrder": 1,
            "fc": "Sir John Everett Millais, Bt",
            "gender": "Male",
            "id": 379,
            "mda": "Millais, Sir John Everett, Bt",
            "role": "artist",
            "startLetter": "M",
        }
    ],
    "creditLine": "Presented by Sir Henry Tate 1894",
    "dateRange": {"endYear": 1852, "startYear": 1851, "text": "1851-2"},
    "dateText": "1851\u20132",
    "depth": "",
    "dimensions": "support: 762 x 1118 mm\r\nframe: 1105 x 1458 x 145 mm",
    "foreignTitle": None,
    "groupTitle": None,
    "height": "1118",
    "id": 9506,
    "inscription": "date inscribed",
    "medium": "Oil paint on canvas",
    "movementCount": 1,
    "movements": [
        {
            "era": {"id": 350, "name": "19th century"},
            "id": 363,
            "name": "Pre-Raphaelite Brotherhood",
        }
    ],
    "subjectCount": 46,
    "subjects": {
        "children": [
            {
                "children": [
                    {
                        "children": [{"id": 3284, "name": "'Hamlet'"}],
                        "id": 59,
                        "name": "Shakespeare",
                    }
                ],
                "id": 55,
                "name": "literature and fiction",
            }
        ],
        "id": 1,
        "name": "subject",
    },
    "thumbnailCopyright": None,
    "thumbnailUrl": "http://www.tate.org.uk/art/images/work/N/N01/N01506_8.jpg",
    "title": "Ophelia",
    "units": "mm",
    "url": "http://www.tate.org.uk/art/artworks/millais-ophelia-n01506",
    "width": "762",
}


def table_counts(engine: Engine) -> dict[str, int]:
    """Return the row count of every catalog table the loaders write."""
    with engine.connect() as conn:
        return {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES}


def write_jsonl(path: Path, lines: list[str]) -> Path:
    """Write raw lines to a JSON Lines file and return its path."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def jsonl_of(folder: Path) -> list[str]:
    """Return the per-record JSON files under ``folder`` as JSON Lines, in repository order."""
    return [json.dumps(json.loads(p.read_bytes())) for p in json_files(folder)]


def load_samples(engine: Engine, sample_dir: Path) -> tuple[LoadReport, LoadReport]:
    """Load the Tate and CMoA samples."""
    return (
        load_tate(engine, sample_dir / "tate", progress=False),
        load_cmoa(engine, sample_dir / "cmoa", progress=False),
    )


@pytest.fixture
def sessions_clean(clean_db: Engine, sessions: sessionmaker[Session]) -> sessionmaker[Session]:
    """Return the session factory of an emptied database."""
    return sessions


def test_tate_sample_and_ophelia(
    clean_db: Engine, sessions_clean: sessionmaker[Session], sample_dir: Path, tmp_path: Path
) -> None:
    report = load_tate(clean_db, sample_dir / "tate", progress=False)
    assert report.ok, report.summary()
    assert report.counts["artworks"] == 350
    # 275 artists in the file, plus one made from a contributor the file lacks (a warning),
    # less the three that name no one ("British School 18th century" and the like).
    assert report.counts["artists"] == 273
    assert any("not in the artists file" in str(w) for w in report.warnings)

    single = write_jsonl(tmp_path / "ophelia.jsonl", [json.dumps(OPHELIA)])
    ophelia_report = load_tate(clean_db, single, progress=False)
    assert ophelia_report.ok and not ophelia_report.warnings, ophelia_report.summary()

    with sessions_clean() as session:
        artwork = session.get(Artwork, stable_id("tate", "artwork", 9506))
        assert artwork is not None
        assert (artwork.slug, artwork.title, artwork.category) == (
            "tate-n01506",
            "Ophelia",
            "Painting",
        )
        assert artwork.dimensions["cm"] == {
            "text": f"76.2 {X} 111.8 cm",
            "height": 76.2,
            "width": 111.8,
            "depth": None,
            "diameter": None,
        }
        assert artwork.dimensions["in"]["text"] == f"30 {X} 44 in"
        assert (artwork.date, artwork.year_start, artwork.year_end) == ("1851\u20132", 1851, 1852)
        # Tate's creditLine is a credit line; Tate publishes no ownership history.
        assert artwork.credit_line == "Presented by Sir Henry Tate 1894"
        assert artwork.provenance == ""
        assert "Presented by" not in artwork.additional_information
        assert artwork.collecting_institution == "Tate"
        assert artwork.published and artwork.iconicity > 0
        assert artwork.website == OPHELIA["url"]
        assert artwork.image_url == (
            "http://www.tate.org.uk/art/images/work/N/N01/N01506_{image_version}.jpg"
        )
        assert artwork.image_versions == ["8"]

        partner = session.get(Partner, artwork.partner_id)
        assert partner is not None
        assert (partner.name, partner.type, partner.region) == ("Tate", "Institution", "Europe")
        profile = session.scalars(select(Profile).where(Profile.handle == "tate")).one()
        assert (profile.owner_type, profile.owner_id) == ("partner", partner.id)

        link = session.scalars(
            select(ArtworkArtist).where(ArtworkArtist.artwork_id == artwork.id)
        ).one()
        assert (link.position, link.role) == (0, "artist")
        millais = session.get(Artist, link.artist_id)
        assert millais is not None
        assert millais.name == "Sir John Everett Millais, Bt"
        assert millais.sortable_name == "Millais, Sir John Everett, Bt"
        assert (millais.gender, millais.birthday, millais.deathday) == ("male", "1829", "1896")
        assert (millais.hometown, millais.location) == (
            "Southampton, United Kingdom",
            "London, United Kingdom",
        )
        assert millais.nationality == "British"
        assert millais.birth_year == 1829
        # N03416 from the sample, and Ophelia.
        assert (millais.artworks_count, millais.published_artworks_count) == (2, 2)

        artwork_genes = session.scalars(
            select(Gene)
            .join(ArtworkGene, ArtworkGene.gene_id == Gene.id)
            .where(ArtworkGene.artwork_id == artwork.id)
        ).all()
        assert {(g.family, g.name) for g in artwork_genes} == {
            ("movement", "Pre-Raphaelite Brotherhood"),
            ("subject", "Literature and fiction"),
            ("subject", "Shakespeare"),
        }
        artist_genes = session.scalars(
            select(Gene.name)
            .join(ArtistGene, ArtistGene.gene_id == Gene.id)
            .where(ArtistGene.artist_id == millais.id)
        ).all()
        assert set(artist_genes) == {"Pre-Raphaelite Brotherhood", "Victorian/Genre"}


def test_cmoa_sample(
    clean_db: Engine, sessions_clean: sessionmaker[Session], sample_dir: Path
) -> None:
    report = load_cmoa(clean_db, sample_dir / "cmoa", progress=False)
    assert report.ok, report.summary()
    assert report.counts["artworks"] == 155  # 135 cmoa + 20 teenie
    with sessions_clean() as session:
        bowl = session.scalars(select(Artwork).where(Artwork.slug == "cmoa-2004-37-a-b")).one()
        assert bowl.title == "Punch bowl with lid"
        assert bowl.category == "Design/Decorative Arts"
        assert bowl.dimensions["in"] == {
            "text": "12 in; diam. 12 in",
            "height": 12.0,
            "width": None,
            "depth": None,
            "diameter": 12.0,
        }
        assert bowl.dimensions["cm"]["diameter"] == 30.5
        # CMoA's provenance_text is the ownership history, its credit_line the credit line;
        # neither is repeated in the notes.
        assert bowl.provenance == "Haslam & Whiteway, London"
        assert bowl.credit_line == "Helen Johnston Acquisition Fund"
        assert "Helen Johnston" not in bowl.additional_information
        assert "Haslam" not in bowl.additional_information
        assert (bowl.year_start, bowl.year_end, bowl.date) == (1905, 1915, "c. 1910")
        genes = session.scalars(
            select(Gene)
            .join(ArtworkGene, ArtworkGene.gene_id == Gene.id)
            .where(ArtworkGene.artwork_id == bowl.id)
        ).all()
        assert {(g.family, g.name) for g in genes} == {
            ("classification", "Ceramics"),
            ("department", "Decorative Arts and Design"),
        }
        link = session.scalars(
            select(ArtworkArtist).where(ArtworkArtist.artwork_id == bowl.id)
        ).one()
        maker = session.get(Artist, link.artist_id)
        assert maker is not None and maker.name == "Reinhold Merkelbach"
        assert (link.role, maker.nationality, maker.birthday) == ("manufacturer", "German", "1845")

        partner = session.get(Partner, bowl.partner_id)
        assert partner is not None
        assert (partner.name, partner.region) == ("Carnegie Museum of Art", "North America")
        assert partner.website
        assert (
            session.scalars(select(Profile.owner_id).where(Profile.handle == "cmoa")).one()
            == partner.id
        )

        teenie = session.scalars(select(Artist).where(Artist.slug == "charles-teenie-harris")).one()
        assert teenie.artworks_count == teenie.published_artworks_count == 22
        assert session.scalar(select(func.count()).select_from(Image)) == report.counts["images"]
        slugs = session.scalars(select(Artist.slug)).all()
        assert len(slugs) == len(set(slugs))


def test_second_load_changes_nothing(clean_db: Engine, sample_dir: Path) -> None:
    load_samples(clean_db, sample_dir)
    before = table_counts(clean_db)
    assert before["artworks"] == 505
    tate, cmoa = load_samples(clean_db, sample_dir)
    assert table_counts(clean_db) == before
    assert not tate.changed and not cmoa.changed, (tate.summary(), cmoa.summary())
    assert tate.counts["artworks"] == 350 and cmoa.counts["artworks"] == 155


def test_bad_records_are_reported_and_skipped(
    clean_db: Engine, sample_dir: Path, tmp_path: Path
) -> None:
    good = jsonl_of(sample_dir / "cmoa" / "cmoa")[:3]
    no_id = json.loads(good[2])
    del no_id["id"]
    path = write_jsonl(
        tmp_path / "cmoa.jsonl",
        [
            good[0],
            json.dumps(no_id),
            json.dumps({"id": "cmoa:things/x", "images": [1], "creator": [{"artist_id": [1]}]}),
            good[1],
        ],
    )
    report = load_cmoa(clean_db, path, progress=False)
    assert [(e.file, e.line) for e in report.errors] == [("cmoa.jsonl", 2), ("cmoa.jsonl", 3)]
    assert "missing id" in report.errors[0].message
    assert "bad object record" in report.errors[1].message
    assert report.counts["artworks"] == 2
    assert table_counts(clean_db)["artworks"] == 2

    tate_lines = jsonl_of(sample_dir / "tate" / "artworks")
    odd_types = json.loads(tate_lines[2]) | {"title": ["a", "list"], "medium": 12}
    tate_path = write_jsonl(
        tmp_path / "artworks.jsonl",
        [
            tate_lines[0],
            json.dumps({"id": 1, "acno": "X1", "contributors": "nobody"}),
            json.dumps(odd_types),
            json.dumps({"id": 2, "contributors": [{"id": [1], "displayOrder": "2"}, {"id": 5}]}),
            tate_lines[1],
        ],
    )
    tate = load_tate(clean_db, tate_path, progress=False)
    assert [(e.file, e.line) for e in tate.errors] == [("artworks.jsonl", 2), ("artworks.jsonl", 4)]
    assert all("bad artwork record" in e.message for e in tate.errors)
    assert tate.counts["artworks"] == 3
    assert table_counts(clean_db)["artworks"] == 5
    with clean_db.connect() as conn:
        title, medium = conn.execute(
            select(Artwork.title, Artwork.medium).where(
                Artwork.id == stable_id("tate", "artwork", odd_types["id"])
            )
        ).one()
    assert (title, medium) == ("", "12")  # a list is no title; a number is written out


def test_unreadable_input_stops_the_import_before_any_write(
    clean_db: Engine, sample_dir: Path, tmp_path: Path
) -> None:
    load_cmoa(clean_db, sample_dir / "cmoa", progress=False)
    before = table_counts(clean_db)

    good = jsonl_of(sample_dir / "cmoa" / "teenie")[:3]
    path = write_jsonl(tmp_path / "teenie.jsonl", [good[0], '{"title": "broken', good[1], "[1, 2]"])
    with pytest.raises(LoadError) as caught:
        load_cmoa(clean_db, path, progress=False)
    assert [(i.file, i.line) for i in caught.value.issues] == [
        ("teenie.jsonl", 2),
        ("teenie.jsonl", 4),
    ]
    assert "invalid JSON" in caught.value.issues[0].message
    assert "teenie.jsonl:2: invalid JSON" in str(caught.value)
    assert "nothing was loaded" in str(caught.value)

    # A clone of Tate's repository with one broken file among 350: not one artwork is written.
    clone = tmp_path / "collection"
    shutil.copytree(sample_dir / "tate", clone)
    broken = sorted((clone / "artworks").rglob("*.json"))[-1]
    text = broken.read_text(encoding="utf-8").splitlines()
    broken.write_text("\n".join([*text[:5], '  "title": oops,', *text[5:]]), encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        load_tate(clean_db, clone, progress=False)
    [issue] = caught.value.issues
    assert (issue.file, issue.line) == (broken.relative_to(clone).as_posix(), 6)
    assert table_counts(clean_db) == before


def test_a_reimport_moves_credit_lines_out_of_provenance_and_notes(
    clean_db: Engine, sessions_clean: sessionmaker[Session], sample_dir: Path
) -> None:
    """Rows written when credit lines were kept in ``provenance`` and the notes are put right
    by the next import of their museum."""
    assert load_cmoa(clean_db, sample_dir / "cmoa", progress=False).ok
    assert load_tate(clean_db, sample_dir / "tate", progress=False).ok
    with clean_db.begin() as conn:  # what the earlier mapping wrote
        conn.execute(
            text(
                "UPDATE artworks SET credit_line = '', provenance = 'Old credit', "
                "additional_information = 'Credit line: Old credit'"
            )
        )
    assert load_cmoa(clean_db, sample_dir / "cmoa", progress=False).ok
    assert load_tate(clean_db, sample_dir / "tate", progress=False).ok
    with sessions_clean() as session:
        bowl = session.scalars(select(Artwork).where(Artwork.slug == "cmoa-2004-37-a-b")).one()
        assert (bowl.credit_line, bowl.provenance) == (
            "Helen Johnston Acquisition Fund",
            "Haslam & Whiteway, London",
        )
        assert "Credit line" not in bowl.additional_information
        tate = session.scalars(
            select(Artwork).where(Artwork.collecting_institution == "Tate")
        ).all()
        assert tate and all(a.provenance == "" for a in tate)
        assert any(a.credit_line.startswith("Presented by") for a in tate)
        assert not any("Old credit" in a.additional_information for a in tate)
