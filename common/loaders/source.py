"""Finding input files and reading JSON Lines (plain or gzipped) record by record."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson
from tqdm import tqdm

from common.loaders.report import LoadReport

# How many lines pass between progress bar updates (updating per line costs more than parsing).
PROGRESS_EVERY = 2000

Record = dict[str, Any]


def find_file(folder: Path, stem: str) -> Path | None:
    """Return ``folder/stem.jsonl.gz`` or ``folder/stem.jsonl``, whichever exists first."""
    for name in (f"{stem}.jsonl.gz", f"{stem}.jsonl"):
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def file_stem(path: Path) -> str:
    """Return a file's name without ``.jsonl[.gz]``: ``artists.jsonl.gz`` -> ``artists``."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name


def _open(raw: IO[bytes], path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    return raw


def read_jsonl(
    path: Path, report: LoadReport, *, progress: bool = True, desc: str | None = None
) -> Iterator[tuple[int, Record]]:
    """Yield ``(line number, object)`` for each line; report and skip lines that are not objects.

    The progress bar follows the bytes read from disk, so it needs no first pass to count lines.
    """
    with path.open("rb") as raw, _open(raw, path) as stream:
        bar = tqdm(
            total=path.stat().st_size,
            unit="B",
            unit_scale=True,
            desc=desc or path.name,
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
                    report.error(path.name, number, f"invalid JSON: {exc}")
                    continue
                if not isinstance(record, dict):
                    report.error(path.name, number, "not a JSON object")
                    continue
                yield number, record
            bar.update(raw.tell() - done)
        except (EOFError, OSError) as exc:  # a truncated or corrupt gzip: keep what was read
            report.error(path.name, number + 1, f"unreadable: {exc}")
        finally:
            bar.close()
