"""Artwork dimensions in the API's format: inches and centimetres, each with a display text.

The format of the reference API (the separator is a spaced U+00D7, written ``*`` here)::

    {"in": {"text": "38 * 23 5/8 in", "height": 38.0, "width": 23.625, "depth": None,
            "diameter": None},
     "cm": {"text": "96.5 * 60 cm", "height": 96.5, "width": 60.0, "depth": None,
            "diameter": None}}

Values in the source's unit are kept as given; the converted unit is rounded to what its text
shows (1/16 inch, 0.1 cm), as in the reference example. A diameter is written after the other
measures: ``"12 in; diam. 12 in"``. Unknown dimensions give ``None`` everywhere.
"""

from __future__ import annotations

import re
from math import gcd
from typing import Any, Literal

Unit = Literal["in", "cm"]
Dimensions = dict[str, dict[str, Any]]

CM_PER_INCH = 2.54
TIMES = " \u00d7 "  # the API separates measures with a spaced multiplication sign
VARIABLE_TEXT = "Dimensions variable"
_MEASURES = ("height", "width", "depth", "diameter")

_NUMBER = r"(\d+(?:\.\d+)?)"
# "762 x 1118 mm", "2 x 3 x 4mm", "300 x 300x 20" (a missing unit means millimetres at Tate).
_HWD_RE = re.compile(
    rf"{_NUMBER}\s*(?:mm|cm)?\s*x\s*{_NUMBER}(?:\s*(?:mm|cm)?\s*x\s*{_NUMBER})?\s*(mm|cm)?", re.I
)
_SINGLE_RE = re.compile(rf"{_NUMBER}\s*(mm|cm)\b", re.I)
# "Diameter 3000mm", "object (diameter): 485 mm"
_DIAMETER_RE = re.compile(rf"diam\w*\.?\)?\s*:?\s*{_NUMBER}\s*(mm|cm)?", re.I)


def unknown() -> Dimensions:
    """Return the dimensions of a work whose size is not known."""
    return {unit: {"text": None, **dict.fromkeys(_MEASURES)} for unit in ("in", "cm")}


def variable() -> Dimensions:
    """Return the dimensions of an installation whose size varies with each display."""
    dims = unknown()
    for block in dims.values():
        block["text"] = VARIABLE_TEXT
    return dims


def inch_text(value: float) -> str:
    """Format inches to the nearest 1/16 with a reduced fraction: ``23 5/8``, ``7/16``, ``38``."""
    whole, rest = divmod(round(value * 16), 16)
    if rest == 0:
        return str(whole)
    div = gcd(rest, 16)
    fraction = f"{rest // div}/{16 // div}"
    return f"{whole} {fraction}" if whole else fraction


def cm_text(value: float) -> str:
    """Format centimetres with one decimal, dropping a trailing ``.0``: ``96.5``, ``60``."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _text(values: list[float | None], unit: Unit) -> str:
    fmt = inch_text if unit == "in" else cm_text
    parts = []
    measures = [fmt(v) for v in values[:3] if v is not None]
    if measures:
        parts.append(f"{TIMES.join(measures)} {unit}")
    if values[3] is not None:
        parts.append(f"diam. {fmt(values[3])} {unit}")
    return "; ".join(parts)


def _block(values: list[float | None], unit: Unit) -> dict[str, Any]:
    return {"text": _text(values, unit), **dict(zip(_MEASURES, values, strict=True))}


def build(
    height: float | None,
    width: float | None,
    depth: float | None = None,
    diameter: float | None = None,
    *,
    unit: Unit,
) -> Dimensions:
    """Return dimensions from measures in ``unit`` (``None`` = not given), converting the other."""
    given = [None if v is None else float(v) for v in (height, width, depth, diameter)]
    if all(v is None for v in given):
        return unknown()
    if unit == "in":
        other = [None if v is None else round(v * CM_PER_INCH, 1) for v in given]
        return {"in": _block(given, "in"), "cm": _block(other, "cm")}
    other = [None if v is None else round(v / CM_PER_INCH * 16) / 16 for v in given]
    return {"in": _block(other, "in"), "cm": _block(given, "cm")}


def _positive(value: Any) -> float | None:
    """Return a positive number from a JSON number or numeric string, else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, int | float) and value > 0:
        return float(value)
    return None


def from_cmoa(height: Any, width: Any, depth: Any = 0.0, diameter: Any = 0.0) -> Dimensions:
    """Return dimensions from CMoA's inch fields, where ``0.0`` means not measured."""
    return build(
        _positive(height), _positive(width), _positive(depth), _positive(diameter), unit="in"
    )


def _to_cm(value: str | None, unit: str | None) -> float | None:
    number = _positive(value)
    if number is None:
        return None
    # Tate texts are in millimetres; divide rather than multiply by 0.1 to keep 76.2 exact.
    return number if (unit or "mm").lower() == "cm" else number / 10


def parse_tate(text: str | None, width: Any = "", height: Any = "", depth: Any = "") -> Dimensions:
    """Return dimensions from a Tate record: its ``dimensions`` text, else its number fields.

    The text's first line holds the measures of the work ("support: 762 x 1118 mm"); later lines
    describe the frame or other parts and are ignored, as are weights ("..., 700 kg"). Tate's JSON
    ``width`` holds the first number of the text, which is the height, and ``height`` the width;
    they are only used when the text gives no measures.
    """
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    diameter = None
    diameter_match = _DIAMETER_RE.search(first)
    if diameter_match:
        diameter = _to_cm(diameter_match.group(1), diameter_match.group(2))
        first = first[: diameter_match.start()] + first[diameter_match.end() :]
    h = w = d = None
    hwd = _HWD_RE.search(first)
    if hwd:
        unit = hwd.group(4)
        h, w, d = (_to_cm(hwd.group(i), unit) for i in (1, 2, 3))
    elif (single := _SINGLE_RE.search(first)) is not None:
        h = _to_cm(single.group(1), single.group(2))
    if h is None and w is None and d is None and diameter is None:
        # No measures in the text: fall back to the (swapped) number fields, in millimetres.
        h, w, d = _to_cm(width, "mm"), _to_cm(height, "mm"), _to_cm(depth, "mm")
    if h is None and w is None and d is None and diameter is None:
        return variable() if "variable" in (text or "").lower() else unknown()
    return build(h, w, d, diameter, unit="cm")
