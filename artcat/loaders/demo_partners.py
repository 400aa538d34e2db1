"""Demo partners (galleries and institutions) and the profiles, with cover images, of owners."""

from __future__ import annotations

import random

from artcat.loaders import demo_words as words
from artcat.loaders.demo_context import DemoContext, Row, image_fields, stamps, unique_slug
from common.models import Image, Partner, Profile

PROFILE_IMAGE_VERSIONS = ["large", "square140", "square", "untouched-png"]
COVER_IMAGE_VERSIONS = ["medium250x165", "wide"]


def add_profile(
    ctx: DemoContext,
    rng: random.Random,
    *,
    owner_type: str,
    owner_id: str,
    handle: str,
    description: str,
    website: str | None = None,
    location: str = "",
) -> Row:
    """Queue a profile of an owner with a cover image (an Image row of its own)."""
    cover = ctx.add(
        Image,
        {
            "id": ctx.id("cover-image", owner_id),
            "position": 1,
            "default": True,
            "aspect_ratio": 1.78,
            "original_height": 1080,
            "original_width": 1920,
            "caption": None,
            "show_id": None,
            "artwork_id": None,
            **image_fields(rng, COVER_IMAGE_VERSIONS),
            **stamps(rng),
        },
    )
    return ctx.add(
        Profile,
        {
            "id": ctx.id("profile", owner_id),
            "handle": handle,
            "location": location,
            "description": description,
            "website": website,
            "owner_type": owner_type,
            "owner_id": owner_id,
            "cover_image_id": cover["id"],
            **image_fields(rng, PROFILE_IMAGE_VERSIONS),
            **stamps(rng),
        },
    )


def build_partners(ctx: DemoContext, galleries: int = 8, institutions: int = 4) -> None:
    """Queue galleries and institutions, each with its profile."""
    rng = ctx.rng("partners")
    surnames = rng.sample(words.LAST_NAMES, galleries + institutions)
    for n in range(galleries + institutions):
        is_gallery = n < galleries
        patterns = words.GALLERY_PATTERNS if is_gallery else words.INSTITUTION_PATTERNS
        place = rng.choice(words.PLACES)
        name = rng.choice(patterns).format(
            last=surnames[n],
            adj=rng.choice(words.ADJECTIVES),
            noun=rng.choice(words.NOUNS),
            city=place[0].split(",")[0],
        )
        slug = unique_slug(name, ctx.slugs)
        partner = ctx.add(
            Partner,
            {
                "id": ctx.id("partner", n),
                "slug": slug,
                "type": "Gallery" if is_gallery else "Institution",
                "name": name,
                "email": f"info@{slug}.example.org" if rng.random() < 0.7 else "",
                "region": place[2],
                "website": f"https://{slug}.example.org",
                "enforce_on_platform_transactions": rng.choice([None, False, True]),
                "eligible_for_partner_analytics": rng.random() < 0.5,
                **stamps(rng),
            },
        )
        kind = "a gallery" if is_gallery else "a public institution"
        add_profile(
            ctx,
            rng,
            owner_type="partner",
            owner_id=partner["id"],
            handle=unique_slug(slug.replace("-", ""), ctx.handles, 40),
            description=f"{name} is {kind} in {place[0]}.",
            website=partner["website"],
            location=place[0],
        )
