"""Shows, fairs, sales, sale artworks and bidders."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from common.models.base import FK, Base, IdColumn, ImageFields, SlugNamed, Timestamps, page_orders


class Fair(SlugNamed, Timestamps, ImageFields, Base):
    """An art fair: a set of partner booths (shows) between two dates."""

    __tablename__ = "fairs"
    about: Mapped[str] = mapped_column(Text, default="")
    tagline: Mapped[str] = mapped_column(String(300), default="")
    city: Mapped[str | None] = mapped_column(String(200))
    start_at: Mapped[datetime | None] = mapped_column(index=True)
    end_at: Mapped[datetime | None] = mapped_column(index=True)


class Show(SlugNamed, Timestamps, ImageFields, Base):
    """A show (exhibition) at a partner, possibly a booth at a fair."""

    __tablename__ = "shows"
    __table_args__ = page_orders("shows")
    sortable_name: Mapped[str] = mapped_column(String(300), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    press_release: Mapped[str | None] = mapped_column(Text)
    start_at: Mapped[datetime | None] = mapped_column(index=True)
    end_at: Mapped[datetime | None] = mapped_column(index=True)
    is_reference: Mapped[bool] = mapped_column(Boolean, default=False)
    is_solo_show: Mapped[bool] = mapped_column(Boolean, default=False)
    is_group_show: Mapped[bool] = mapped_column(Boolean, default=False)
    is_institutional_show: Mapped[bool] = mapped_column(Boolean, default=False)
    is_fair_booth: Mapped[bool] = mapped_column(Boolean, default=False)
    partner_id: Mapped[str] = FK("partners.id")
    fair_id: Mapped[str | None] = FK("fairs.id", nullable=True, ondelete="SET NULL")


class ShowArtwork(Base):
    """An artwork on view in a show."""

    __tablename__ = "show_artworks"
    show_id: Mapped[str] = FK("shows.id", primary_key=True, index=False)
    artwork_id: Mapped[str] = FK("artworks.id", primary_key=True, index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)


class Sale(SlugNamed, Timestamps, ImageFields, Base):
    """A sale: an auction or a fixed-price sale of artworks."""

    __tablename__ = "sales"
    description: Mapped[str] = mapped_column(Text, default="")
    auction_state: Mapped[str | None] = mapped_column(String(20))
    is_preliminary: Mapped[bool] = mapped_column(Boolean, default=False)
    is_auction: Mapped[bool] = mapped_column(Boolean, default=True, index=True)
    is_live_integration: Mapped[bool] = mapped_column(Boolean, default=False)
    start_at: Mapped[datetime | None] = mapped_column(index=True)
    end_at: Mapped[datetime | None] = mapped_column(index=True)
    time_zone: Mapped[str] = mapped_column(String(60), default="Etc/UTC")
    live_start_at: Mapped[datetime | None] = mapped_column()
    registration_ends_at: Mapped[datetime | None] = mapped_column()
    published: Mapped[bool] = mapped_column(Boolean, default=True, index=True)
    has_buyers_premium: Mapped[bool] = mapped_column(Boolean, default=False)
    bidding_engine_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    sync_to_causality: Mapped[bool] = mapped_column(Boolean, default=False)
    collect_payments: Mapped[bool] = mapped_column(Boolean, default=False)
    partner_id: Mapped[str | None] = FK("partners.id", nullable=True, ondelete="SET NULL")


class SaleArtwork(Timestamps, Base):
    """An artwork offered in a sale (a lot)."""

    __tablename__ = "sale_artworks"
    id: Mapped[str] = IdColumn()
    sale_id: Mapped[str] = FK("sales.id", index=False)
    artwork_id: Mapped[str] = FK("artworks.id")
    position: Mapped[int] = mapped_column(Integer, default=0)
    lot_number: Mapped[str | None] = mapped_column(String(20))
    currency: Mapped[str] = mapped_column(String(3), default="USD")
    opening_bid_cents: Mapped[int | None] = mapped_column(Integer)
    low_estimate_cents: Mapped[int | None] = mapped_column(Integer)
    high_estimate_cents: Mapped[int | None] = mapped_column(Integer)
    highest_bid_amount_cents: Mapped[int | None] = mapped_column(Integer)
    bidder_positions_count: Mapped[int] = mapped_column(Integer, default=0)
    __table_args__ = (Index(None, "sale_id", "artwork_id", unique=True),)


class Bidder(Timestamps, Base):
    """A user's registration to bid in a sale."""

    __tablename__ = "bidders"
    id: Mapped[str] = IdColumn()
    sale_id: Mapped[str] = FK("sales.id", index=False)
    user_id: Mapped[str] = FK("users.id")
    pin: Mapped[str | None] = mapped_column(String(10))
    qualified_for_bidding: Mapped[bool] = mapped_column(Boolean, default=True)
    __table_args__ = (Index(None, "sale_id", "user_id", unique=True),)
