"""Demo catalog: genes, artists, artworks, editions, additional images and their links."""

from __future__ import annotations

import random
from collections import Counter
from itertools import product

from artcat.loaders import demo_words as words
from artcat.loaders.demo_context import (
    DemoContext,
    Row,
    image_fields,
    inches,
    no_image,
    random_dimensions,
    stamps,
    unique_slug,
)
from common.dimensions import build
from common.ids import slugify
from common.models import (
    Artist,
    ArtistGene,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Edition,
    Gene,
    Image,
    Partner,
)

ARTIST_IMAGE_VERSIONS = ["four_thirds", "large", "square", "tall"]
ARTWORK_IMAGE_VERSIONS = [
    "large", "large_rectangle", "larger", "medium", "medium_rectangle", "normalized", "square",
    "tall",
]  # fmt: skip
GENE_IMAGE_VERSIONS = ["big_and_tall", "square500", "tall", "thumb"]
LATEST_YEAR = 2025


def build_genes(ctx: DemoContext) -> None:
    """Queue the genes (movements, media, subjects) with markdown descriptions."""
    rng = ctx.rng("genes")
    for n, (name, family, text) in enumerate(words.GENES):
        other = words.GENES[(n + 3) % len(words.GENES)][0]
        description = (
            f"**{name}**: {text}\n\nSee also [{other}](/gene/{slugify(other)}), "
            f"and *browse the works below*."
        )
        ctx.add(
            Gene,
            {
                "id": ctx.id("gene", n),
                "slug": slugify(name),
                "name": name,
                "display_name": f"{name} (Medium)" if family.startswith("Medium") else None,
                "description": description,
                "family": family,
                **image_fields(rng, GENE_IMAGE_VERSIONS),
                **stamps(rng),
            },
        )


def _artist_names(rng: random.Random, count: int) -> list[tuple[str, str, str | None]]:
    """Return (name, sortable name, gender) triples: people from the word lists, a few groups."""
    people = [
        (f, last, "female") for f, last in product(words.FIRST_NAMES_FEMALE, words.LAST_NAMES)
    ]
    people += [(f, last, "male") for f, last in product(words.FIRST_NAMES_MALE, words.LAST_NAMES)]
    rng.shuffle(people)
    names: list[tuple[str, str, str | None]] = []
    used_last: Counter[str] = Counter()
    for first, last, gender in people:
        if len(names) >= count:
            break
        if used_last[last] < 2:  # vary the surnames
            used_last[last] += 1
            names.append((f"{first} {last}", f"{last} {first}", gender))
    for n, group in enumerate(words.COLLECTIVES):
        slot = 5 + 12 * n
        if slot < len(names):
            names[slot] = (group, group, None)
    return names


def build_artists(ctx: DemoContext, count: int = 40) -> None:
    """Queue artists (markdown biographies, life dates, places, images) and their genes."""
    rng = ctx.rng("artists")
    genes = ctx.of(Gene)
    movements = [g for g in genes if g["family"] == "Styles and Movements"]
    others = [g for g in genes if g["family"] != "Styles and Movements"]
    partners = ctx.of(Partner)
    names = _artist_names(rng, count)
    slugs = [unique_slug(name, ctx.slugs) for name, _, _ in names]
    for n, ((name, sortable, gender), slug) in enumerate(zip(names, slugs, strict=True)):
        hometown, nationality, _ = rng.choice(words.PLACES)
        if gender is None:  # a collective: founding year, never "dead"
            born, died = rng.randint(1990, 2015), None
        else:
            born = rng.randint(1820, 1995)
            mortal = born < 1930 or (born < 1960 and rng.random() < 0.3)
            died = min(born + rng.randint(35, 95), LATEST_YEAR - 1) if mortal else None
        movement = movements[n % len(movements)]
        other = names[(n + 7) % len(names)][0], slugs[(n + 7) % len(slugs)]
        life = f"{born}\u2013{died}" if died else f"b. {born}"
        biography = (
            f"**{name}** ({nationality}, {life}) is best known for "
            f"{rng.choice(words.ADJECTIVES).lower()} {rng.choice(words.NOUNS).lower()}s "
            f"close to [{movement['name']}](/gene/{movement['slug']}).\n\n"
            f"Often shown alongside [{other[0]}](/artist/{other[1]})."
        )
        artist_id = ctx.id("artist", n)
        ctx.add(
            Artist,
            {
                "id": artist_id,
                "slug": slug,
                "name": name,
                "sortable_name": sortable,
                "gender": gender,
                "biography": biography if n % 13 != 5 else "",
                "birthday": str(born),
                "deathday": str(died) if died else "",
                "hometown": hometown if rng.random() < 0.9 else None,
                "location": rng.choice(words.CITIES) if not died and rng.random() < 0.8 else None,
                "nationality": nationality,
                "target_supply": rng.random() < 0.2,
                "artworks_count": 0,
                "published_artworks_count": 0,
                "birth_year": born,
                **(image_fields(rng, ARTIST_IMAGE_VERSIONS) if n % 10 != 9 else no_image()),
                **stamps(rng),
            },
        )
        for gene in {movement["id"], *(g["id"] for g in rng.sample(others, rng.randint(0, 2)))}:
            ctx.add(ArtistGene, {"artist_id": artist_id, "gene_id": gene})
        ctx.represented_by[artist_id] = [p["id"] for p in rng.sample(partners, 2)]


def _date(rng: random.Random, first: int, last: int) -> tuple[str | None, int | None, int | None]:
    """Return an artwork's date text with its start and end years."""
    year = rng.randint(first, max(first, last))
    roll = rng.random()
    if roll < 0.6:
        return str(year), year, year
    if roll < 0.75:
        return f"ca. {year}", year, year
    if roll < 0.93:
        end = min(year + rng.randint(1, 6), max(year, last))
        return f"{year}-{end}", year, end
    return "n.d.", None, None


def _title(rng: random.Random) -> str:
    """Return an artwork title from the word lists."""
    adj, noun = rng.choice(words.ADJECTIVES), rng.choice(words.NOUNS)
    return rng.choice(
        (
            f"{adj} {noun}",
            f"{noun} at {rng.choice(words.PLACE_NAMES)}",
            f"Study for {noun}",
            f"Untitled ({adj} {noun})",
            f"{noun} No. {rng.randint(1, 40)}",
            "Untitled",
        )
    )


def _editions(ctx: DemoContext, rng: random.Random, artwork: Row) -> None:
    """Queue one or two editions of an artwork."""
    for k in range(rng.choice((1, 1, 2))):
        size = rng.choice((10, 20, 25, 30, 50, 75, 100))
        first = rng.randint(1, size - 3)
        available = rng.choice(
            (None, [str(first), first + 1, f"{first + 2}-{min(size, first + 8)}"], [str(size)])
        )
        dims = artwork["dimensions"] if k == 0 else build(inches(rng, 8, 30), None, unit="in")
        ctx.add(
            Edition,
            {
                "id": ctx.id("edition", f"{artwork['id']}:{k}"),
                "artwork_id": artwork["id"],
                "dimensions": dims,
                "editions": f"Edition of {size}",
                "size": rng.choice((None, None, "Sheet")),
                "available_editions": available,
                "artist_proofs": rng.choice((None, "5 AP", "2 AP")),
                "prototypes": rng.choice((None, None, "1 PP")),
                "can_acquire": available is not None and rng.random() < 0.5,
                "sale_message": rng.choice(("Not for sale", None)),
                "sold": rng.random() < 0.05,
                **stamps(rng),
            },
        )


def _commerce(rng: random.Random, partner: Row | None) -> Row:
    """Return the sale and institution fields of an artwork held by a partner."""
    if partner is None or partner["type"] == "Institution":
        name = partner["name"] if partner else ""
        return {
            "collecting_institution": name,
            "image_rights": f"Courtesy {name}" if name else None,
            "can_inquire": False,
            "can_acquire": False,
            "sale_message": None,
            "sold": False,
        }
    sold = rng.random() < 0.06
    acquire = not sold and rng.random() < 0.25
    price = f"${rng.randint(8, 400) * 500:,}"
    message = "Sold" if sold else price if acquire else rng.choice(("Not for sale", None, price))
    return {
        "collecting_institution": "",
        "image_rights": None,
        "can_inquire": not sold,
        "can_acquire": acquire,
        "sale_message": message,
        "sold": sold,
    }


def build_artworks(ctx: DemoContext, count: int) -> None:
    """Queue artworks with their artists, genes, editions and additional images."""
    rng = ctx.rng("artworks")
    artists = ctx.of(Artist)
    weights = [rng.uniform(0.3, 3.0) for _ in artists]
    partners = {p["id"]: p for p in ctx.of(Partner)}
    genes = {g["name"]: g["id"] for g in ctx.of(Gene)}
    subjects = [g["id"] for g in ctx.of(Gene) if g["family"] == "Subject Matter"]
    artist_genes: dict[str, list[str]] = {}
    for link in ctx.of(ArtistGene):
        artist_genes.setdefault(link["artist_id"], []).append(link["gene_id"])
    categories = list(words.CATEGORIES)
    for n in range(count):
        artist = rng.choices(artists, weights)[0]
        category = rng.choice(categories)
        media, shapes = words.CATEGORIES[category]
        born = int(artist["birthday"])
        last = int(artist["deathday"]) if artist["deathday"] else LATEST_YEAR
        date, year_start, year_end = _date(rng, born + (18 if artist["gender"] else 0), last)
        title = _title(rng)
        partner_id = rng.choice(ctx.represented_by[artist["id"]]) if rng.random() > 0.03 else None
        editioned = category in words.EDITIONED and rng.random() < 0.5
        artwork = ctx.add(
            Artwork,
            {
                "id": ctx.id("artwork", n),
                "slug": unique_slug(f"{artist['name']} {title}", ctx.slugs, 150),
                "title": title,
                "category": category,
                "medium": rng.choice(media),
                "date": date,
                "year_start": year_start,
                "year_end": year_end,
                "dimensions": random_dimensions(rng, rng.choice(shapes)),
                "published": n != 3 and rng.random() > 0.06,
                "signature": "Signed and dated lower right" if rng.random() < 0.2 else "",
                "series": f"{rng.choice(words.NOUNS)}s" if rng.random() < 0.1 else "",
                "provenance": "Private collection, Europe" if rng.random() < 0.1 else "",
                "blurb": f"A *{title.lower()}* from {date}." if rng.random() < 0.15 else "",
                "unique": not editioned and category not in words.EDITIONED,
                "iconicity": round(rng.expovariate(1 / 12), 4),
                **_commerce(rng, partners.get(partner_id or "")),
                "partner_id": partner_id,
                **(image_fields(rng, ARTWORK_IMAGE_VERSIONS) if n % 50 != 49 else no_image()),
                **stamps(rng),
            },
        )
        ctx.add(
            ArtworkArtist,
            {
                "artwork_id": artwork["id"],
                "artist_id": artist["id"],
                "position": 0,
                "role": "artist",
            },
        )
        if rng.random() < 0.05:
            second = rng.choice([a for a in artists if a["id"] != artist["id"]])
            role = rng.choice(("artist", "artist", "after"))
            ctx.add(
                ArtworkArtist,
                {
                    "artwork_id": artwork["id"],
                    "artist_id": second["id"],
                    "position": 1,
                    "role": role,
                },
            )
        gene_ids = {rng.choice(subjects), *rng.sample(artist_genes[artist["id"]], 1)}
        if category in words.MEDIUM_GENE:
            gene_ids.add(genes[words.MEDIUM_GENE[category]])
        for gene_id in sorted(gene_ids):
            ctx.add(ArtworkGene, {"artwork_id": artwork["id"], "gene_id": gene_id})
        if editioned:
            _editions(ctx, rng, artwork)
        for k in range(rng.choice((0,) * 8 + (1, 2))):
            ctx.add(
                Image,
                {
                    "id": ctx.id("artwork-image", f"{artwork['id']}:{k}"),
                    "position": k + 1,
                    "default": False,
                    "aspect_ratio": 0.75,
                    "original_height": 2400,
                    "original_width": 1800,
                    "caption": f"{title}, detail" if k else f"{title}, verso",
                    "show_id": None,
                    "artwork_id": artwork["id"],
                    **image_fields(rng, ARTWORK_IMAGE_VERSIONS),
                    **stamps(rng),
                },
            )


def count_artist_artworks(ctx: DemoContext) -> None:
    """Set each artist's ``artworks_count`` and ``published_artworks_count`` from the links."""
    published = {a["id"]: a["published"] for a in ctx.of(Artwork)}
    total: Counter[str] = Counter()
    public: Counter[str] = Counter()
    for link in ctx.of(ArtworkArtist):
        total[link["artist_id"]] += 1
        public[link["artist_id"]] += published[link["artwork_id"]]
    for artist in ctx.of(Artist):
        artist["artworks_count"] = total[artist["id"]]
        artist["published_artworks_count"] = public[artist["id"]]
