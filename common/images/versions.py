"""The image versions the API lists (``image_versions``), their sizes, and how one is made.

Every version fits its box (width, height) with the original's aspect ratio kept, and is
never larger than the original. The names are the reference API's and the museums' own:
Tate numbers its sizes (7 small ... 10 the largest), CMoA names them.
"""

from __future__ import annotations

import io
import re

from PIL import Image, ImageOps

BOXES: dict[str, tuple[int, int]] = {
    # The reference API's versions.
    "thumb": (100, 100),
    "square140": (140, 140),
    "small": (200, 200),
    "square": (230, 230),
    "medium250x165": (250, 165),
    "medium": (260, 260),
    "tall": (260, 520),
    "medium_rectangle": (375, 250),
    "four_thirds": (400, 300),
    "square500": (500, 500),
    "general": (600, 600),
    "big_and_tall": (600, 900),
    "large": (640, 640),
    "large_rectangle": (640, 480),
    "featured": (1000, 750),
    "larger": (1024, 1024),
    "normalized": (1024, 1024),
    "untouched-png": (1024, 1024),
    "wide": (1200, 600),
    "source": (2048, 2048),
    # Tate's sizes (the number at the end of its file names).
    "7": (120, 120),
    "8": (300, 300),
    "9": (700, 700),
    "10": (1400, 1400),
    # CMoA's sizes (its ``size`` parameter).
    "Small": (200, 200),
    "Medium": (500, 500),
    "Large": (1000, 1000),
}
# The box of a version name this table does not know (a museum's new size).
DEFAULT_BOX = (640, 640)
JPEG = "image/jpeg"
JPEG_QUALITY = 85
# The folder of a mirrored image: the first 32 hex digits of its bytes' SHA-256.
DIGEST = re.compile(r"[0-9a-f]{32}")
_VERSION = re.compile(r"[A-Za-z0-9_-]{1,40}")


def box(version: str) -> tuple[int, int]:
    """Return the box a version fits in."""
    return BOXES.get(version, DEFAULT_BOX)


def is_version(name: str) -> bool:
    """Tell whether a name can be a version (safe characters, as the stores' keys)."""
    return bool(_VERSION.fullmatch(name))


def largest(versions: list[str]) -> str | None:
    """Return the version with the largest box (the one to fetch: the others derive from it)."""
    named = [v for v in versions if is_version(v)]
    return max(named, key=lambda v: box(v)[0] * box(v)[1]) if named else None


def make_version(picture: Image.Image, version: str) -> bytes:
    """Return the JPEG of a version of a decoded picture (fit in its box, aspect kept)."""
    rgb = ImageOps.exif_transpose(picture)
    if rgb.mode in ("RGBA", "LA", "P"):
        # Transparent parts on white, as a page shows them.
        rgba = rgb.convert("RGBA")
        flat = Image.new("RGB", rgba.size, "white")
        flat.paste(rgba, mask=rgba.getchannel("A"))
        rgb = flat
    elif rgb.mode != "RGB":
        rgb = rgb.convert("RGB")
    width, height = box(version)
    if rgb.width > width or rgb.height > height:
        rgb = rgb.copy()
        rgb.thumbnail((width, height), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    rgb.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True, progressive=True)
    return out.getvalue()


def instance_template(folder: str) -> str:
    """Return the site-relative URL template of an image folder served by the instance."""
    return f"/images/{folder}/{{image_version}}.jpg"
