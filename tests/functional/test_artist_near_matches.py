"""Artists the museums date differently are one artist; names of no one are no artist.

The slice in tests/data/reconcile holds the cases a reader found split: Joan Mitchell (1925 at
Tate, 1926 at CMoA), James Gillray, David Salle, Chris Burden, Siqueiros (birth years one or
two apart, a death year on one side only), the Guerrilla Girls (no dates at Tate), and
"Anonymous", "Unknown" and "British School 18th century", which are nobody.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from artcat.loaders import artists as rule
from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.tate import load_tate
from tests.db_state import truncate_all
from tests.functional.test_artist_reconciliation import state

pytestmark = [pytest.mark.functional, pytest.mark.data]

SLICE = Path(__file__).resolve().parents[1] / "data" / "reconcile"
SPLIT = (
    "Joan Mitchell",
    "James Gillray",
    "David Salle",
    "Chris Burden",
    "David Alfaro Siqueiros",
    "Guerrilla Girls",
)
NOBODY = ("Anonymous", "Unknown", "unknown", "British School 18th century")


def load(engine: Engine, *order: str, cmoa: Path = SLICE / "cmoa") -> None:
    """Load the slice's museums in the order given."""
    for museum in order:
        if museum == "tate":
            report = load_tate(engine, SLICE / "tate", progress=False)
        else:
            report = load_cmoa(engine, cmoa, progress=False)
        assert report.ok, report.summary()


def artists_named(engine: Engine, name: str) -> list[tuple[str, set[str]]]:
    """Return the artists of a name, each with the museums that describe it."""
    with engine.connect() as conn:
        ids = conn.execute(text("SELECT id FROM artists WHERE name = :n ORDER BY id"), {"n": name})
        found = []
        for artist_id in ids.scalars().all():
            sources = conn.execute(
                text("SELECT source FROM artist_sources WHERE artist_id = :a"), {"a": artist_id}
            )
            found.append((artist_id, set(sources.scalars())))
        return found


def test_each_named_case_is_one_artist_whatever_the_order(clean_db: Engine) -> None:
    load(clean_db, "tate", "cmoa")
    tate_first = state(clean_db)
    for name in SPLIT:
        assert [sources for _, sources in artists_named(clean_db, name)] == [{"tate", "cmoa"}], name
    with clean_db.connect() as conn:
        works = conn.execute(
            text(
                "SELECT a.name, count(*) FROM artwork_artists l "
                "JOIN artists a ON a.id = l.artist_id GROUP BY a.name"
            )
        ).all()
        # Tate's dates come first where both museums give one.
        mitchell = conn.execute(
            text("SELECT birthday, deathday FROM artists WHERE name = 'Joan Mitchell'")
        ).one()
    counts = dict(works)
    assert counts["Joan Mitchell"] == counts["James Gillray"] == 2
    assert tuple(mitchell) == ("1925", "1992")
    truncate_all(clean_db)
    load(clean_db, "cmoa", "tate")
    assert state(clean_db) == tate_first
    load(clean_db, "tate", "cmoa")  # and a re-run changes nothing
    assert state(clean_db) == tate_first


def test_no_artist_is_made_of_anonymous_unknown_or_a_school(clean_db: Engine) -> None:
    load(clean_db, "tate", "cmoa")
    with clean_db.connect() as conn:
        for name in NOBODY:
            assert not artists_named(clean_db, name), name
        makers = dict(
            conn.execute(
                text(
                    "SELECT slug, cultural_maker FROM artworks w WHERE NOT EXISTS "
                    "(SELECT 1 FROM artwork_artists l WHERE l.artwork_id = w.id)"
                )
            ).all()
        )
    # The works stay, with no artist and the attribution in cultural_maker.
    assert makers == {
        "tate-a00051": "British School 18th century",
        "cmoa-94-134": "Unknown",
        "cmoa-2005-50-2": "Anonymous",
    }


def test_a_catalog_split_before_is_merged_by_the_next_import(
    clean_db: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the importer left before this rule (near dates split, "Anonymous" an artist) is
    put right by the next import of either museum, and comes out as a fresh load does."""
    load(clean_db, "tate", "cmoa")
    fresh = state(clean_db)
    truncate_all(clean_db)
    with monkeypatch.context() as before:
        before.setattr(rule, "near_births", lambda _one, _other: False)
        before.setattr(rule, "attribution", lambda _name: None)
        before.setattr("artcat.loaders.tate.attribution", lambda _name: None)
        before.setattr("artcat.loaders.cmoa.attribution", lambda _name: None)
        before.setattr("artcat.loaders.shell.retire_non_persons", lambda _conn: 0)
        load(clean_db, "tate", "cmoa")
    assert len(artists_named(clean_db, "Joan Mitchell")) == 2
    assert artists_named(clean_db, "Anonymous")
    load(clean_db, "cmoa")
    for name in SPLIT:
        assert len(artists_named(clean_db, name)) == 1, name
    assert not artists_named(clean_db, "Anonymous")
    load(clean_db, "tate")
    assert not artists_named(clean_db, "British School 18th century")
    assert state(clean_db) == fresh


def test_near_dates_with_other_death_years_stay_apart(clean_db: Engine, tmp_path: Path) -> None:
    """A Joan Mitchell born a year later who died in 2001 is somebody else."""
    lines = (SLICE / "cmoa" / "cmoa.jsonl").read_text().splitlines()
    other = [json.loads(line) for line in lines if "Joan Mitchell" in line]
    for creator in other[0]["creator"]:
        creator["death_date"] = "2001-01-01"
    folder = tmp_path / "cmoa"
    folder.mkdir()
    (folder / "cmoa.jsonl").write_text(json.dumps(other[0]) + "\n")
    load(clean_db, "tate", "cmoa", cmoa=folder)
    found = sorted(sorted(sources) for _, sources in artists_named(clean_db, "Joan Mitchell"))
    assert found == [["cmoa"], ["tate"]]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("Anonymous", "Anonymous"),
        ("unknown", "Unknown"),
        ("Unknown artist", "Unknown artist"),
        ("unknown American", "American"),
        ("British School 18th century", "British School 18th century"),
        ("?British School", "British School"),
        ("British (?) School 19th century", "British School 19th century"),
        ("Italian or German (?) School 17th century", "Italian or German School 17th century"),
        ("School of Granada", "School of Granada"),
        ("Joan Mitchell", None),
        ("International Correspondence Schools", None),
        ("Tiffany Studios", None),
        ("Guerrilla Girls", None),
    ],
)
def test_attribution(name: str, says: str | None) -> None:
    assert rule.attribution(name) == says
