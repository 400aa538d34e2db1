"""The demo loader: every table filled, deterministic per seed, idempotent, working credentials."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from artcat.loaders.demo import DEMO_EMAIL, demo_credentials, load_demo
from auth_server.accounts import authenticate_client, password_hasher, verify_password
from common.models import (
    Application,
    Artist,
    ArtistGene,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Base,
    Bidder,
    Collection,
    CollectionItem,
    Edition,
    Fair,
    Gene,
    Image,
    Partner,
    PartnerUser,
    Profile,
    Sale,
    SaleArtwork,
    Show,
    ShowArtwork,
    User,
    UserDetail,
)
from common.settings import Settings
from tests.db_state import truncate_all

pytestmark = pytest.mark.functional

FILLED = (
    Application, Artist, ArtistGene, Artwork, ArtworkArtist, ArtworkGene, Bidder, Collection,
    CollectionItem, Edition, Fair, Gene, Image, Partner, PartnerUser, Profile, Sale, SaleArtwork,
    Show, ShowArtwork, User, UserDetail,
)  # fmt: skip
NOW = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)


def table_counts(engine: Engine) -> dict[str, int]:
    """Return the number of rows of every table."""
    with Session(engine) as session:
        return {
            table.name: session.scalar(select(func.count()).select_from(table)) or 0
            for table in Base.metadata.sorted_tables
        }


def artwork_titles(engine: Engine) -> list[tuple[str, str]]:
    """Return (id, title) of every artwork, by id."""
    with Session(engine) as session:
        return [
            (a, t)
            for a, t in session.execute(select(Artwork.id, Artwork.title).order_by(Artwork.id))
        ]


def test_fills_every_table_and_relation(clean_db: Engine, base_settings: Settings) -> None:
    report = load_demo(clean_db, base_settings, seed=1, artworks=120, now=NOW)
    assert not report.skipped
    counts = table_counts(clean_db)
    for model in FILLED:
        assert counts[model.__tablename__] > 0, model.__tablename__
    assert counts["artworks"] == 120
    assert 35 <= counts["artists"] <= 45
    assert counts["genes"] >= 15
    assert report.counts["artworks"] == 120
    assert report.counts["users"] == counts["users"]
    with Session(clean_db) as session:
        # A few works by two artists, and artist counters that match the links.
        two = select(ArtworkArtist.artwork_id).group_by(ArtworkArtist.artwork_id)
        assert session.scalar(
            select(func.count()).select_from(two.having(func.count() > 1).subquery())
        )
        for artist in session.scalars(select(Artist)):
            links = select(func.count()).where(ArtworkArtist.artist_id == artist.id)
            assert artist.artworks_count == session.scalar(links)
            assert artist.birth_year == int(artist.birthday)
        artists = session.scalars(select(Artist)).all()
        assert sum("](/artist/" in (a.biography or "") for a in artists) > len(artists) // 2
        assert {a.deathday == "" for a in artists} == {True, False}
        assert any(a.location is None for a in artists)
        imaged = [a for a in artists if a.image_url]
        assert all((a.image_url or "").endswith("/{image_version}.jpg") for a in imaged)
        assert imaged[0].image_versions == ["four_thirds", "large", "square", "tall"]
        published = session.scalars(select(Artwork.published)).all()
        assert 0 < published.count(False) < published.count(True)
        # Partners of both kinds, each with a profile and a cover image.
        assert {p.type for p in session.scalars(select(Partner))} == {"Gallery", "Institution"}
        for partner in session.scalars(select(Partner)):
            profile = session.scalar(select(Profile).where(Profile.owner_id == partner.id))
            assert profile is not None and profile.cover_image_id
        # Installation shots, artwork views; lots with estimates; a bidder for the demo user.
        assert session.scalar(select(func.count()).where(Image.show_id.is_not(None)))
        assert session.scalar(select(func.count()).where(Image.artwork_id.is_not(None)))
        assert session.scalar(select(func.count()).where(Show.is_fair_booth.is_(True)))
        assert session.scalar(select(func.count()).where(SaleArtwork.low_estimate_cents > 0))
        demo = session.scalar(select(User).where(User.email == DEMO_EMAIL))
        assert demo is not None
        assert session.scalar(select(Bidder).where(Bidder.user_id == demo.id))
        assert session.scalar(select(PartnerUser).where(PartnerUser.user_id == demo.id))
        sales = session.scalars(select(Sale)).all()
        assert {s.is_auction for s in sales} == {True, False}
        assert {s.published for s in sales} == {True, False}
        assert any(s.is_live_integration for s in sales)
        # Every user has details and a default collection; the demo user a public one in order.
        for user in session.scalars(select(User)):
            detail = session.get(UserDetail, user.id)
            assert detail is not None and detail.birthday
            default = select(func.count()).where(
                Collection.user_id == user.id, Collection.default.is_(True)
            )
            assert session.scalar(default) == 1
        public = session.scalar(
            select(Collection).where(Collection.user_id == demo.id, Collection.private.is_(False))
        )
        assert public is not None
        positions = session.scalars(
            select(CollectionItem.position).where(CollectionItem.collection_id == public.id)
        ).all()
        assert sorted(positions) == list(range(1, len(positions) + 1))
        assert positions


def test_dimensions_in_the_reference_format(clean_db: Engine, base_settings: Settings) -> None:
    load_demo(clean_db, base_settings, artworks=200, now=NOW)
    with Session(clean_db) as session:
        dims = session.scalars(select(Artwork.dimensions)).all()
    keys = {"text", "height", "width", "depth", "diameter"}
    assert all(set(d) == {"in", "cm"} and set(d["in"]) == set(d["cm"]) == keys for d in dims)
    assert any(d["in"]["depth"] is not None for d in dims)
    assert any(d["in"]["diameter"] is not None for d in dims)
    assert any(d["in"]["text"] is None for d in dims)
    flat = [d for d in dims if d["in"]["width"] is not None and d["in"]["depth"] is None]
    assert flat
    for d in flat:
        assert d["in"]["text"].endswith(" in") and " \u00d7 " in d["in"]["text"]
        assert d["cm"]["height"] == round(d["in"]["height"] * 2.54, 1)


def test_same_seed_same_catalog_other_seed_other(clean_db: Engine, base_settings: Settings) -> None:
    load_demo(clean_db, base_settings, seed=7, artworks=50, now=NOW)
    first = artwork_titles(clean_db)
    truncate_all(clean_db)
    load_demo(clean_db, base_settings, seed=7, artworks=50, now=NOW + timedelta(days=40))
    assert artwork_titles(clean_db) == first
    truncate_all(clean_db)
    load_demo(clean_db, base_settings, seed=8, artworks=50, now=NOW)
    other = artwork_titles(clean_db)
    assert {i for i, _ in other}.isdisjoint({i for i, _ in first})
    assert [t for _, t in other] != [t for _, t in first]


def test_second_load_changes_nothing(clean_db: Engine, base_settings: Settings) -> None:
    assert not load_demo(clean_db, base_settings, artworks=30, now=NOW).skipped
    before = table_counts(clean_db)
    again = load_demo(clean_db, base_settings, artworks=90, now=NOW)
    assert again.skipped and "already exists" in again.reason
    assert table_counts(clean_db) == before


def test_demo_credentials_work(clean_db: Engine, base_settings: Settings) -> None:
    load_demo(clean_db, base_settings, artworks=20, now=NOW)
    credentials = demo_credentials(base_settings)
    assert credentials == demo_credentials(base_settings)
    assert credentials.user_email == DEMO_EMAIL
    with Session(clean_db) as session:
        app = authenticate_client(session, credentials.client_id, credentials.client_secret)
        assert app is not None and app.standard_token_response  # what stock clients accept
        assert authenticate_client(session, credentials.client_id, "wrong") is None
        assert credentials.client_secret not in app.client_secret_digest
        user = session.scalar(select(User).where(User.email == DEMO_EMAIL))
        assert user is not None and app.user_id == user.id
        hasher = password_hasher(base_settings)
        assert verify_password(hasher, user.password_hash, credentials.user_password)
        assert not verify_password(hasher, user.password_hash, "not-the-password")


def test_credentials_follow_the_secret_key(base_settings: Settings) -> None:
    other = Settings(secret_key="another-secret-key")
    mine, theirs = demo_credentials(base_settings), demo_credentials(other)
    assert mine.client_id != theirs.client_id
    assert mine.client_secret != theirs.client_secret
    assert mine.user_password != theirs.user_password
    with pytest.raises(ValueError, match="secret_key"):
        demo_credentials(Settings(secret_key=""))


def test_events_cover_every_status(clean_db: Engine, base_settings: Settings) -> None:
    load_demo(clean_db, base_settings, artworks=60, now=NOW)
    now = NOW.replace(hour=0, minute=0, second=0)

    def status(start: datetime | None, end: datetime | None) -> str:
        assert start is not None and end is not None and start < end
        return "upcoming" if start > now else "running" if end > now else "closed"

    with Session(clean_db) as session:
        shows = session.scalars(select(Show)).all()
        fairs = session.scalars(select(Fair)).all()
        sales = session.scalars(select(Sale)).all()
    everything = {"upcoming", "running", "closed"}
    assert {status(s.start_at, s.end_at) for s in shows} == everything
    assert {status(s.start_at, s.end_at) for s in shows if s.fair_id} == everything
    assert {status(f.start_at, f.end_at) for f in fairs} == everything
    assert {status(s.start_at, s.end_at) for s in sales} == everything


def test_after_a_museum_import_only_the_demo_accounts_are_added(
    clean_db: Engine, base_settings: Settings, sample_dir: Path
) -> None:
    from artcat.loaders.tate import load_tate

    load_tate(clean_db, sample_dir / "tate", progress=False)
    with Session(clean_db) as session:
        before = {m: session.scalar(select(func.count()).select_from(m)) for m in (Artwork, Gene)}
    report = load_demo(clean_db, base_settings, artworks=20, now=NOW)
    assert not report.skipped and "already holds a catalog" in report.reason
    assert report.summary().startswith("demo catalog not loaded: ")
    assert "\n" not in report.summary()
    credentials = demo_credentials(base_settings)
    with Session(clean_db) as session:
        after = {m: session.scalar(select(func.count()).select_from(m)) for m in (Artwork, Gene)}
        assert after == before  # the import's catalog, untouched
        app = authenticate_client(session, credentials.client_id, credentials.client_secret)
        assert app is not None  # the printed credentials work
    again = load_demo(clean_db, base_settings, artworks=20, now=NOW)
    assert again.skipped and "already exists" in again.reason
