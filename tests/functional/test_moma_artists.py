"""MoMA's artist list adds details and identifiers to the artists the museums hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, text

from artcat.cli.main import main
from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.moma import load_moma_artists
from artcat.loaders.source import LoadError
from artcat.loaders.tate import load_tate
from tests.constants import SAMPLE_DATA
from tests.db_state import truncate_all
from tests.functional.test_artist_reconciliation import state

pytestmark = [pytest.mark.functional, pytest.mark.data]

MOMA = SAMPLE_DATA / "moma" / "Artists.csv"
HEADER = "ConstituentID,DisplayName,ArtistBio,Nationality,Gender,BeginDate,EndDate,Wiki QID,ULAN\n"


def artist(engine: Engine, name: str) -> dict[str, object]:
    """Return the one artist named ``name`` with its identifiers by source."""
    with engine.connect() as conn:
        row = conn.execute(text("SELECT * FROM artists WHERE name = :n"), {"n": name}).one()
        ids = conn.execute(
            text("SELECT source, source_id FROM artist_sources WHERE artist_id = :a"),
            {"a": row.id},
        ).all()
    return {**row._asdict(), "ids": dict(ids)}


def count_artists(engine: Engine) -> int:
    """Return the number of artists."""
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT count(*) FROM artists")).scalar_one())


def museums(engine: Engine, *names: str) -> None:
    """Load the museums' slices."""
    for name in names:
        loader = load_tate if name == "tate" else load_cmoa
        assert loader(engine, SAMPLE_DATA / name, progress=False).ok


def test_matches_add_details_and_identifiers_and_create_nobody(clean_db: Engine) -> None:
    museums(clean_db, "tate", "cmoa")
    before = count_artists(clean_db)
    report = load_moma_artists(clean_db, MOMA, progress=False)
    assert report.ok, report.summary()
    assert count_artists(clean_db) == before
    assert report.counts["moma artists not in the catalog"] > 50

    # Tate gives no nationality: MoMA's fills it, with MoMA's, Wikidata's and ULAN's ids.
    posenenske = artist(clean_db, "Charlotte Posenenske")
    assert posenenske["nationality"] == "German"
    assert posenenske["ids"] == {
        "tate": "11040",
        "moma": "34555",
        "wikidata": "Q1067301",
        "ulan": "500053997",
    }
    # Tate ranks first: where it says something, MoMA does not override it.
    sickert = artist(clean_db, "Walter Richard Sickert")
    assert sickert["nationality"] == "German" and sickert["ids"]["moma"] == "5414"
    # Matched through the alias in brackets and the title Tate gives.
    assert artist(clean_db, "Claude Cahun")["ids"]["wikidata"] == "Q219634"
    assert artist(clean_db, "Sir Stanley Spencer")["ids"]["ulan"] == "500006212"

    again = load_moma_artists(clean_db, MOMA, progress=False)
    assert again.ok and not again.changed, again.summary()


def test_a_museum_loaded_after_moma_gives_the_same_catalog_once_moma_is_rerun(
    clean_db: Engine,
) -> None:
    museums(clean_db, "tate", "cmoa")
    assert load_moma_artists(clean_db, MOMA, progress=False).ok
    expected = state(clean_db)
    truncate_all(clean_db)
    museums(clean_db, "cmoa")
    assert load_moma_artists(clean_db, MOMA, progress=False).ok
    museums(clean_db, "tate")
    assert load_moma_artists(clean_db, MOMA, progress=False).ok
    assert state(clean_db) == expected


def test_never_by_a_name_whose_dates_disagree(clean_db: Engine, tmp_path: Path) -> None:
    museums(clean_db, "tate")
    csv = tmp_path / "Artists.csv"
    csv.write_text(
        HEADER
        + '1,Charlotte Posenenske,"",German,Female,1933,1985,Q1,1\n'  # born three years later
        + '3,Charlotte Posenenske,"",German,Female,1930,2001,Q3,3\n',  # died much later
        encoding="utf-8",
    )
    report = load_moma_artists(clean_db, tmp_path, progress=False)
    assert report.ok and report.counts["moma artists not in the catalog"] == 2
    assert artist(clean_db, "Charlotte Posenenske")["nationality"] is None


def test_a_near_birth_year_matches_the_one_artist_of_that_name(
    clean_db: Engine, tmp_path: Path
) -> None:
    """Born a year later at MoMA, the same death year: the one Charlotte Posenenske (rule 5);
    a second MoMA record of the name is another person by MoMA's own word."""
    museums(clean_db, "tate")
    csv = tmp_path / "Artists.csv"
    csv.write_text(
        HEADER
        + '1,Charlotte Posenenske,"",German,Female,1931,1985,Q1,1\n'
        + '2,Charlotte Posenenske,"",German,Female,0,0,Q2,2\n',
        encoding="utf-8",
    )
    report = load_moma_artists(clean_db, tmp_path, progress=False)
    assert report.ok and report.counts["moma artists not in the catalog"] == 1
    assert artist(clean_db, "Charlotte Posenenske")["nationality"] == "German"


def test_a_bad_file_names_its_line_and_changes_nothing(clean_db: Engine, tmp_path: Path) -> None:
    museums(clean_db, "tate")
    csv = tmp_path / "Artists.csv"
    good = MOMA.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    csv.write_text("".join([*good[:5], "99,too,few\n", *good[5:]]), encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        load_moma_artists(clean_db, csv, progress=False)
    assert [(i.file, i.line) for i in caught.value.issues] == [("Artists.csv", 6)]
    with clean_db.connect() as conn:
        assert (
            conn.execute(
                text("SELECT count(*) FROM artist_sources WHERE source = 'moma'")
            ).scalar_one()
            == 0
        )


def test_cli_says_it_creates_no_artist(tmp_path: Path) -> None:
    help_text = CliRunner().invoke(main, ["load", "moma-artists", "--help"]).output
    assert "never creates artists" in " ".join(help_text.split())
    env = {"INSTANCE_DIR": str(tmp_path), "DATABASE_URL": "", "REDIS_URL": ""}
    result = CliRunner().invoke(main, ["load", "moma-artists", str(MOMA), "--no-progress"], env=env)
    assert result.exit_code == 0, result.output
    assert "moma artists not in the catalog" in result.output  # an empty catalog: no match
