"""Where Tate's records are in a path, and Tate's CSV rows as the records its JSON holds.

Accepted (detected from what the path holds, richest first):

- a clone of ``tategallery/collection``: ``artists/**/*.json`` and ``artworks/**/*.json`` (one
  file per record), else its ``artist_data.csv`` and ``artwork_data.csv``;
- the JSON Lines bundles ``artists.jsonl[.gz]`` and ``artworks.jsonl[.gz]``;
- one of those files or folders on its own.

The CSVs carry fewer fields than the JSON: no movements, subjects, classification, end year,
catalogue group or extra images, one artist per artwork, and artists' names only in the
"Surname, Forename" form. A CSV row becomes a record with the JSON's keys for what it has,
and its stream is marked incomplete: the importer then fills the missing columns of new rows
only and leaves stored rows' other fields, genes, images and extra artist links as they are.
"""

from __future__ import annotations

from pathlib import Path

from artcat.loaders.formats import CsvRow, csv_stream, has_json_files, tree_stream
from artcat.loaders.source import Record, Stream, file_stem, find_file, jsonl_stream

LAYOUTS = (
    "a clone of github.com/tategallery/collection (artists/ and artworks/ per-record JSON, "
    "or artist_data.csv and artwork_data.csv), or the JSON Lines bundles "
    "artists.jsonl[.gz] and artworks.jsonl[.gz], or one of these files or folders"
)

# Catalog columns the CSVs cannot fill as the JSON does: a CSV load writes them for new rows
# only. The CSV has no "fc" display name nor active places (artists), and no
# classification, end year, catalogue group, foreign title or extra images (artworks).
CSV_ARTIST_GAPS = frozenset({"name", "location"})
CSV_ARTWORK_GAPS = frozenset(
    {"category", "unique", "year_end", "series", "additional_information", "image_rights"}
    | {"iconicity"}  # it weighs the category
)

CSV_SUFFIXES = (".csv", ".csv.gz")
JSONL_SUFFIXES = (".jsonl.gz", ".jsonl")
ARTIST_COLUMNS = ("id", "name")
ARTWORK_COLUMNS = ("id", "accession_number", "artistId", "title")


def tate_streams(path: Path) -> tuple[Stream | None, Stream | None]:
    """Return the (artists, artworks) streams ``path`` holds; raise if it holds neither."""
    path = Path(path)
    if path.is_file():
        return _one_file(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    artists = _find(path, "artists", "artist_data")
    artworks = _find(path, "artworks", "artwork_data")
    alone = path.name in ("artists", "artworks") and has_json_files(path)
    if artists is None and artworks is None and alone:  # the clone's artworks/ folder itself
        stream = tree_stream(path.name, path, path.parent)
        return (stream, None) if path.name == "artists" else (None, stream)
    if artists is None and artworks is None:
        raise FileNotFoundError(f"{path}: no Tate data found; expected {LAYOUTS}")
    return artists, artworks


def _find(root: Path, kind: str, csv_stem: str) -> Stream | None:
    folder = root / kind
    if has_json_files(folder):
        return tree_stream(kind, folder, root)
    bundle = find_file(root, kind, JSONL_SUFFIXES)
    if bundle is not None:
        return jsonl_stream(kind, bundle, root)
    table = find_file(root, csv_stem, CSV_SUFFIXES)
    if table is not None:
        return _csv(kind, table, root)
    return None


def _one_file(path: Path) -> tuple[Stream | None, Stream | None]:
    stem = file_stem(path)
    kind = "artists" if stem.startswith("artist") and not stem.startswith("artwork") else "artworks"
    if path.name.endswith(CSV_SUFFIXES):
        stream = _csv(kind, path, path)
    elif path.name.endswith(".json"):
        kind = "artists" if "artists" in path.parts[:-1] else kind
        stream = tree_stream(kind, path, path.parent)
    else:
        stream = jsonl_stream(kind, path, path)
    return (stream, None) if kind == "artists" else (None, stream)


def _csv(kind: str, path: Path, root: Path) -> Stream:
    artists = kind == "artists"
    convert = artist_from_csv if artists else artwork_from_csv
    required = ARTIST_COLUMNS if artists else ARTWORK_COLUMNS
    return csv_stream(kind, path, root, required=required, convert=convert, complete=False)


def _text(row: CsvRow, column: str) -> str | None:
    value = row.get(column, "")
    return value if value.strip() else None


def _number(row: CsvRow, column: str) -> int | str | None:
    """Return a numeric CSV field as an int (as the JSON has it), other text as is."""
    value = _text(row, column)
    if value is not None and value.lstrip("-").isdigit():
        return int(value)
    return value


def display_name(cited: str | None) -> str | None:
    """Turn Tate's "Surname, Forename[, Suffix]" into "Forename Surname[, Suffix]".

    Most of Tate's display names are exactly that; names with a parenthesis (groups, aliases)
    or without a comma are kept as they are.
    """
    if not cited or "," not in cited or "(" in cited:
        return cited
    surname, forename, *suffixes = (part.strip() for part in cited.split(","))
    return " ".join(filter(None, (forename, surname))) + "".join(f", {s}" for s in suffixes)


def _place(name: str | None) -> dict[str, str] | None:
    return {"name": name} if name else None


def artist_from_csv(row: CsvRow) -> Record:
    """Return an ``artist_data.csv`` row as an artist record with the JSON's keys."""
    cited = _text(row, "name")
    birth_year, death_year = _number(row, "yearOfBirth"), _number(row, "yearOfDeath")
    return {
        "id": _number(row, "id"),
        "fc": display_name(cited),
        "mda": cited,
        "gender": _text(row, "gender"),
        "date": _text(row, "dates"),
        "birthYear": birth_year,
        "birth": {"time": {"startYear": birth_year}, "place": _place(_text(row, "placeOfBirth"))},
        "death": {"time": {"startYear": death_year}, "place": _place(_text(row, "placeOfDeath"))},
        "url": _text(row, "url"),
    }


def artwork_from_csv(row: CsvRow) -> Record:
    """Return an ``artwork_data.csv`` row as an artwork record with the JSON's keys."""
    cited = _text(row, "artist")
    artist_id = _number(row, "artistId")
    year = _number(row, "year")
    contributors = (
        [
            {
                "id": artist_id,
                "fc": display_name(cited),
                "mda": cited,
                "role": _text(row, "artistRole") or "artist",
                "displayOrder": 1,
            }
        ]
        if artist_id is not None
        else []
    )
    return {
        "id": _number(row, "id"),
        "acno": _text(row, "accession_number"),
        "title": _text(row, "title"),
        "contributors": contributors,
        "dateText": _text(row, "dateText"),
        "dateRange": {"startYear": year} if isinstance(year, int) else None,
        "medium": _text(row, "medium"),
        "creditLine": _text(row, "creditLine"),
        "acquisitionYear": _number(row, "acquisitionYear"),
        "dimensions": _text(row, "dimensions"),
        "width": row.get("width", ""),
        "height": row.get("height", ""),
        "depth": row.get("depth", ""),
        "units": row.get("units", ""),
        "inscription": _text(row, "inscription"),
        "thumbnailCopyright": _text(row, "thumbnailCopyright"),
        "thumbnailUrl": _text(row, "thumbnailUrl"),
        "url": _text(row, "url"),
    }
