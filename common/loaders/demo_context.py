"""Shared state of a demo load: seeded randomness, stable ids, timestamps, rows and dimensions."""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any

from common.ids import stable_id
from common.models import Base

# Catalog records are "created" in the few years after this date, the same on every run.
BASE_TIME = datetime(2019, 1, 7, 9, 0, tzinfo=UTC)
CREATION_SPAN = 4 * 365 * 86_400
IMAGE_HOST = "https://images.example.org"
CM_PER_INCH = 2.54
DIMENSION_KEYS = ("height", "width", "depth", "diameter")

Row = dict[str, Any]


@dataclass
class DemoContext:
    """The seed, the reference day and the rows of every table, built up before insertion."""

    seed: int
    today: datetime  # midnight UTC of the day of the load
    rows: dict[type[Base], list[Row]] = field(default_factory=dict)

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
    """Return an image URL template on the demo image host and its versions."""
    token = base64.urlsafe_b64encode(rng.randbytes(16)).rstrip(b"=").decode()
    return {
        "image_url": f"{IMAGE_HOST}/{token}/{{image_version}}.jpg",
        "image_versions": list(versions),
    }


def no_image() -> Row:
    """Return the image fields of a record without an image."""
    return {"image_url": None, "image_versions": []}


def inches(rng: random.Random, low: int, high: int) -> float:
    """Return a length in inches between two bounds, to a random fraction down to 1/16."""
    denominator = rng.choice((1, 2, 4, 8, 16))
    return rng.randint(low * denominator, high * denominator) / denominator


def inch_text(value: float) -> str:
    """Format inches with a reduced fraction to 1/16 (``23 5/8``, ``3/4``, ``38``)."""
    whole, sixteenths = divmod(round(value * 16), 16)
    if not sixteenths:
        return str(whole)
    fraction = Fraction(sixteenths, 16)
    text = f"{fraction.numerator}/{fraction.denominator}"
    return f"{whole} {text}" if whole else text


def cm_text(value: float) -> str:
    """Format centimetres to one decimal, without a trailing ``.0`` (``96.5``, ``60``)."""
    return f"{value:.1f}".removesuffix(".0")


def _system(values: dict[str, float | None], unit: str) -> Row:
    fmt = inch_text if unit == "in" else cm_text
    if values["diameter"] is not None:
        text = f"diam. {fmt(values['diameter'])} {unit}"
    else:
        parts = [values[k] for k in ("height", "width", "depth")]
        text = " × ".join(fmt(v) for v in parts if v is not None) + f" {unit}"
    return {"text": text, **values}


def dimensions(
    height: float | None = None,
    width: float | None = None,
    depth: float | None = None,
    diameter: float | None = None,
) -> Row:
    """Return the API's ``dimensions`` object from inch values (all ``None``: unknown)."""
    given = {"height": height, "width": width, "depth": depth, "diameter": diameter}
    if all(v is None for v in given.values()):
        unknown: Row = {"text": None, **dict.fromkeys(DIMENSION_KEYS)}
        return {"in": unknown, "cm": dict(unknown)}
    in_values = {k: None if v is None else float(v) for k, v in given.items()}
    cm_values = {k: None if v is None else round(v * CM_PER_INCH, 1) for k, v in given.items()}
    return {"in": _system(in_values, "in"), "cm": _system(cm_values, "cm")}


def random_dimensions(rng: random.Random, shape: str) -> Row:
    """Return dimensions of a shape: ``flat`` (h × w), ``deep`` (h × w × d), ``round``, ``unknown``."""
    if shape == "flat":
        return dimensions(inches(rng, 6, 80), inches(rng, 6, 80))
    if shape == "deep":
        return dimensions(inches(rng, 4, 90), inches(rng, 3, 50), inches(rng, 2, 40))
    if shape == "round":
        return dimensions(diameter=inches(rng, 4, 48))
    return dimensions()
