"""Shared state of a demo load: seeded randomness, stable ids, timestamps, images, sizes."""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from common.dimensions import Dimensions, build, unknown
from common.ids import slugify, stable_id
from common.models import Base

# Catalog records are "created" in the few years after this date, the same on every run.
BASE_TIME = datetime(2019, 1, 7, 9, 0, tzinfo=UTC)
CREATION_SPAN = 4 * 365 * 86_400

Row = dict[str, Any]


@dataclass
class DemoContext:
    """The seed, the reference day and the rows of every table, built up before insertion."""

    seed: int
    today: datetime  # midnight UTC of the day of the load
    rows: dict[type[Base], list[Row]] = field(default_factory=dict)
    slugs: set[str] = field(default_factory=set)
    handles: set[str] = field(default_factory=set)
    # artist id -> ids of the partners that show the artist's work
    represented_by: dict[str, list[str]] = field(default_factory=dict)

    def rng(self, section: str) -> random.Random:
        """Return a generator for one section, so sections do not shift each other's draws."""
        return random.Random(f"artcat-demo:{self.seed}:{section}")

    def id(self, kind: str, n: object) -> str:
        """Return the stable id of the ``n``-th record of a kind for this seed."""
        return stable_id("demo", self.seed, kind, n)

    def add(self, model: type[Base], row: Row) -> Row:
        """Queue a row of a table for insertion and return it."""
        self.rows.setdefault(model, []).append(row)
        return row

    def of(self, model: type[Base]) -> list[Row]:
        """Return the rows queued so far for a table."""
        return self.rows.get(model, [])

    def at(self, days: float, hours: float = 0) -> datetime:
        """Return a time relative to the reference day (negative: in the past)."""
        return self.today + timedelta(days=days, hours=hours)


def stamps(rng: random.Random) -> Row:
    """Return deterministic ``created_at``/``updated_at`` values in the fixed creation span."""
    created = BASE_TIME + timedelta(seconds=rng.randrange(CREATION_SPAN))
    return {
        "created_at": created,
        "updated_at": created + timedelta(seconds=rng.randrange(180 * 86_400)),
    }


def image_fields(rng: random.Random, versions: list[str]) -> Row:
    """Return the template of a demo picture and its versions: the instance draws each version
    from the token on its first request (resource_server.web.images), nothing is fetched."""
    token = base64.urlsafe_b64encode(rng.randbytes(16)).rstrip(b"=").decode()
    return {
        "image_url": f"/images/demo-{token}/{{image_version}}.jpg",
        "image_versions": list(versions),
    }


def no_image() -> Row:
    """Return the image fields of a record without an image."""
    return {"image_url": None, "image_versions": []}


def inches(rng: random.Random, low: int, high: int) -> float:
    """Return a length in inches between two bounds, to a random fraction down to 1/16."""
    denominator = rng.choice((1, 2, 4, 8, 16))
    return rng.randint(low * denominator, high * denominator) / denominator


def random_dimensions(rng: random.Random, shape: str) -> Dimensions:
    """Return dimensions of a shape: ``flat``, ``deep`` (with depth), ``round``, ``unknown``."""
    if shape == "flat":
        return build(inches(rng, 6, 80), inches(rng, 6, 80), unit="in")
    if shape == "deep":
        return build(inches(rng, 4, 90), inches(rng, 3, 50), inches(rng, 2, 40), unit="in")
    if shape == "round":
        return build(None, None, diameter=inches(rng, 4, 48), unit="in")
    return unknown()


def unique_slug(text: str, taken: set[str], max_length: int = 80) -> str:
    """Return the slug of a text, suffixed ``-2``, ``-3``... until free; mark it taken."""
    base = slugify(text, max_length)
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug
