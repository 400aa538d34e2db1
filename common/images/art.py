"""Pictures the instance draws itself: the demo catalog's abstract compositions, and the
placeholder shown where a museum's image cannot be had.

A demo picture is a function of its token and version only (the same bytes on every run and
every machine), so its URL can be cached for good like a mirrored image's.
"""

from __future__ import annotations

import io
import random
from html import escape

from PIL import Image, ImageDraw

from common.images.versions import JPEG_QUALITY, box

# Changes when the drawing changes: it is part of the demo pictures' ETag.
DEMO_STYLE = "d1"
# Palettes in the house colours (the pages' ink, link blue and soft grey) with a warm accent.
PALETTES = (
    ("#f4f4f6", "#0b4f9c", "#e08600", "#1d1d1f", "#d6d6db"),
    ("#fbf6ee", "#b5452b", "#2f6f73", "#e9c46a", "#264653"),
    ("#eef3f8", "#1d3557", "#e63946", "#a8dadc", "#457b9d"),
    ("#f7f3ea", "#6b705c", "#cb997e", "#ddbea9", "#3f4238"),
    ("#f1f0f7", "#5a189a", "#ff9e00", "#9d4edd", "#240046"),
)
# Width:height of the demo pictures (portrait, square, landscape), drawn by the seed.
RATIOS = ((4, 5), (1, 1), (3, 2), (2, 3), (5, 4))


def demo_picture(token: str, version: str) -> bytes:
    """Return the JPEG of one version of the demo picture of a token."""
    rng = random.Random(f"artcat-demo-picture:{token}")
    rw, rh = rng.choice(RATIOS)
    palette = rng.choice(PALETTES)
    bw, bh = box(version)
    scale = min(bw / rw, bh / rh)
    width, height = max(1, round(rw * scale)), max(1, round(rh * scale))
    picture = Image.new("RGB", (width, height), palette[0])
    draw = ImageDraw.Draw(picture)
    for _ in range(rng.randint(4, 9)):
        colour = rng.choice(palette[1:])
        x0, y0 = rng.random() * width, rng.random() * height
        w, h = (0.15 + rng.random() * 0.6) * width, (0.15 + rng.random() * 0.6) * height
        shape = rng.choice(("rect", "disc", "band"))
        if shape == "rect":
            draw.rectangle((x0 - w / 2, y0 - h / 2, x0 + w / 2, y0 + h / 2), fill=colour)
        elif shape == "disc":
            r = min(w, h) / 2
            draw.ellipse((x0 - r, y0 - r, x0 + r, y0 + r), fill=colour)
        else:
            thick = max(1.0, h / 6)
            draw.rectangle((0, y0, width, y0 + thick), fill=colour)
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def placeholder_svg(title: str | None, artist: str | None, version: str = "large") -> bytes:
    """Return the SVG drawn in place of an image the instance does not have: a framed picture
    sign, with the artwork's title (``""``: Untitled) and artist; no text when ``title`` is
    None (the placeholder of no artwork in particular)."""
    width, height = box(version)
    lines = [] if title is None else [_clip(title or "Untitled")]
    if artist and lines:
        lines.append(_clip(artist))
    # As large as the box allows, small enough that the longest line fits its width (a
    # character of a sans-serif font is about 0.55 of its size wide).
    longest = max((len(line) for line in lines), default=1)
    size = max(8, min(min(width, height) // 14, int(width * 0.9 / (0.55 * longest))))
    texts = "".join(
        f'<text x="50%" y="{62 + i * 9}%" font-size="{size if i == 0 else size * 0.85:.0f}" '
        f'fill="{"#1d1d1f" if i == 0 else "#4a4a4f"}" text-anchor="middle">{escape(line)}</text>'
        for i, line in enumerate(lines)
    )
    frame = min(width, height) // 5
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="No image available">'
        f'<rect width="100%" height="100%" fill="#f4f4f6"/>'
        f'<rect x="{(width - frame) / 2:.0f}" y="{height * 0.22:.0f}" width="{frame}" '
        f'height="{frame * 0.8:.0f}" rx="4" fill="none" stroke="#8a8a90" stroke-width="2"/>'
        f'<circle cx="{width / 2 - frame / 5:.0f}" cy="{height * 0.22 + frame * 0.3:.0f}" '
        f'r="{frame / 10:.0f}" fill="#e08600"/>'
        f'<path d="M{(width - frame) / 2:.0f} {height * 0.22 + frame * 0.8:.0f} '
        f"l{frame * 0.35:.0f} {-frame * 0.35:.0f} l{frame * 0.25:.0f} {frame * 0.2:.0f} "
        f'l{frame * 0.4:.0f} {-frame * 0.3:.0f} V{height * 0.22 + frame * 0.8:.0f} Z" '
        f'fill="#0b4f9c" opacity="0.6"/>'
        f'<g font-family="system-ui, sans-serif">{texts}</g></svg>'
    ).encode()


def _clip(text: str, most: int = 48) -> str:
    """Return a line of text cut to ``most`` characters (an ellipsis saying so)."""
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"
