"""Where CMoA's objects are in a path, and CMoA's CSV rows as the objects its JSON holds.

Accepted (detected from what the path holds), for each of the two sets, ``cmoa`` (the
museum) and ``teenie`` (the Teenie Harris Archive), the first found of:

- a clone of ``cmoa/collection``: the per-object folders ``cmoa/`` and ``teenie/`` (one
  ``<guid>.json`` per object, beside an ``index.json`` listing that is not read);
- the JSON Lines bundles ``cmoa.jsonl[.gz]`` and ``teenie.jsonl[.gz]``;
- the bulk files ``cmoa.json`` / ``teenie.json`` (``{"things": [objects]}``);
- the bulk files ``cmoa.csv`` / ``teenie.csv``: one row per object with the JSON's keys as
  columns; the creator and image columns hold ``|``-separated lists, one entry per creator
  or image.

or one of these files or folders on its own. The museum documents the CSV and the JSON as
holding the same data, so every form gives the same catalog.
"""

from __future__ import annotations

from pathlib import Path

from artcat.loaders.formats import (
    CsvRow,
    bulk_json_stream,
    csv_stream,
    has_json_files,
    tree_stream,
)
from artcat.loaders.source import Record, Stream, find_file, jsonl_stream

SETS = ("cmoa", "teenie")
LAYOUTS = (
    "a clone of github.com/cmoa/collection (the cmoa/ and teenie/ per-object JSON folders, or "
    "cmoa.json/teenie.json, or cmoa.csv/teenie.csv), or the JSON Lines bundles "
    "cmoa.jsonl[.gz] and teenie.jsonl[.gz], or one of these files or folders"
)
BULK_KEY = "things"
CREATOR_FIELDS = (
    "artist_id",
    "party_type",
    "full_name",
    "cited_name",
    "role",
    "nationality",
    "birth_date",
    "death_date",
    "birth_place",
    "death_place",
)
NUMBER_FIELDS = ("item_width", "item_height", "item_depth", "item_diameter")
REQUIRED_COLUMNS = ("id", "title")
LIST_SEPARATOR = "|"


def cmoa_streams(path: Path) -> list[Stream]:
    """Return the object streams ``path`` holds (museum first, then Teenie Harris)."""
    path = Path(path)
    if path.is_file():
        return [_one_file(path)]
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    streams = [s for s in (_find(path, name) for name in SETS) if s is not None]
    if not streams and path.name in SETS and has_json_files(path):  # the clone's cmoa/ itself
        streams = [tree_stream(path.name, path, path.parent)]
    if not streams:
        raise FileNotFoundError(f"{path}: no CMoA data found; expected {LAYOUTS}")
    return streams


def _find(root: Path, name: str) -> Stream | None:
    folder = root / name
    if has_json_files(folder):
        return tree_stream(name, folder, root)
    for suffixes, make in (
        ((".jsonl.gz", ".jsonl"), _one_file),
        ((".json",), _one_file),
        ((".csv", ".csv.gz"), _one_file),
    ):
        found = find_file(root, name, suffixes)
        if found is not None:
            return make(found, root)
    return None


def _one_file(path: Path, root: Path | None = None) -> Stream:
    root = root or path
    name = path.name
    if name.endswith((".csv", ".csv.gz")):
        return csv_stream("objects", path, root, required=REQUIRED_COLUMNS, convert=from_csv)
    if name.endswith(".json"):  # cmoa.json, or one per-object file such as cmoa/<guid>.json
        return bulk_json_stream("objects", path, root, key=BULK_KEY)
    return jsonl_stream("objects", path, root)


def _value(text: str) -> str | None:
    return text if text.strip() else None


def _number(text: str) -> float | str | None:
    """Return a CSV number as the JSON has it (a float), other text as is."""
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _column(row: CsvRow, field: str, prefix: str) -> str:
    """Return a list column by its plain name, or with the ``creator/``-style prefix."""
    return row.get(field, row.get(f"{prefix}/{field}", ""))


def _split(text: str) -> list[str]:
    return text.split(LIST_SEPARATOR) if text else []


def from_csv(row: CsvRow) -> Record:
    """Return a ``cmoa.csv`` row as an object record with the JSON's keys and nesting."""
    skip = {*CREATOR_FIELDS, "image_url", "image_rights"}
    record: Record = {
        key: (_number(value) if key in NUMBER_FIELDS else _value(value))
        for key, value in row.items()
        if key not in skip and "/" not in key
    }
    urls = _split(_column(row, "image_url", "images"))
    record["images"] = [{"image_url": url} for url in urls if url]
    columns = {field: _split(_column(row, field, "creator")) for field in CREATOR_FIELDS}
    count = max(map(len, columns.values()), default=0)
    record["creator"] = [
        {field: _value(values[i]) if i < len(values) else None for field, values in columns.items()}
        for i in range(count)
    ]
    return record
