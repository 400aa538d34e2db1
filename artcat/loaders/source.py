"""Reading museum inputs record by record, and checking them whole before anything is written.

Every input (a JSON Lines bundle, a folder of per-record JSON files, a CSV file, a bulk JSON
file) is a ``Stream``: it yields ``(file, line, record)`` and reports what it cannot read
through a ``Problem`` callback, naming the file (relative to the path given) and the line.
``check`` reads every stream once before a load writes anything, so an unreadable file stops
the import with nothing written (``LoadError``).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
from tqdm import tqdm

from common.load_report import SUMMARY_ISSUES, LoadIssue

# How many lines pass between progress bar updates (updating per line costs more than parsing).
PROGRESS_EVERY = 2000

Record = dict[str, Any]
# (file as shown in messages, 1-based line where the record starts, the record)
Located = tuple[str, int, Record]
# Told about input that cannot be read: (file, line, message).
Problem = Callable[[str, int, str], None]


class LoadError(Exception):
    """Input that cannot be read: the import stopped before writing anything."""

    def __init__(self, source: str, issues: list[LoadIssue]) -> None:
        self.issues = issues
        lines = [f"{source}: {len(issues)} unreadable input(s); nothing was loaded"]
        lines += [f"  {issue}" for issue in issues[:SUMMARY_ISSUES]]
        if len(issues) > SUMMARY_ISSUES:
            lines.append(f"  ... and {len(issues) - SUMMARY_ISSUES} more")
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class Stream:
    """One input of a load: the kind of records it holds, a label, and how to read it."""

    kind: str
    label: str
    read: Callable[[Problem, bool], Iterator[Located]]
    # False for a format that carries only some of the record's fields (Tate's CSVs): a load
    # from it must not erase what a fuller format wrote.
    complete: bool = True


def check(
    source: str,
    streams: Iterable[Stream],
    *,
    visit: Callable[[Stream, Record], None] | None = None,
    progress: bool = False,
) -> None:
    """Read every stream once, writing nothing; raise ``LoadError`` if any part is unreadable.

    ``visit`` sees each record (loaders count works per artist here, for the first pass).
    """
    issues: list[LoadIssue] = []

    def problem(file: str, line: int, message: str) -> None:
        issues.append(LoadIssue(file, line, message))

    for stream in streams:
        for _file, _line, record in stream.read(problem, progress):
            if visit is not None:
                visit(stream, record)
    if issues:
        raise LoadError(source, issues)


def find_file(
    folder: Path, stem: str, suffixes: tuple[str, ...] = (".jsonl.gz", ".jsonl")
) -> Path | None:
    """Return the first of ``folder/stem<suffix>`` that exists (JSON Lines by default)."""
    for suffix in suffixes:
        candidate = folder / f"{stem}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def file_stem(path: Path) -> str:
    """Return a file's name without ``.jsonl[.gz]``: ``artists.jsonl.gz`` -> ``artists``."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".json", ".csv"):
        name = name.removesuffix(suffix)
    return name


def shown(path: Path, root: Path) -> str:
    """Return ``path`` as messages show it: relative to the folder given, else its name."""
    try:
        return path.relative_to(root).as_posix() if root != path else path.name
    except ValueError:
        return path.name


def _open(raw: IO[bytes], path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    return raw


def jsonl_stream(kind: str, path: Path, root: Path) -> Stream:
    """Return a stream over a JSON Lines file (plain or gzipped), one object per line."""
    name = shown(path, root)

    def read(problem: Problem, progress: bool) -> Iterator[Located]:
        for line, record in read_jsonl(path, problem, progress=progress, name=name):
            yield name, line, record

    return Stream(kind, name, read)


def read_jsonl(
    path: Path, problem: Problem, *, progress: bool = True, name: str | None = None
) -> Iterator[tuple[int, Record]]:
    """Yield ``(line number, object)`` for each line; report lines that are not objects.

    The progress bar follows the bytes read from disk, so it needs no first pass to count lines.
    """
    name = name or path.name
    try:
        raw = path.open("rb")
    except OSError as exc:
        problem(name, 0, f"unreadable: {exc}")
        return
    with raw, _open(raw, path) as stream:
        bar = tqdm(
            total=path.stat().st_size,
            unit="B",
            unit_scale=True,
            desc=name,
            disable=not progress,
            leave=False,
        )
        done = number = 0
        try:
            for number, line in enumerate(stream, start=1):
                if number % PROGRESS_EVERY == 0:
                    bar.update(raw.tell() - done)
                    done = raw.tell()
                if not line.strip():
                    continue
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    problem(name, number, f"invalid JSON: {exc}")
                    continue
                if not isinstance(record, dict):
                    problem(name, number, "not a JSON object")
                    continue
                yield number, record
            bar.update(raw.tell() - done)
        except (EOFError, OSError) as exc:  # a truncated or corrupt gzip
            problem(name, number + 1, f"unreadable: {exc}")
        finally:
            bar.close()
