"""The public catalog: artists, artworks, editions, genes, partners, profiles, images."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from common.models.base import (
    FK,
    Base,
    IdColumn,
    ImageFields,
    JSONType,
    SlugNamed,
    Timestamps,
    page_orders,
)


class Partner(Timestamps, Base):
    """A gallery, institution or other organisation that shows and holds artworks."""

    __tablename__ = "partners"
    __table_args__ = page_orders("partners")
    id: Mapped[str] = IdColumn()
    slug: Mapped[str] = mapped_column(String(120), unique=True)
    type: Mapped[str] = mapped_column(String(40), default="Gallery")
    name: Mapped[str] = mapped_column(String(300))
    email: Mapped[str] = mapped_column(String(300), default="")
    region: Mapped[str | None] = mapped_column(String(100))
    website: Mapped[str | None] = mapped_column(String(500))
    enforce_on_platform_transactions: Mapped[bool | None] = mapped_column(Boolean)
    eligible_for_partner_analytics: Mapped[bool] = mapped_column(Boolean, default=False)


class PartnerUser(Base):
    """A user's access to manage a partner."""

    __tablename__ = "partner_users"
    partner_id: Mapped[str] = FK("partners.id", primary_key=True, index=False)
    user_id: Mapped[str] = FK("users.id", primary_key=True)


class Profile(Timestamps, ImageFields, Base):
    """A public profile page owned by a partner, a fair or a user; found by id or handle."""

    __tablename__ = "profiles"
    id: Mapped[str] = IdColumn()
    handle: Mapped[str] = mapped_column(String(120), unique=True)
    location: Mapped[str] = mapped_column(String(300), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    website: Mapped[str | None] = mapped_column(String(500))
    owner_type: Mapped[str] = mapped_column(String(20))  # partner | fair | user
    owner_id: Mapped[str] = mapped_column(String(24))
    __table_args__ = (Index(None, "owner_type", "owner_id", unique=True),)
    cover_image_id: Mapped[str | None] = FK("images.id", nullable=True, ondelete="SET NULL")


USER_HANDLE_PREFIX = "user-"


def user_profile(user_id: str, profile_id: str) -> Profile:
    """Return the profile every user has from the start (``profile`` link of the user).

    Its handle comes from the id, never the name: a profile is public, the name is not.
    """
    return Profile(
        id=profile_id,
        handle=f"{USER_HANDLE_PREFIX}{user_id}",
        location="",
        description="",
        owner_type="user",
        owner_id=user_id,
        image_versions=[],
    )


# The columns that describe an artist: what a museum's record says of one, and what the artist's
# document shows (the other columns are the catalog's own: ids, slugs, counts, images).
ARTIST_DESCRIPTION = (
    "name",
    "sortable_name",
    "gender",
    "biography",
    "birthday",
    "deathday",
    "hometown",
    "location",
    "nationality",
)


class Artist(Timestamps, ImageFields, Base):
    """An artist."""

    __tablename__ = "artists"
    # The pages' orders (migration 0014): name A-Z, birth year and recently added, each then id.
    __table_args__ = (
        Index("ix_artists_page_name", text("lower(sortable_name)"), "id"),
        Index("ix_artists_page_date", text("coalesce(birth_year, 9999)"), "id"),
        Index("ix_artists_page_recent", "created_at", "id"),
    )
    id: Mapped[str] = IdColumn()
    slug: Mapped[str] = mapped_column(String(120), unique=True)
    name: Mapped[str] = mapped_column(String(300))
    sortable_name: Mapped[str] = mapped_column(String(300), default="")
    gender: Mapped[str | None] = mapped_column(String(20))
    biography: Mapped[str | None] = mapped_column(Text)
    birthday: Mapped[str] = mapped_column(String(60), default="")
    deathday: Mapped[str] = mapped_column(String(60), default="")
    hometown: Mapped[str | None] = mapped_column(String(300))
    location: Mapped[str | None] = mapped_column(String(300))
    nationality: Mapped[str | None] = mapped_column(String(100))
    target_supply: Mapped[bool] = mapped_column(Boolean, default=False)
    # Maintained by the loaders and writes; used for filters, similarity and search ranking.
    artworks_count: Mapped[int] = mapped_column(Integer, default=0, index=True)
    published_artworks_count: Mapped[int] = mapped_column(Integer, default=0, index=True)
    birth_year: Mapped[int | None] = mapped_column(Integer, index=True)


class ArtistSource(Base):
    """An identifier of an artist at a source: a museum's record, MoMA, Wikidata or ULAN.

    One person is one artist however many sources describe them (``artcat.loaders.artists``
    decides who is who); every source's identifier stays here, so a re-import finds its artist.
    """

    __tablename__ = "artist_sources"
    source: Mapped[str] = mapped_column(String(20), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    artist_id: Mapped[str] = FK("artists.id")
    # What this source says of the artist (name, dates, places...): the artist's columns are
    # merged from these by source rank, so the order of imports does not matter.
    fields: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)


class Artwork(Timestamps, ImageFields, Base):
    """An artwork."""

    __tablename__ = "artworks"
    # Every list reads the published artworks in id order: one index gives both, so a page
    # (and a cursor's seek) reads its rows in order instead of sorting every published one.
    # The pages' orders of the published artworks (migration 0014): date, title, recently added.
    __table_args__ = (
        Index(None, "published", "id"),
        Index("ix_artworks_page_date", "published", text("coalesce(year_start, 9999)"), "id"),
        Index("ix_artworks_page_name", "published", text("lower(substr(title, 1, 200))"), "id"),
        Index("ix_artworks_page_recent", "published", "created_at", "id"),
        Index(
            "ix_artworks_page_partner_date",
            "partner_id",
            "published",
            text("coalesce(year_start, 9999)"),
            "id",
        ),
    )
    id: Mapped[str] = IdColumn()
    slug: Mapped[str] = mapped_column(String(160), unique=True)
    title: Mapped[str] = mapped_column(Text, default="")
    category: Mapped[str | None] = mapped_column(String(60), index=True)
    medium: Mapped[str | None] = mapped_column(Text)
    date: Mapped[str | None] = mapped_column(String(200))
    year_start: Mapped[int | None] = mapped_column(Integer, index=True)
    year_end: Mapped[int | None] = mapped_column(Integer)
    dimensions: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    published: Mapped[bool] = mapped_column(Boolean, default=True)
    website: Mapped[str] = mapped_column(String(500), default="")
    signature: Mapped[str] = mapped_column(Text, default="")
    series: Mapped[str] = mapped_column(Text, default="")
    provenance: Mapped[str] = mapped_column(Text, default="")  # the work's ownership history
    # How the work came to the collection ("Presented by ... 1922"), as the museum prints it.
    credit_line: Mapped[str] = mapped_column(Text, default="", server_default="")
    literature: Mapped[str] = mapped_column(Text, default="")
    exhibition_history: Mapped[str] = mapped_column(Text, default="")
    collecting_institution: Mapped[str] = mapped_column(String(300), default="")
    additional_information: Mapped[str] = mapped_column(Text, default="")
    image_rights: Mapped[str | None] = mapped_column(Text)
    blurb: Mapped[str] = mapped_column(Text, default="")
    unique: Mapped[bool] = mapped_column(Boolean, default=False)
    cultural_maker: Mapped[str | None] = mapped_column(String(300))
    iconicity: Mapped[float] = mapped_column(Float, default=0.0)
    can_inquire: Mapped[bool] = mapped_column(Boolean, default=False)
    can_acquire: Mapped[bool] = mapped_column(Boolean, default=False)
    can_share: Mapped[bool] = mapped_column(Boolean, default=True)
    sale_message: Mapped[str | None] = mapped_column(String(300))
    sold: Mapped[bool] = mapped_column(Boolean, default=False)
    partner_id: Mapped[str | None] = FK("partners.id", nullable=True, ondelete="SET NULL")


class ArtworkArtist(Base):
    """An artist's part in an artwork (``role``: artist, after, attributed to, publisher, ...)."""

    __tablename__ = "artwork_artists"
    artwork_id: Mapped[str] = FK("artworks.id", primary_key=True, index=False)
    artist_id: Mapped[str] = FK("artists.id", primary_key=True, index=False)
    __table_args__ = (Index(None, "artist_id", "artwork_id"),)
    position: Mapped[int] = mapped_column(Integer, default=0)
    role: Mapped[str | None] = mapped_column(String(60))


class Edition(Timestamps, Base):
    """An edition (a set of prints or casts) of an artwork."""

    __tablename__ = "editions"
    id: Mapped[str] = IdColumn()
    artwork_id: Mapped[str] = FK("artworks.id")
    dimensions: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    editions: Mapped[str] = mapped_column(String(200), default="")
    size: Mapped[str | None] = mapped_column(String(100))
    available_editions: Mapped[list[Any] | None] = mapped_column(JSONType)
    artist_proofs: Mapped[str | None] = mapped_column(String(100))
    prototypes: Mapped[str | None] = mapped_column(String(100))
    can_acquire: Mapped[bool] = mapped_column(Boolean, default=False)
    sale_message: Mapped[str | None] = mapped_column(String(300))
    sold: Mapped[bool] = mapped_column(Boolean, default=False)


class Gene(SlugNamed, Timestamps, ImageFields, Base):
    """A gene: a characteristic (movement, subject, medium, ...) of artists and artworks."""

    __tablename__ = "genes"
    __table_args__ = page_orders("genes")
    display_name: Mapped[str | None] = mapped_column(String(300))
    description: Mapped[str] = mapped_column(Text, default="")
    family: Mapped[str | None] = mapped_column(String(60))


class ArtistGene(Base):
    """A gene of an artist."""

    __tablename__ = "artist_genes"
    artist_id: Mapped[str] = FK("artists.id", primary_key=True, index=False)
    gene_id: Mapped[str] = FK("genes.id", primary_key=True, index=False)
    __table_args__ = (Index(None, "gene_id", "artist_id"),)


class ArtworkGene(Base):
    """A gene of an artwork."""

    __tablename__ = "artwork_genes"
    artwork_id: Mapped[str] = FK("artworks.id", primary_key=True, index=False)
    gene_id: Mapped[str] = FK("genes.id", primary_key=True, index=False)
    __table_args__ = (Index(None, "gene_id", "artwork_id"),)


class Image(Timestamps, ImageFields, Base):
    """An image: an installation shot of a show, or an additional view of an artwork."""

    __tablename__ = "images"
    id: Mapped[str] = IdColumn()
    position: Mapped[int] = mapped_column(Integer, default=1)
    default: Mapped[bool] = mapped_column(Boolean, default=False)
    aspect_ratio: Mapped[float | None] = mapped_column(Float)
    original_height: Mapped[int | None] = mapped_column(Integer)
    original_width: Mapped[int | None] = mapped_column(Integer)
    caption: Mapped[str | None] = mapped_column(Text)
    show_id: Mapped[str | None] = FK("shows.id", nullable=True)
    artwork_id: Mapped[str | None] = FK("artworks.id", nullable=True)


class DemoLoad(Base):
    """A demo catalog loaded into this instance: its seed and size, from which every id it
    wrote can be derived again (``artcat demo remove``), and when it was removed."""

    __tablename__ = "demo_loads"
    seed: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    artworks: Mapped[int] = mapped_column(Integer)
    loaded_at: Mapped[datetime] = mapped_column()
    removed_at: Mapped[datetime | None] = mapped_column()
