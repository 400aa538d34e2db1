"""The museums' own file formats as record streams: per-record JSON trees, CSV, bulk JSON.

Each reader yields the same JSON-shaped records the JSON Lines bundles hold, so one importer
serves every format; a CSV row becomes such a record through a ``convert`` function.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
from tqdm import tqdm

from artcat.loaders.source import Located, Problem, Record, Stream, shown

# Listings that sit beside per-record files and are not records (CMoA's ``cmoa/index.json``).
NOT_RECORDS = frozenset({"index.json"})
# Real fields can be long (CMoA provenance texts); the csv module's default cap is 128 KiB.
CSV_FIELD_LIMIT = 16 * 1024 * 1024

CsvRow = dict[str, str]


def json_files(folder: Path) -> list[Path]:
    """Return the per-record ``*.json`` files under ``folder``, sorted by path (repo order)."""
    if folder.is_file():
        return [folder]
    return sorted(
        (p for p in folder.rglob("*.json") if p.name not in NOT_RECORDS and p.is_file()),
        key=lambda p: p.relative_to(folder).as_posix(),
    )


def tree_stream(kind: str, folder: Path, root: Path) -> Stream:
    """Return a stream over a folder of per-record JSON files (one object per file)."""
    label = shown(folder, root) + "/"

    def read(problem: Problem, progress: bool) -> Iterator[Located]:
        files = json_files(folder)
        for path in tqdm(files, desc=label, disable=not progress, leave=False, unit="file"):
            name = shown(path, root)
            try:
                record = orjson.loads(path.read_bytes())
            except orjson.JSONDecodeError as exc:
                problem(name, exc.lineno, f"invalid JSON: {exc}")
                continue
            except OSError as exc:
                problem(name, 0, f"unreadable: {exc}")
                continue
            if not isinstance(record, dict):
                problem(name, 1, "not a JSON object")
                continue
            yield name, 1, record

    return Stream(kind, label, read)


def has_json_files(folder: Path) -> bool:
    """Tell whether ``folder`` holds at least one per-record JSON file (at any depth)."""
    return folder.is_dir() and any(
        p.name not in NOT_RECORDS for p in folder.rglob("*.json") if p.is_file()
    )


def csv_stream(
    kind: str,
    path: Path,
    root: Path,
    *,
    required: tuple[str, ...],
    convert: Callable[[CsvRow], Record],
    complete: bool = True,
) -> Stream:
    """Return a stream over a CSV file (UTF-8, BOM or not, plain or gzipped) with a header.

    ``required`` columns must be in the header. A record's line is the line its row starts on
    (quoted fields may span lines). A row with a field count other than the header's, or bad
    quoting, is reported; the stream stops at the first malformed row, since what follows it
    cannot be trusted.
    """
    name = shown(path, root)
    csv.field_size_limit(CSV_FIELD_LIMIT)

    def read(problem: Problem, progress: bool) -> Iterator[Located]:
        try:
            raw = path.open("rb")
        except OSError as exc:
            problem(name, 0, f"unreadable: {exc}")
            return
        with (
            raw,
            gzip.GzipFile(fileobj=raw) if path.suffix == ".gz" else raw as data,
            io.TextIOWrapper(data, encoding="utf-8-sig", newline="") as text,
        ):
            reader = csv.reader(text, strict=True)
            bar = tqdm(desc=name, disable=not progress, leave=False, unit="row")
            start = 1
            try:
                header = next(reader, None)
                if header is None:
                    problem(name, 1, "empty file: no header row")
                    return
                header = [h.strip() for h in header]
                missing = [c for c in required if c not in header]
                if missing:
                    problem(name, 1, f"missing column(s) {', '.join(missing)} in the header")
                    return
                start = reader.line_num + 1
                for row in reader:
                    if len(row) != len(header):
                        if row:  # a blank line is no record
                            problem(
                                name,
                                start,
                                f"{len(row)} field(s) where the header has {len(header)}",
                            )
                            return
                    else:
                        bar.update()
                        yield name, start, convert(dict(zip(header, row, strict=True)))
                    start = reader.line_num + 1
            except csv.Error as exc:
                problem(name, start, f"malformed CSV: {exc}")
            except (UnicodeDecodeError, EOFError, OSError) as exc:
                problem(name, start, f"unreadable: {exc}")
            finally:
                bar.close()

    return Stream(kind, name, read, complete)


def bulk_json_stream(kind: str, path: Path, root: Path, *, key: str) -> Stream:
    """Return a stream over a bulk JSON file (``{key: [objects]}`` or an array) or one object.

    Each record's line is the line its object starts on, found with the standard library's
    incremental decoder (orjson parses whole documents only).
    """
    name = shown(path, root)

    def read(problem: Problem, progress: bool) -> Iterator[Located]:
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            problem(name, 0, f"unreadable: {exc}")
            return
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            problem(name, exc.lineno, f"invalid JSON: {exc}")
            return
        if isinstance(document, dict) and isinstance(document.get(key), list):
            items = document[key]
        elif isinstance(document, list):
            items = document
        elif isinstance(document, dict):  # one per-record file
            yield name, 1, document
            return
        else:
            problem(name, 1, f"not a JSON object, an array or {{{key!r}: [...]}}")
            return
        starts = _item_lines(text, len(items), key)
        for index, item in enumerate(
            tqdm(items, desc=name, disable=not progress, leave=False, unit="record")
        ):
            line = starts[index]
            if not isinstance(item, dict):
                problem(name, line, "not a JSON object")
                continue
            yield name, line, item

    return Stream(kind, name, read)


def _item_lines(text: str, count: int, key: str) -> list[int]:
    """Return the starting line of each element of the records array of a valid document.

    The array is the document itself or the value of ``key`` in the top-level object. The
    standard library's decoder skips from value to value; the text was already parsed whole, so
    any surprise here only costs the line numbers (0 is "unknown").
    """
    decoder = json.JSONDecoder()
    try:
        pos = _skip_space(text, 0)
        if text[pos] == "{":
            pos = _skip_space(text, pos + 1)
            while True:
                name, pos = decoder.raw_decode(text, pos)
                pos = _skip_space(text, _skip_space(text, pos) + 1)  # past the colon
                if name == key:
                    break
                pos = _skip_space(text, decoder.raw_decode(text, pos)[1]) + 1  # past the comma
                pos = _skip_space(text, pos)
        lines: list[int] = []
        line, scanned = 1, 0
        pos += 1  # past the opening bracket
        while len(lines) < count:
            pos = _skip_space(text, pos, also=",")
            line += text.count("\n", scanned, pos)
            scanned = pos
            lines.append(line)
            pos = decoder.raw_decode(text, pos)[1]
        return lines
    except (ValueError, IndexError):
        return [0] * count


def _skip_space(text: str, pos: int, also: str = "") -> int:
    """Return the position of the first character at or after ``pos`` that is not blank."""
    while text[pos] in " \t\r\n" + also:
        pos += 1
    return pos
